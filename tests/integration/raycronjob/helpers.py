"""Helpers for RayCronJob integration tests: the baseline CR, KubeRay's samples, tick
arithmetic done by hand, and bounded waits for what the operator does asynchronously."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import yaml
from prometheus_client import REGISTRY

from kuberay.controllers.raycronjob import CONTROLLER_NAME
from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycronjob.conftest import CronOperator
from tests.kuberay_samples import KUBERAY_SAMPLES as SAMPLES

RAY_IMAGE = "rayproject/ray:2.52.0"
Obj = dict[str, Any]


def cronjob(name: str, namespace: str, schedule: str = "*/5 * * * *", **spec: Any) -> Obj:
    """KubeRay's baseline "C": a valid RayJob template running ``python test.py``."""
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCronJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedule": schedule,
            "jobTemplate": {
                "entrypoint": "python test.py",
                "shutdownAfterJobFinishes": True,
                "rayClusterSpec": {
                    "headGroupSpec": {
                        "rayStartParams": {},
                        "template": {
                            "spec": {"containers": [{"name": "ray-head", "image": RAY_IMAGE}]}
                        },
                    }
                },
            },
            **spec,
        },
    }


def sample(file: str, namespace: str) -> Obj:
    """The RayCronJob document of one of KubeRay's sample manifests, in ``namespace``."""
    docs = yaml.safe_load_all((SAMPLES / file).read_text())
    (obj,) = [d for d in docs if d and d.get("kind") == "RayCronJob"]
    obj["metadata"]["namespace"] = namespace
    return dict(obj)


def parse(stamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def utc_stamp(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def next_minute(t: dt.datetime) -> dt.datetime:
    """The first whole minute strictly after ``t`` (``* * * * *``)."""
    unix = math.floor(t.timestamp()) // 60 * 60 + 60
    return dt.datetime.fromtimestamp(unix, dt.UTC)


def next_daily(t: dt.datetime, hour: int, minute: int, offset: dt.timedelta) -> dt.datetime:
    """The first ``hour:minute`` wall time of a fixed-offset zone strictly after ``t``."""
    local = t.astimezone(dt.timezone(offset))
    candidate = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if candidate <= local:
        candidate += dt.timedelta(days=1)
    return candidate.astimezone(dt.UTC)


def expected_name(cronjob_name: str, tick: dt.datetime) -> str:
    return f"{cronjob_name}-{int(tick.timestamp()) // 60}"


async def rayjobs_of(client: Client, namespace: str, cronjob_name: str) -> list[Obj]:
    items, _ = await client.list_all(
        "ray.io/v1", "RayJob", namespace, label_selector=f"ray.io/cronjob-name={cronjob_name}"
    )
    return sorted(items, key=lambda j: str(j["metadata"]["name"]))


def reconciles() -> float:
    """Finished passes of the RayCronJob controller in this process (any result)."""
    return sum(
        REGISTRY.get_sample_value(
            "controller_runtime_reconcile_total", {"controller": CONTROLLER_NAME, "result": r}
        )
        or 0.0
        for r in ("success", "error", "requeue", "requeue_after")
    )


async def passes_after(before: float, count: int = 1) -> None:
    """Wait until ``count`` more passes have finished since ``before``."""
    await eventually(
        lambda: reconciles() >= before + count, timeout=60, message=f"{count} more pass(es)"
    )


async def settle(op: CronOperator, name: str) -> None:
    """Poke ``name`` and wait for that pass and for its Events to be written: whatever
    the operator does about the current state is done."""
    before = reconciles()
    op.poke(name)
    await passes_after(before)

    def idle() -> bool:
        queue = op.controller.queue
        busy = REGISTRY.get_sample_value(
            "controller_runtime_active_workers", {"controller": CONTROLLER_NAME}
        )
        return queue is not None and len(queue) == 0 and not busy

    await eventually(idle, timeout=60, message="controller idle")
    await op.controller.reconciler.ctx.recorder.flush()


async def create_and_settle(op: CronOperator, kclient: Client, obj: Obj) -> Obj:
    """Create ``obj``, wait until the operator has reconciled it; the stored object."""
    before = reconciles()
    created = await kclient.create(obj)
    await passes_after(before)
    return created
