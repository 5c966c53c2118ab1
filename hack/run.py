#!/usr/bin/env python3
"""``make run``: a local control plane and a controller against it, in the foreground.

Steps: build missing binaries (``hack/build.py``), start etcd + kube-apiserver
(``hack/controlplane.py``) with its files in DIR, print ``export KUBECONFIG=DIR/kubeconfig``,
then run the controller until Ctrl-C / SIGTERM, which stops the controller (gracefully),
then the control plane, and exits 0. If the controller exits on its own, the control
plane is stopped and its exit code is returned.

For now the controller is the example ConfigMap mirror (``examples/configmap_mirror.py``);
:func:`controller_command` is the one place to change when the Ray operator is ready.

Usage: python hack/run.py --dir DIR [--full] [--timeout S] [-- CONTROLLER ARGS...]
``--full`` also runs kube-controller-manager, kube-scheduler and kwok fake nodes (see
``hack/controlplane.py``).
``hack/controlplane.py down --dir DIR`` also stops a running ``run.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType, ModuleType

HACK = Path(__file__).resolve().parent
ROOT = HACK.parent
# Controller: time to drain after the first signal (Manager's graceful shutdown is 30 s).
STOP_TIMEOUT = 45.0


def _load(name: str, path: Path) -> ModuleType:
    """Import a hack/ script by path (``import build`` could pick up PyPI's ``build``)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_build = _load("kuberay_hack_build", HACK / "build.py")  # the name controlplane.py uses too
_cp = _load("kuberay_hack_controlplane", HACK / "controlplane.py")


def controller_command(kubeconfig: Path, extra_args: Sequence[str]) -> list[str]:
    """The controller process ``make run`` starts against the local control plane.

    Swap this for the Ray operator (``python -m kuberay.cmd.operator ...``) when it exists.
    """
    return [
        sys.executable,
        "-m",
        "examples.configmap_mirror",
        "--kubeconfig",
        str(kubeconfig),
        *extra_args,
    ]


def controller_hint(kubeconfig: Path) -> str:
    """What to try once the controller runs (printed to stderr)."""
    return (
        "run: try it with\n"
        f"  export KUBECONFIG={kubeconfig}\n"
        "  kubectl label namespace default mirror.example.com/enabled=true\n"
        "  kubectl create namespace src && kubectl -n src create configmap demo "
        "--from-literal=k=v\n"
        "  kubectl -n src label configmap demo mirror.example.com/source=true\n"
        "  kubectl -n default get configmap demo -o yaml"
    )


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


def run_controller(kubeconfig: Path, extra_args: Sequence[str]) -> int:
    """Run the controller in the foreground; 0 if it was stopped by a signal."""
    env = dict(os.environ, KUBECONFIG=str(kubeconfig))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    child = subprocess.Popen(
        controller_command(kubeconfig, extra_args),
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
        return 0
    print(f"run: controller exited with code {code}", file=sys.stderr)
    return code if code > 0 else 1


def run(workdir: Path, timeout: float, extra_args: Sequence[str], *, full: bool = False) -> int:
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    pid_file = workdir / _cp.PID_FILE
    other = _cp._read_pid(pid_file)
    if other is not None and other != os.getpid() and _cp._pid_alive(other):
        print(f"run: already running in {workdir} (pid {other})", file=sys.stderr)
        return 1
    old = {sig: signal.signal(sig, _raise_interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    pid_file.write_text(f"{os.getpid()}\n")
    cp = None
    try:
        names = [*_build.DEFAULT, *(_cp.FULL_COMPONENT_BINARIES if full else ())]
        _build.ensure(names)
        cp = _cp.ControlPlane(workdir, full=full, start_timeout=timeout)
        cp.start()
        timings = ", ".join(f"{k} {v:.1f}s" for k, v in cp.startup_seconds.items())
        print(
            f"run: control plane ready at {cp.server} ({timings}); logs in {workdir}",
            file=sys.stderr,
        )
        print(f"export KUBECONFIG={cp.kubeconfig}", flush=True)
        print(controller_hint(cp.kubeconfig), file=sys.stderr, flush=True)
        return run_controller(cp.kubeconfig, extra_args)
    except _Interrupted as exc:
        print(f"run: {exc}, stopping", file=sys.stderr)
        return 0
    except (_build.BuildError, _cp.ControlPlaneError) as exc:
        print(f"run: {exc}", file=sys.stderr)
        return 1
    except (NotImplementedError, ValueError) as exc:
        print(f"run: {exc}", file=sys.stderr)
        return 2
    finally:
        for sig in old:  # nothing may interrupt the clean-up
            signal.signal(sig, signal.SIG_IGN)
        if cp is not None:
            cp.stop()
            print("run: control plane stopped", file=sys.stderr)
        if _cp._read_pid(pid_file) == os.getpid():
            pid_file.unlink(missing_ok=True)
        for sig, handler in old.items():
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0] if __doc__ else None,
        usage="%(prog)s --dir DIR [--full] [--timeout S] [-- CONTROLLER ARGS...]",
    )
    parser.add_argument("--dir", type=Path, required=True, help="control-plane work dir")
    parser.add_argument(
        "--full", action="store_true", help="also controller-manager/scheduler/kwok"
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="per-component start timeout")
    parser.add_argument("controller_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    extra = list(args.controller_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    return run(args.dir, args.timeout, extra, full=args.full)


if __name__ == "__main__":
    sys.exit(main())
