"""Progress of long operations (``create --wait``, ``job submit``, ``scale --wait``) on
stderr: one live line rewritten in place when stderr is a terminal, else one plain line
per change (logs and pipes stay readable)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from kuberay.kube import objects as k8s
from kuberay.kubectl_ray.common import CLUSTER_LABEL, GROUP_LABEL, NODE_TYPE_LABEL, pod_ready

if TYPE_CHECKING:
    from kuberay.kube import Client

CLEAR_LINE = "\r\x1b[K"


class Progress:
    """Shows the latest progress text on ``stream``."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        isatty = getattr(stream, "isatty", None)
        self.live = bool(isatty and isatty())
        self.last = ""
        self._open = False

    def update(self, text: str) -> None:
        """Show ``text`` (nothing when it did not change)."""
        if not text or text == self.last:
            return
        self.last = text
        if self.live:
            self.stream.write(CLEAR_LINE + text)
            self._open = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self) -> None:
        """End the live line (the last text stays visible)."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False


async def pods_ready(client: Client, ns: str, cluster: str, group: str = "") -> int:
    """Ready Ray pods of ``cluster`` (of one worker ``group`` when given)."""
    selector = f"{CLUSTER_LABEL}={cluster}"
    if group:
        selector += f",{NODE_TYPE_LABEL}=worker,{GROUP_LABEL}={group}"
    pods, _ = await client.list_all("v1", "Pod", ns, label_selector=selector)
    return sum(1 for p in pods if pod_ready(p) and not p["metadata"].get("deletionTimestamp"))


def wanted_pods(cluster: dict[str, object]) -> int:
    """Pods the cluster wants: the head plus every worker replica times its hosts."""
    spec = k8s.spec(cluster)
    assert isinstance(spec, dict)
    total = 1
    for group in spec.get("workerGroupSpecs") or []:
        if group.get("suspend"):
            continue
        total += int(group.get("replicas") or 0) * int(group.get("numOfHosts") or 1)
    return total


__all__ = ["CLEAR_LINE", "Progress", "pods_ready", "wanted_pods"]
