"""The operator as ``kuberay-operator --feature-gates=RayCronJob=true`` assembles it
(``register_all``), on the real clock: a RayCronJob gets its RayJob when the tick
comes (without the gate no controller is registered: see tests/unit/cmd)."""

from __future__ import annotations

from pathlib import Path

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.operator_harness import start_operator
from tests.integration.raycronjob.helpers import cronjob, parse, rayjobs_of


async def test_gate_on_schedules_on_the_real_clock(
    crds_installed: None, kubeconfig_path: Path, kclient: Client, namespace: str
) -> None:
    flags = ["--feature-gates=RayCronJob=true"]
    async with start_operator(kubeconfig_path, namespace, flags=flags) as op:
        assert list(op.controllers) == ["raycluster", "rayjob", "rayservice", "raycronjob"]
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
