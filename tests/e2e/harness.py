"""End-to-end harness: the operator as a separate process, its RBAC identity, samples.

* :class:`OperatorProcess`: ``python -m kuberay.cmd.operator`` with its own kubeconfig,
  loopback metrics/probe ports and a log file; start, wait for ``/readyz``, read
  ``/metrics``, SIGTERM / SIGKILL, tail the log.
* :func:`rbac_documents` / :func:`place_rbac`: the operator's RBAC from ``manifests/rbac``
  (or ``rbac-fallback.yaml`` beside this file while that does not exist), moved into the
  test's operator namespace.
* :func:`write_token_kubeconfig`: a kubeconfig authenticating with a ServiceAccount token.
* :func:`sample_raycluster`: ``tests/samples/raycluster.minimal.yaml`` adapted to a test.
* :data:`TIMINGS`: measured durations, printed at the end of the run (conftest).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from prometheus_client.parser import text_string_to_metric_families

from kuberay.kube import Client

ROOT = Path(__file__).resolve().parents[2]
E2E_DIR = Path(__file__).resolve().parent
RBAC_DIR = ROOT / "manifests" / "rbac"
FALLBACK_RBAC = E2E_DIR / "rbac-fallback.yaml"
SAMPLE = ROOT / "tests" / "samples" / "raycluster.minimal.yaml"

OPERATOR_SA = "kuberay-operator"
LEASE_NAME = "ray-operator-leader"
CONTROLLER = "raycluster"  # controller-runtime names it after the kind
STOP_TIMEOUT = 45.0  # the operator drains for up to 30 s after SIGTERM
LOG_TAIL_LINES = 60

#: name -> measured durations in seconds (printed by conftest's terminal summary).
TIMINGS: dict[str, list[float]] = {}

_RBAC_KINDS = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
_NAMESPACED_RBAC = {"ServiceAccount", "Role", "RoleBinding"}


def record_timing(name: str, seconds: float) -> float:
    TIMINGS.setdefault(name, []).append(seconds)
    return seconds


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


# --------------------------------------------------------------------------- RBAC


def _yaml_documents(paths: Iterable[Path]) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in paths:
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("apiVersion") and doc.get("kind"):
                docs.append(doc)
    return docs


def rbac_documents() -> tuple[list[dict[str, Any]], Path]:
    """The RBAC objects to give the operator, and where they came from.

    ``manifests/rbac/*.yaml`` when that has a ServiceAccount ``kuberay-operator``, else the
    minimal ``rbac-fallback.yaml`` beside this file. Only RBAC kinds are kept.
    """
    if RBAC_DIR.is_dir():
        paths = sorted(RBAC_DIR.glob("*.yaml")) + sorted(RBAC_DIR.glob("*.yml"))
        docs = [d for d in _yaml_documents(paths) if d["kind"] in _RBAC_KINDS]
        if any(
            d["kind"] == "ServiceAccount" and d["metadata"]["name"] == OPERATOR_SA for d in docs
        ):
            return docs, RBAC_DIR
    return _yaml_documents([FALLBACK_RBAC]), FALLBACK_RBAC


def operator_bindings(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The (Cluster)RoleBindings whose subjects include the operator's ServiceAccount."""
    return [
        d
        for d in docs
        if d["kind"] in ("ClusterRoleBinding", "RoleBinding")
        and any(
            s.get("kind") == "ServiceAccount" and s.get("name") == OPERATOR_SA
            for s in d.get("subjects") or ()
        )
    ]


def place_rbac(
    docs: Sequence[dict[str, Any]], namespace: str, *, cluster_suffix: str = ""
) -> list[dict[str, Any]]:
    """Copies of ``docs`` for an operator whose ServiceAccount lives in ``namespace``.

    Namespaced objects move into ``namespace``; ServiceAccount subjects of bindings point
    there. ``cluster_suffix`` renames cluster-scoped objects (and the roleRefs to them), so
    that tests on a shared cluster never touch an installed operator's ClusterRole.
    Only bindings for the operator's ServiceAccount and roles they reference are kept.
    """
    bindings = operator_bindings(docs)
    wanted_roles = {(b["roleRef"]["kind"], b["roleRef"]["name"]) for b in bindings}
    cluster_names = {d["metadata"]["name"] for d in docs if d["kind"] == "ClusterRole"}
    placed: list[dict[str, Any]] = []
    for original in docs:
        kind = original["kind"]
        if kind in ("ClusterRole", "Role") and (kind, original["metadata"]["name"]) not in (
            wanted_roles
        ):
            continue
        if kind in ("ClusterRoleBinding", "RoleBinding") and original not in bindings:
            continue
        if kind == "ServiceAccount" and original["metadata"]["name"] != OPERATOR_SA:
            continue
        doc = copy.deepcopy(original)
        meta = doc.setdefault("metadata", {})
        for key in ("resourceVersion", "uid", "creationTimestamp", "managedFields"):
            meta.pop(key, None)
        if kind in _NAMESPACED_RBAC:
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
            meta["name"] = meta["name"] + cluster_suffix
        if kind in ("ClusterRoleBinding", "RoleBinding"):
            for subject in doc.get("subjects") or ():
                if subject.get("kind") == "ServiceAccount":
                    subject["namespace"] = namespace
            ref = doc["roleRef"]
            if ref["kind"] == "ClusterRole" and ref["name"] in cluster_names:
                ref["name"] = ref["name"] + cluster_suffix
        placed.append(doc)
    return placed


# --------------------------------------------------------------------------- identity


async def request_token(
    admin: Client, namespace: str, service_account: str = OPERATOR_SA, seconds: int = 7200
) -> str:
    """A token for ``namespace/service_account`` from the TokenRequest API."""
    body = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": seconds},
    }
    result = await admin.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token",
        verb="create",
        body=body,
    )
    return str(result["status"]["token"])


def write_token_kubeconfig(path: Path, admin: Client, token: str) -> Path:
    """A kubeconfig (mode 0600) for ``admin``'s cluster (server, CA) with ``token``."""
    cfg = admin.configuration
    cluster: dict[str, Any] = {"server": admin.host}
    if not cfg.verify_ssl:
        cluster["insecure-skip-tls-verify"] = True
    else:  # the loader keeps inline CA data in memory (ca_data), a CA file as its path
        ca = getattr(cfg, "ca_data", None)
        if ca is None and cfg.ssl_ca_cert:
            ca = Path(cfg.ssl_ca_cert).read_bytes()
        if ca is not None:
            cluster["certificate-authority-data"] = base64.b64encode(ca).decode()
    server_name = getattr(cfg, "tls_server_name", None)
    if server_name:
        cluster["tls-server-name"] = server_name
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": cluster}],
        "users": [{"name": OPERATOR_SA, "user": {"token": token}}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": OPERATOR_SA}}],
        "current-context": "e2e",
    }
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    return path


# --------------------------------------------------------------------------- operator


def _die_with_parent() -> Callable[[], None] | None:
    """preexec_fn: SIGKILL the operator if the test process dies without stopping it."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def preexec() -> None:
        prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG

    return preexec


def parse_metrics(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Prometheus text -> sample name -> [(labels, value)]."""
    samples: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return samples


def metric_sum(
    samples: dict[str, list[tuple[dict[str, str], float]]], metric: str, /, **labels: str
) -> float:
    """The sum of the ``metric`` samples whose labels include ``labels``."""
    return sum(
        value
        for sample_labels, value in samples.get(metric, ())
        if all(sample_labels.get(k) == v for k, v in labels.items())
    )


class OperatorProcess:
    """One ``kuberay-operator`` process (a separate Python interpreter)."""

    def __init__(
        self,
        name: str,
        kubeconfig: Path,
        log_dir: Path,
        *,
        lease_namespace: str,
        leader_election: bool = True,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        #: Extra environment for the process (over the test's own).
        self.env = dict(env or {})
        self.kubeconfig = kubeconfig
        self.log_path = log_dir / f"{name}.log"
        self.metrics_port = free_port()
        self.probe_port = free_port()
        while self.probe_port == self.metrics_port:
            self.probe_port = free_port()
        self.argv = [
            sys.executable,
            "-m",
            "kuberay.cmd.operator",
            f"--kubeconfig={kubeconfig}",
            f"--metrics-addr=127.0.0.1:{self.metrics_port}",
            f"--health-probe-bind-address=127.0.0.1:{self.probe_port}",
            "--enable-leader-election" if leader_election else "--enable-leader-election=false",
            f"--leader-election-namespace={lease_namespace}",
            "--log-stdout-encoder=console",
            *extra_args,
        ]
        self.popen: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.stopped_at: float | None = None
        self.ready_seconds: float | None = None

    # ----- lifecycle

    def start(self) -> OperatorProcess:
        env = dict(os.environ, KUBECONFIG=str(self.kubeconfig), PYTHONUNBUFFERED="1")
        env.update(self.env)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env.pop("POD_NAMESPACE", None)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            log.write(f"==== {time.strftime('%F %T')} {' '.join(self.argv)}\n".encode())
            log.flush()
            self.started_at = time.monotonic()
            self.popen = subprocess.Popen(
                self.argv,
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent(),
            )
        self.stopped_at = None
        return self

    @property
    def pid(self) -> int:
        assert self.popen is not None
        return self.popen.pid

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def _check_alive(self) -> None:
        if self.popen is None:
            raise AssertionError(f"operator {self.name} was never started")
        code = self.popen.poll()
        if code is not None:
            raise AssertionError(
                f"operator {self.name} exited with code {code}; last lines of "
                f"{self.log_path}:\n{tail(self.log_path)}"
            )

    def kill(self) -> None:
        """SIGKILL: no draining, no lease release."""
        if self.alive:
            self.popen.kill()  # type: ignore[union-attr]
            self.popen.wait()  # type: ignore[union-attr]
        self.stopped_at = time.monotonic()

    def terminate(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM and wait (SIGKILL after ``timeout``); the exit code."""
        assert self.popen is not None
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self.stopped_at = time.monotonic()
        return int(self.popen.returncode)

    async def terminate_async(self, timeout: float = STOP_TIMEOUT) -> int:
        """:meth:`terminate` without blocking the event loop."""
        return await asyncio.to_thread(self.terminate, timeout)

    # ----- HTTP endpoints

    async def http_get(self, port: int, path: str) -> tuple[int, str]:
        async with (
            aiohttp.ClientSession() as session,
            session.get(
                f"http://127.0.0.1:{port}{path}", timeout=aiohttp.ClientTimeout(total=5)
            ) as resp,
        ):
            return resp.status, await resp.text()

    async def probe(self, path: str) -> int:
        status, _ = await self.http_get(self.probe_port, path)
        return status

    async def metrics(self) -> dict[str, list[tuple[dict[str, str], float]]]:
        status, text = await self.http_get(self.metrics_port, "/metrics")
        assert status == 200, f"/metrics answered {status}"
        return parse_metrics(text)

    async def metrics_text(self) -> str:
        status, text = await self.http_get(self.metrics_port, "/metrics")
        assert status == 200, f"/metrics answered {status}"
        return text

    async def wait_ready(self, timeout: float = 60.0) -> float:
        """Wait until ``/readyz`` answers 200; seconds since :meth:`start`."""
        deadline = time.monotonic() + timeout
        while True:
            self._check_alive()
            with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
                if await self.probe("/readyz") == 200:
                    self.ready_seconds = time.monotonic() - self.started_at
                    return record_timing("operator start -> /readyz 200", self.ready_seconds)
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"operator {self.name} not ready within {timeout:.0f}s; last lines of "
                    f"{self.log_path}:\n{tail(self.log_path)}"
                )
            await asyncio.sleep(0.05)

    async def is_leader(self) -> bool:
        samples = await self.metrics()
        return metric_sum(samples, "leader_election_master_status", name=LEASE_NAME) == 1

    async def wait_leading(self, timeout: float = 60.0) -> float:
        """Wait until this process holds the lease; seconds since :meth:`start`."""
        deadline = time.monotonic() + timeout
        while True:
            self._check_alive()
            with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
                if await self.is_leader():
                    return time.monotonic() - self.started_at
            if time.monotonic() > deadline:
                raise AssertionError(f"operator {self.name} not leading within {timeout:.0f}s")
            await asyncio.sleep(0.1)

    async def reconciles(self) -> float:
        """How many reconciles of RayClusters this process has finished (any result)."""
        return metric_sum(
            await self.metrics(), "controller_runtime_reconcile_total", controller=CONTROLLER
        )

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        return tail(self.log_path, lines)


# --------------------------------------------------------------------------- RayClusters


def sample_raycluster(
    name: str, namespace: str, *, replicas: int = 2, max_replicas: int = 4
) -> dict[str, Any]:
    """``tests/samples/raycluster.minimal.yaml`` named ``name`` in ``namespace``, with
    ``replicas`` workers (bounds widened to ``[0, max_replicas]``)."""
    body: dict[str, Any] = yaml.safe_load(SAMPLE.read_text())
    body["metadata"] = {"name": name, "namespace": namespace}
    group = body["spec"]["workerGroupSpecs"][0]
    group.update(replicas=replicas, minReplicas=0, maxReplicas=max(max_replicas, replicas))
    return body


def worker_group(body: dict[str, Any]) -> str:
    return str(body["spec"]["workerGroupSpecs"][0]["groupName"])


async def cluster_pods(
    client: Client, namespace: str, cluster: str, *, include_terminating: bool = False
) -> list[dict[str, Any]]:
    items, _ = await client.list_all(
        "v1", "Pod", namespace, label_selector=f"ray.io/cluster={cluster}"
    )
    if include_terminating:
        return items
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def node_type(pod: dict[str, Any]) -> str:
    return str((pod["metadata"].get("labels") or {}).get("ray.io/node-type", ""))


def pod_ready(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or ()
    )


async def workers(client: Client, namespace: str, cluster: str) -> list[dict[str, Any]]:
    return [p for p in await cluster_pods(client, namespace, cluster) if node_type(p) == "worker"]


async def set_replicas(client: Client, namespace: str, name: str, replicas: int) -> None:
    await client.patch(
        "ray.io/v1",
        "RayCluster",
        name,
        [{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": replicas}],
        namespace,
        patch_type="json",
    )
