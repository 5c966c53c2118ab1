"""The operator as ``kuberay-operator --feature-gates=RayCronJob=true`` assembles it
(``register_all``), on the real clock: a RayCronJob gets its RayJob when the tick
comes (without the gate no controller is registered: see tests/unit/cmd)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from kuberay.cmd.config import parse_config, refuse_unimplemented
from kuberay.controllers.setup import register_all
from kuberay.featuregates.kuberay_gates import new_feature_gate
from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.operator_harness import new_manager, running
from tests.integration.raycronjob.helpers import cronjob, parse, rayjobs_of


@contextlib.asynccontextmanager
async def operator(
    kubeconfig_path: Path, namespace: str, flags: list[str]
) -> AsyncIterator[list[str]]:
    gates = new_feature_gate()
    cfg, _ = parse_config(flags, gates)
    refuse_unimplemented(cfg, gates)
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)
    mgr = new_manager(client, namespace)
    names = register_all(mgr, cfg.controller_config(), gates, env={})
    try:
        async with running(mgr):
            yield names
    finally:
        await client.close()


async def test_gate_on_schedules_on_the_real_clock(
    crds_installed: None, kubeconfig_path: Path, kclient: Client, namespace: str
) -> None:
    flags = ["--feature-gates=RayCronJob=true"]
    async with operator(kubeconfig_path, namespace, flags) as names:
        assert names == ["raycluster", "rayjob", "rayservice", "raycronjob"]
        created = await kclient.create(cronjob("realtime", namespace, "@every 2s"))

        async def scheduled() -> bool:
            jobs = await rayjobs_of(kclient, namespace, "realtime")
            cj = await kclient.get("ray.io/v1", "RayCronJob", "realtime", namespace)
            last = (cj.get("status") or {}).get("lastScheduleTime")
            return bool(jobs) and bool(last)

        await eventually(scheduled, timeout=60, message="a RayJob on the real clock")
        cj = await kclient.get("ray.io/v1", "RayCronJob", "realtime", namespace)
        since = parse(cj["status"]["lastScheduleTime"]) - parse(
            created["metadata"]["creationTimestamp"]
        )
        assert since.total_seconds() > 0 and since.total_seconds() % 2 == 0
