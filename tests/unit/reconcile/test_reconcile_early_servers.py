"""Manager.start_servers: /metrics and /healthz answer before the controllers are set up,
/readyz only once the caches synced; run() keeps the servers it finds started."""

from __future__ import annotations

import asyncio

import prometheus_client

from kuberay.kube import Client
from kuberay.kube.kubeconfig import RestConfig
from kuberay.reconcile import Manager
from kuberay.reconcile.options import ManagerOptions
from tests.helpers import eventually
from tests.unit.reconcile.test_reconcile_supervision import get


async def test_metrics_and_healthz_before_setup_readyz_after_the_caches() -> None:
    mgr = Manager(
        Client(RestConfig("http://127.0.0.1:1")),  # never contacted: nothing is watched
        ManagerOptions(
            metrics_bind_address="127.0.0.1:0",
            health_probe_bind_address="127.0.0.1:0",
            handle_signals=False,
        ),
        registry=prometheus_client.CollectorRegistry(),
    )
    await mgr.start_servers()
    probes = f"http://127.0.0.1:{mgr.servers['probes'].port}"
    metrics = f"http://127.0.0.1:{mgr.servers['metrics'].port}/metrics"
    try:
        assert (await get(metrics))[0] == 200
        assert (await get(f"{probes}/healthz"))[0] == 200
        status, body = await get(f"{probes}/readyz")
        assert status == 500 and "informers" in body
        task = asyncio.create_task(mgr.run())
        await eventually(lambda: mgr.leading.is_set(), timeout=30, message="leading")
        assert mgr.servers["probes"].port == int(probes.rsplit(":", 1)[1])
        assert (await get(f"{probes}/readyz"))[0] == 200
        mgr.stop()
        await asyncio.wait_for(task, 30)
        assert mgr.servers == {}
    finally:
        await mgr.stop_servers()
        await mgr.client.close()
