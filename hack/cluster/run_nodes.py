"""``make run``'s nodes: real Ray by default where the machine allows it, and a watcher that
says why a pod stays Pending.

**Which nodes** (``--nodes``; ``hack/controlplane.py`` keeps its own flags and meanings):

* ``auto`` (the default): the real node alone (``--real-nodes 1 --real-nodes-only``: every
  pod lands on it and runs for real) when :func:`real_node_blocker` finds nothing in the way;
  otherwise, or when the real node then fails to start, kwok fake nodes, with one line saying
  why (pods are scheduled there but run nothing, so no Ray).
* ``real``: the real node alone, and an error when it cannot start.
* ``kwok``: kwok fake nodes only (fast; for scale work: nothing runs).
* ``both``: kwok nodes plus the real node (tainted ``kuberay.io/real-node``).

**Pending pods**: :func:`explain_pending` turns the pods the scheduler could not place and
the nodes' allocatable resources into one line per pod: the scheduler's message, what the pod
asks for and what each node still has free (allocatable minus the requests of the pods bound
there), so a sample too big for the machine is named instead of waiting without a word.
:class:`PendingWatcher` prints each such line once (per pod and message).
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

NODE_CHOICES = ("auto", "real", "kwok", "both")
RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
POLL_SECONDS = 5.0


@dataclass(frozen=True)
class NodePlan:
    """How many real nodes to start, whether kwok nodes stay out, and whether a failing real
    node falls back to kwok (``auto``)."""

    real_nodes: int
    real_nodes_only: bool
    fallback: bool

    @property
    def real(self) -> bool:
        """Whether a real node is planned."""
        return self.real_nodes > 0


KWOK = NodePlan(real_nodes=0, real_nodes_only=False, fallback=False)


def real_node_blocker(
    *,
    euid: int | None = None,
    cgroup_root: Path = Path("/sys/fs/cgroup"),
    which: Callable[[str], str | None] = shutil.which,
) -> str | None:
    """Why this machine cannot run a real node, in one line, or ``None`` when nothing is
    known to be in the way (the start itself may still fail: then ``auto`` falls back)."""
    if (os.geteuid() if euid is None else euid) != 0:
        return "not root (a real node runs containerd, a kubelet and iptables rules)"
    if not cgroup_root.is_dir() or not any(cgroup_root.iterdir()):
        return f"no cgroup file system at {cgroup_root}"
    if which("dpkg-query") is None:
        return "not a Debian system (the real node's packages come from apt)"
    return None


def plan_nodes(nodes: str, blocker: str | None) -> tuple[NodePlan, str | None]:
    """The plan for ``--nodes`` and, for ``auto`` on a machine that cannot run a real node,
    the line to print. ``ValueError`` for ``real`` when ``blocker`` is set."""
    if nodes not in NODE_CHOICES:
        raise ValueError(f"--nodes must be one of {', '.join(NODE_CHOICES)}, not {nodes!r}")
    if nodes == "kwok":
        return KWOK, None
    if nodes == "both":
        return NodePlan(1, False, fallback=False), None
    if blocker is not None:
        if nodes == "real":
            raise ValueError(f"no real node on this machine: {blocker}")
        return KWOK, (
            f"run: no real node: {blocker}; pods go to kwok fake nodes and run no Ray "
            "(make run NODES=kwok skips this check)"
        )
    return NodePlan(1, True, fallback=nodes == "auto"), None


def fallback_line(exc: BaseException) -> str:
    """What ``auto`` prints when the real node did not start."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
    return (
        f"run: the real node did not start ({first}); falling back to kwok fake nodes, "
        "where pods run no Ray (make run NODES=real shows the whole error)"
    )


# --------------------------------------------------------------------------- pending pods


def quantity(text: object) -> Fraction:
    """A Kubernetes quantity as an exact number (``500m`` -> 1/2, ``1Gi`` -> 2**30)."""
    from kuberay.gocompat.quantity import parse_quantity

    return parse_quantity(text).exact


def _requests(pod: Mapping[str, Any]) -> dict[str, Fraction]:
    """The pod's effective requests: the sum over its containers, or the largest init
    container's when that is more (the scheduler's rule)."""
    spec = pod.get("spec") or {}
    total: dict[str, Fraction] = {}
    for c in spec.get("containers") or ():
        for name, value in ((c.get("resources") or {}).get("requests") or {}).items():
            total[name] = total.get(name, Fraction(0)) + quantity(value)
    for c in spec.get("initContainers") or ():
        for name, value in ((c.get("resources") or {}).get("requests") or {}).items():
            total[name] = max(total.get(name, Fraction(0)), quantity(value))
    return total


