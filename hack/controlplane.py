#!/usr/bin/env python3
"""Run a local Kubernetes control plane (etcd + kube-apiserver) for tests and development.

The command-line front end of ``kuberay.testing.envtest`` (controller-runtime's envtest in
spirit: throwaway CAs and certs, etcd and kube-apiserver on free loopback ports, an admin
(system:masters) client-cert kubeconfig). Binaries come from ``hack/build/build.py`` (built from Go
modules into a cache). Its library names are re-exported here for the scripts that load this
file (``hack/cluster/run.py``, the benchmarks); tests import ``kuberay.testing.envtest`` itself.

``full=True`` (``up --full``) adds what makes it a small working cluster without a kubelet:
kube-controller-manager (garbage collector, namespace, Job, ReplicaSet/Deployment,
service-account and endpoint controllers, ...), kube-scheduler, and kwok managing a few
fake nodes (``kwok-node-0..3``), whose stages (``hack/kwok/*.yaml``) make scheduled pods
Running and Ready, complete the pods of Jobs and finish graceful deletions.

``history_server=True`` (``up --history-server``) adds a local S3-compatible object store for
the history server's collector (``hack/cluster/object_store.py``: moto on 127.0.0.1, or on the real
node's bridge address when there is a real node) and writes ``DIR/object-store.env``, then
the history server over it (``hack/cluster/history_server.py``: ``kuberay-history-server`` on
127.0.0.1, an ephemeral port) and writes its base URL to ``DIR/history-server.url``.

Usage:
  python hack/controlplane.py up --dir DIR [--full] [--timeout SECONDS] [--history-server]
  python hack/controlplane.py down --dir DIR

``up`` runs in the foreground, writes DIR/kubeconfig once everything is ready (in full
mode: all components healthy and the fake nodes Ready), prints
``export KUBECONFIG=DIR/kubeconfig`` and stops everything on SIGINT/SIGTERM (exit 0).
``down`` signals a running ``up`` through DIR/controlplane.pid.

Library use: ``kuberay.testing.envtest.ControlPlane``.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType, ModuleType

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # `python hack/controlplane.py`: kuberay, hack.* from this checkout
    sys.path[0] = str(ROOT)

from kuberay.testing._base import pid_alive as _pid_alive  # noqa: E402
from kuberay.testing._base import read_pid as _read_pid  # noqa: E402
from kuberay.testing.envtest import *  # noqa: E402, F403
from kuberay.testing.envtest import (  # noqa: E402
    BuildError,
    ControlPlane,
    ControlPlaneError,
)

HACK = ROOT / "hack"
PID_FILE = "controlplane.pid"


def _load_realnode() -> ModuleType:
    """``hack.cluster.realnode`` (imported only when a real node's leftovers need it)."""
    import hack.cluster.realnode

    return hack.cluster.realnode


# --------------------------------------------------------------------------- CLI


class _Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    # only the first signal interrupts; later ones must not break the clean-up
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise _Interrupted(signum)


def cmd_up(
    workdir: Path,
    full: bool,
    timeout: float,
    real_nodes: int = 0,
    real_nodes_only: bool = False,
    history_server: bool = False,
) -> int:
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    pid_file = workdir / PID_FILE
    other = _read_pid(pid_file)
    if other is not None and other != os.getpid() and _pid_alive(other):
        print(f"controlplane: already running in {workdir} (pid {other})", file=sys.stderr)
        return 1
    old = {sig: signal.signal(sig, _raise_interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    pid_file.write_text(f"{os.getpid()}\n")
    cp: ControlPlane | None = None
    try:
        cp = ControlPlane(
            workdir,
            full=full or bool(real_nodes),
            start_timeout=timeout,
            real_nodes=real_nodes,
            real_nodes_only=real_nodes_only,
            history_server=history_server,
        )
        cp.start()
        timings = ", ".join(f"{k} {v:.1f}s" for k, v in cp.startup_seconds.items())
        print(f"controlplane: ready at {cp.server} ({timings}); logs in {workdir}", file=sys.stderr)
        if cp.real_node is not None:
            node = ", ".join(f"{k} {v:.1f}s" for k, v in cp.real_node.timings.items())
            print(f"controlplane: real node {cp.real_node.name} ({node})", file=sys.stderr)
        print_object_store(cp, "controlplane")
        print(f"export KUBECONFIG={cp.kubeconfig}", flush=True)
        while True:
            signal.pause()
    except _Interrupted as exc:
        print(f"controlplane: {exc}, stopping", file=sys.stderr)
        return 0
    except (BuildError, ControlPlaneError, RuntimeError, subprocess.CalledProcessError) as exc:
        print(f"controlplane: {exc}", file=sys.stderr)
        return 1
    finally:
        for sig in old:
            signal.signal(sig, signal.SIG_IGN)
        if cp is not None:
            cp.stop()
        if _read_pid(pid_file) == os.getpid():
            pid_file.unlink(missing_ok=True)
        for sig, handler in old.items():
            signal.signal(sig, handler)


def print_object_store(cp: ControlPlane, prog: str) -> None:
    """Tell where the history server's store listens and where its env file is, and the
    history server's URL (stderr)."""
    store = cp.object_store
    if store is None or store.info is None:
        return
    print(
        f"{prog}: history server object store (S3, bucket {store.info.bucket}) at "
        f"{store.info.endpoint}; collector env in {store.info.env_file}",
        file=sys.stderr,
        flush=True,
    )
    server = cp.history_server_proc
    if server is not None and server.url:
        print(
            f"{prog}: history server at {server.url} (URL in {server.url_file}; "
            f"kubectl ray history list --history-server {server.url})",
            file=sys.stderr,
            flush=True,
        )


def cmd_down(workdir: Path, timeout: float) -> int:
    pid_file = workdir / PID_FILE
    pid = _read_pid(pid_file)
    if pid is None or not _pid_alive(pid):
        print(f"controlplane: nothing running in {workdir}", file=sys.stderr)
        pid_file.unlink(missing_ok=True)
        if (workdir / "node").is_dir() and _load_realnode().cleanup_leftovers():
            print("controlplane: removed what a dead real node left behind", file=sys.stderr)
        return 0
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _pid_alive(pid):
        if time.monotonic() > deadline:
            print(f"controlplane: pid {pid} still alive after {timeout:.0f}s", file=sys.stderr)
            return 1
        time.sleep(0.1)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="run the control plane in the foreground")
    up.add_argument("--dir", type=Path, required=True, help="work dir (kubeconfig, logs, certs)")
    up.add_argument(
        "--full", action="store_true", help="also controller-manager, scheduler, kwok + nodes"
    )
    up.add_argument("--timeout", type=float, default=120.0, help="per-component start timeout")
    up.add_argument(
        "--real-nodes",
        type=int,
        default=0,
        metavar="N",
        help="also N (=1) real nodes (kubelet, containerd, kube-proxy, CoreDNS; implies --full); "
        "tainted kuberay.io/real-node=true:NoSchedule, labelled kuberay.io/real-node=true",
    )
    up.add_argument(
        "--real-nodes-only",
        action="store_true",
        help="no kwok fake nodes; the real node is untainted, so every pod lands there",
    )
    up.add_argument(
        "--history-server",
        action="store_true",
        help="also a local S3 store (moto) for the history server's collector, bucket "
        "ray-historyserver; its settings in DIR/object-store.env; and the history server over "
        "it on 127.0.0.1 (URL in DIR/history-server.url)",
    )
    down = sub.add_parser("down", help="stop a running `up` for --dir")
    down.add_argument("--dir", type=Path, required=True)
    down.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    if args.cmd == "up":
        return cmd_up(
            args.dir,
            args.full,
            args.timeout,
            args.real_nodes,
            args.real_nodes_only,
            args.history_server,
        )
    return cmd_down(args.dir, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
