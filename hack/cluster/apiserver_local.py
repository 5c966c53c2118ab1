"""KubeRay's API server next to ``make run``'s operator (``hack/cluster/run.py``).

``kuberay-apiserver`` (``python -m kuberay.apiserver`` of this checkout) runs as a
subprocess on ``127.0.0.1`` only, on :data:`DEFAULT_ADDR` (KubeRay's port) when it is free,
else on a free port, in **caller mode** over the run's admin kubeconfig: the kubeconfig only
says where the kube-apiserver is and which CA to trust, each request reaches it with the
caller's bearer token, and a request without one gets 401.

So that a person trying it has a token at hand, :func:`user_rbac` makes the ServiceAccount
``default/kuberay-apiserver-user`` with what the API server's routes need, cluster-wide
(the ray.io kinds, compute templates' ConfigMaps, Events, the Ray head Services' proxy):
``kubectl create token kuberay-apiserver-user`` (the line :func:`hint` prints) gives a
one-hour token for it.

Once ``/healthz`` answers, ``DIR/apiserver.url`` holds its base URL (one line, like the
history server's ``DIR/history-server.url``); its log is ``DIR/kuberay-apiserver.log``.
:meth:`LocalApiServer.stop` (SIGTERM, then SIGKILL) removes both the url and pid files.
"""

from __future__ import annotations

import os
import shlex
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hack.cluster.server_process import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_ADDR = "127.0.0.1:8888"
URL_FILE = "apiserver.url"
LOG_FILE = "kuberay-apiserver.log"
PID_FILE = "kuberay-apiserver.pid"
START_TIMEOUT = 60.0
USER_SA = "kuberay-apiserver-user"
USER_NAMESPACE = "default"
#: What a caller of every route needs (docs/apiserver.md, "Calling it"), in any namespace.
USER_RULES: tuple[dict[str, Any], ...] = (
    {
        "apiGroups": ["ray.io"],
        "resources": ["rayclusters", "rayjobs", "rayservices"],
        "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
    },
    # the dashboard's RayCronJobs tab
    {"apiGroups": ["ray.io"], "resources": ["raycronjobs"], "verbs": ["get", "list", "watch"]},
    {
        "apiGroups": [""],
        "resources": ["configmaps"],
        "verbs": ["get", "list", "create", "delete"],
    },
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["services"], "verbs": ["get"]},
    {"apiGroups": [""], "resources": ["services/proxy"], "verbs": ["get", "create"]},
)


class ApiServerError(RuntimeError):
    """The API server did not start (the message carries its log tail)."""


def user_rbac() -> list[dict[str, Any]]:
    """The ServiceAccount ``default/kuberay-apiserver-user``, a ClusterRole of the same name
    with :data:`USER_RULES` and the ClusterRoleBinding between them."""
    rbac = "rbac.authorization.k8s.io"
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": USER_SA, "namespace": USER_NAMESPACE},
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRole",
            "metadata": {"name": USER_SA},
            "rules": [dict(rule) for rule in USER_RULES],
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": USER_SA},
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": USER_SA},
            "subjects": [{"kind": "ServiceAccount", "name": USER_SA, "namespace": USER_NAMESPACE}],
        },
    ]


def command(listen: str, kubeconfig: Path, *, history_server_url: str | None = None) -> list[str]:
    """The server's command line: caller mode on ``listen`` (``127.0.0.1:PORT``) over
    ``kubeconfig``; history links to ``history_server_url`` when one runs."""
    cmd = [sys.executable, "-m", "kuberay.apiserver", "--httpPortFlag", listen]
    cmd += ["--kubeconfig", str(kubeconfig), "--auth-mode", "caller", "--log-format", "console"]
    if history_server_url:
        cmd += ["--history-server-url", history_server_url]
    return cmd


def token_command(kubectl: Path | None, kubeconfig: Path) -> str:
    """The shell command that prints a one-hour token of :data:`USER_SA`."""
    k = "kubectl" if kubectl is None else str(kubectl)
    return shlex.join(
        [k, "--kubeconfig", str(kubeconfig), "create", "token", USER_SA, "-n", USER_NAMESPACE]
    )