def _unschedulable(pod: Mapping[str, Any]) -> str | None:
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if (
            cond.get("type") == "PodScheduled"
            and cond.get("status") == "False"
            and cond.get("reason") == "Unschedulable"
        ):
            return str(cond.get("message") or "unschedulable")
    return None


def _show(resource: str, value: Fraction) -> str:
    if resource == "memory":
        return f"{float(value) / 2**30:.1f}Gi"
    if resource == "cpu":
        return f"{float(value):g}"
    return f"{float(value):g}"


def free_by_node(
    nodes: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]]
) -> dict[str, dict[str, tuple[Fraction, Fraction]]]:
    """Per node, per resource: (free, allocatable), free being allocatable minus the requests
    of the non-terminated pods bound to the node."""
    used: dict[str, dict[str, Fraction]] = {}
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if not node or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        for name, value in _requests(pod).items():
            per = used.setdefault(node, {})
            per[name] = per.get(name, Fraction(0)) + value
    out: dict[str, dict[str, tuple[Fraction, Fraction]]] = {}
    for node in nodes:
        name = str((node.get("metadata") or {}).get("name"))
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        taken = used.get(name, {})
        out[name] = {
            r: (quantity(allocatable[r]) - taken.get(r, Fraction(0)), quantity(allocatable[r]))
            for r in RESOURCES
            if r in allocatable
        }
    return out


def explain_pending(
    pods: Iterable[Mapping[str, Any]], nodes: Iterable[Mapping[str, Any]]
) -> list[tuple[str, str]]:
    """``(key, line)`` for every pod the scheduler could not place: the key (pod uid and the
    scheduler's message) tells a new reason from one already said."""
    pods = list(pods)
    free = free_by_node(nodes, pods)
    lines: list[tuple[str, str]] = []
    for pod in pods:
        message = _unschedulable(pod)
        if message is None or (pod.get("spec") or {}).get("nodeName"):
            continue
        meta = pod.get("metadata") or {}
        asks = _requests(pod)
        wanted = ", ".join(f"{r} {_show(r, asks[r])}" for r in RESOURCES if r in asks)
        room = "; ".join(
            f"node {node} has "
            + ", ".join(f"{r} {_show(r, f)} of {_show(r, a)}" for r, (f, a) in sorted(res.items()))
            + " free"
            for node, res in sorted(free.items())
        )
        line = (
            f"run: pod {meta.get('namespace')}/{meta.get('name')} cannot be scheduled: "
            f"{message} It asks for {wanted or 'no resources'}; {room or 'there are no nodes'}."
        )
        lines.append((f"{meta.get('uid')}|{message}", line))
    return lines


class PendingWatcher(threading.Thread):
    """Polls (every ``interval`` s) Pending pods and the nodes through ``get`` (a GET of an
    apiserver path returning the decoded body) and prints each new :func:`explain_pending`
    line to ``out``; stops when :meth:`stop` is called. Errors are skipped silently: this
    is advice, never a reason to stop ``make run``."""

    def __init__(
        self,
        get: Callable[[str], Any],
        *,
        interval: float = POLL_SECONDS,
        out: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(name="pending-pods", daemon=True)
        self._get = get
        self._interval = interval
        self._out = out or (lambda line: print(line, file=sys.stderr, flush=True))
        self._halt = threading.Event()
        self._said: set[str] = set()

    def poll_once(self) -> list[str]:
        """One poll: the lines printed."""
        pending = self._get("/api/v1/pods?fieldSelector=status.phase%3DPending")["items"]
        if not any(_unschedulable(p) for p in pending):
            return []
        bound = self._get("/api/v1/pods?fieldSelector=spec.nodeName%21%3D")["items"]
        nodes = self._get("/api/v1/nodes")["items"]
        by_uid = {(p.get("metadata") or {}).get("uid"): p for p in [*bound, *pending]}
        printed = []
        for key, line in explain_pending(by_uid.values(), nodes):
            if key not in self._said:
                self._said.add(key)
                self._out(line)
                printed.append(line)
        return printed

    def run(self) -> None:
        while not self._halt.wait(self._interval):
            try:
                self.poll_once()
            except Exception:  # advice only: never a reason to stop make run
                continue

    def stop(self) -> None:
        """Ask the thread to end (it does within one interval)."""
        self._halt.set()
