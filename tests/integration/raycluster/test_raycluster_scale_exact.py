"""Scale-down deletes exactly what was asked (KubeRay #1936, #733), on a slow apiserver.

The operator runs on a client whose every request waits before it is sent and whose pod
watch events reach the cache late, so its cache trails its own writes; one worker is held
Terminating by a finalizer. The autoscaler's move is played by the test: ``replicas`` 6 -> 5
with ``workersToDelete`` naming one pod, then, once that pod is gone, ``workersToDelete``
cleared (the autoscaler clears it; the operator never writes the spec).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from kuberay.kube import Client, NotFound, WatchEvent
from tests.helpers import eventually
from tests.integration.raycluster.conftest import start_operator
from tests.integration.raycluster.helpers import get_cluster, raycluster, wait_observed

WORKER = "ray.io/node-type=worker"
HOLD = "test/hold"
#: Every request of the operator waits this long before it is sent.
REQUEST_DELAY = 0.05
#: Every pod watch event reaches the operator's cache this much later than the last one.
EVENT_DELAY = 0.3


class SlowClient(Client):
    """A client on a slow apiserver that records the pod writes it sends."""

    pod_writes: list[tuple[str, str]]

    async def request(self, method: str, path: str, **kwargs: Any) -> Any:
        await asyncio.sleep(REQUEST_DELAY)
        if method != "GET" and "/pods" in path:
            self.pod_writes.append((method, path.rsplit("/", 1)[-1]))
        return await super().request(method, path, **kwargs)

    async def watch(  # type: ignore[override]
        self, api_version: str, kind: str, *args: Any, **kwargs: Any
    ) -> AsyncIterator[WatchEvent]:
        async for event in super().watch(api_version, kind, *args, **kwargs):
            if kind == "Pod":
                await asyncio.sleep(EVENT_DELAY)
            yield event


async def workers(client: Client, ns: str, name: str) -> dict[str, bool]:
    """Worker pod name -> terminating, for every worker pod of ``name``."""
    items, _ = await client.list_all(
        "v1", "Pod", ns, label_selector=f"ray.io/cluster={name},{WORKER}"
    )
    return {p["metadata"]["name"]: bool(p["metadata"].get("deletionTimestamp")) for p in items}


async def set_group(client: Client, ns: str, name: str, **fields: Any) -> None:
    rc = await get_cluster(client, ns, name)
    groups = rc["spec"]["workerGroupSpecs"]
    groups[0].update(fields)
    await client.patch("ray.io/v1", "RayCluster", name, {"spec": {"workerGroupSpecs": groups}}, ns)


async def test_scale_down_on_a_slow_apiserver_deletes_exactly_the_named_pod(
    crds_installed: None, kubeconfig_path: Path, kclient: Client, namespace: str
) -> None:
    ns = namespace
    slow = await SlowClient.from_kubeconfig(kubeconfig_path, qps=0, burst=1)
    slow.pod_writes = []
    held = ""
    try:
        async with start_operator(slow, ns) as op:
            body = raycluster("exact", ns, replicas=6)
            body["spec"]["workerGroupSpecs"][0]["maxReplicas"] = 6
            await kclient.create(body)

            async def six() -> dict[str, bool] | None:
                found = await workers(kclient, ns, "exact")
                assert len(found) == 6 and not any(found.values()), found
                return found

            before = sorted(await eventually(six, timeout=60, message="6 workers"))
            await wait_observed(op, ns, "exact")
            held, named = before[0], before[1]
            await kclient.patch("v1", "Pod", held, {"metadata": {"finalizers": [HOLD]}}, ns)
            await kclient.delete("v1", "Pod", held, ns)  # Terminating until released
            slow.pod_writes.clear()

            await set_group(
                kclient, ns, "exact", replicas=5, scaleStrategy={"workersToDelete": [named]}
            )

            async def named_gone() -> dict[str, bool] | None:
                found = await workers(kclient, ns, "exact")
                return found if named not in found else None

            await eventually(named_gone, timeout=60, message=f"{named} deleted")

            async def passes(n: int) -> None:
                for _ in range(n):  # through the queue: never two passes at once
                    op.poke("exact")
                    await asyncio.sleep(EVENT_DELAY * 2)

            await passes(4)
            # The autoscaler clears workersToDelete once its pods are gone.
            await set_group(kclient, ns, "exact", scaleStrategy={"workersToDelete": []})
            await passes(4)

            left = await workers(kclient, ns, "exact")
            # Exactly the named pod went: the Terminating one still counts (as KubeRay's
            # diff) and was not deleted again; nothing was created in its place.
            assert sorted(left) == [p for p in before if p != named]
            assert left[held] is True
            assert slow.pod_writes == [("DELETE", named)]
            rc = await get_cluster(kclient, ns, "exact")
            assert rc["spec"]["workerGroupSpecs"][0]["scaleStrategy"]["workersToDelete"] == []
            assert rc["spec"]["workerGroupSpecs"][0]["replicas"] == 5
    finally:
        if held:
            with contextlib.suppress(NotFound):
                await kclient.patch("v1", "Pod", held, {"metadata": {"finalizers": None}}, ns)
        await slow.close()