def hint(url: str, kubectl: Path | None, kubeconfig: Path, workdir: Path) -> str:
    """What ``make run`` prints about the API server: its URL, where its URL and log are,
    how to get a token for it, one request to try and the dashboard's URL."""
    return "\n".join(
        [
            f"run: KubeRay API server at {url} (caller mode: send a Bearer token; URL in "
            f"{workdir / URL_FILE}, log {workdir / LOG_FILE}). A token for {USER_SA}:",
            f"  TOKEN=$({token_command(kubectl, kubeconfig)})",
            f'  curl -H "Authorization: Bearer $TOKEN" '
            f"{url}/apis/ray.io/v1/namespaces/default/rayclusters",
            f"run: dashboard at {url}/dashboard/ (log in with that token)",
        ]
    )


#: loopback requests never go through an HTTP proxy the environment names
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def healthy(url: str, timeout: float = 2.0) -> bool:
    """``GET url/healthz`` answers 200."""
    try:
        with _NO_PROXY.open(f"{url}/healthz", timeout=timeout) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


class LocalApiServer:
    """One ``kuberay-apiserver`` for ``workdir`` on ``listen`` (a loopback ``host:port``), the
    ``kuberay`` package of ``checkout`` (default: this one). :meth:`start` and :meth:`stop`
    are not thread-safe; :meth:`stop` is idempotent."""

    def __init__(
        self,
        workdir: Path,
        listen: str,
        kubeconfig: Path,
        *,
        history_server_url: str | None = None,
        start_timeout: float = START_TIMEOUT,
        preexec_fn: Callable[[], None] | None = None,
        checkout: Path = ROOT,
    ) -> None:
        self.dir = workdir
        self.checkout = checkout
        self.url = f"http://{listen}"
        self.url_file = workdir / URL_FILE
        self.log_path = workdir / LOG_FILE
        self.command = command(listen, kubeconfig, history_server_url=history_server_url)
        self._process = ServerProcess(
            "kuberay-apiserver",
            self.log_path,
            workdir / PID_FILE,
            ApiServerError,
            start_timeout=start_timeout,
            preexec_fn=preexec_fn,
        )

    def start(self, environ: Mapping[str, str] = os.environ) -> str:
        """Start the server (its checkout first on its ``PYTHONPATH``), wait until
        ``/healthz`` answers, write the url file and return the URL; on failure the process
        is stopped and :class:`ApiServerError` raised."""
        env = dict(environ)
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(self.checkout), env.get("PYTHONPATH")])
        )
        self.url_file.unlink(missing_ok=True)
        try:
            self._process.launch(self.command, self.dir, env)
            self._process.wait_until(lambda pid: True if healthy(self.url) else None, "ready")
            partial = self.url_file.with_suffix(".url.partial")
            partial.write_text(self.url + "\n")
            partial.replace(self.url_file)
        except BaseException:
            self.stop()
            raise
        return self.url

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM the server, SIGKILL after ``timeout``; remove the url and pid files."""
        self._process.stop(timeout)
        self.url_file.unlink(missing_ok=True)


def start_for_run(
    cp: Any,
    apply: Callable[[Mapping[str, Any]], None],
    listen: str,
    kubectl: Path | None,
    *,
    preexec_fn: Callable[[], None] | None = None,
) -> LocalApiServer:
    """``make run``'s part, for the started control plane ``cp``: ``apply`` :func:`user_rbac`
    (server-side apply as the admin), start the server on ``listen`` over ``cp``'s admin
    kubeconfig (history links to ``cp``'s history server when it runs one) and print
    :func:`hint` (stderr); the running server."""
    for doc in user_rbac():
        apply(doc)
    history = cp.history_server_proc.url if cp.history_server_proc is not None else None
    server = LocalApiServer(
        cp.dir, listen, cp.kubeconfig, history_server_url=history, preexec_fn=preexec_fn
    )
    url = server.start()
    print(hint(url, kubectl, cp.kubeconfig, cp.dir), file=sys.stderr, flush=True)
    return server
