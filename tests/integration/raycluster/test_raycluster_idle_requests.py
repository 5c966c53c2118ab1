"""An idle operator is quiet: once its caches are synced and there is nothing to do, it
sends no request for 90 s -- no re-list and no re-watch (its watches ask for 5-10 minute
server-side timeouts and are not given up early because a quiet resource sends no
bookmarks). ``hack/benchmarks/wire_bench.py --idle 600`` counts the requests of 10 idle minutes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycluster.conftest import start_operator

IDLE_SECONDS = 90.0


async def test_idle_operator_makes_no_request_for_90_seconds(
    crds_installed: None, kubeconfig_path: Path, namespace: str
) -> None:
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)
    try:
        async with start_operator(client, namespace) as op:
            await eventually(
                lambda: op.controller.started and op.manager.cache.has_synced(), timeout=30
            )
            await asyncio.sleep(2.0)  # the initial lists and watches are out
            before = client.stats.snapshot()
            watches = client.open_watches
            await asyncio.sleep(IDLE_SECONDS)
            after = client.stats.snapshot()
            assert after == before, {k: after[k] - before.get(k, 0) for k in after}
            assert client.open_watches == watches >= 1
    finally:
        await client.close()
