# ruff: noqa: RUF009 - attribute declarations call jfield(), an attrs.field() wrapper
"""RayCronJob (ray.io/v1): creates a RayJob from ``jobTemplate`` on a cron schedule."""

from __future__ import annotations

from typing import Any

import attrs

from kuberay.api.v1._meta import ApiModel, jfield
from kuberay.api.v1.constants import API_VERSION, KIND_RAYCRONJOB
from kuberay.api.v1.raycluster_types import _ObjectMixin
from kuberay.api.v1.rayjob_types import RayJobSpec


@attrs.define(kw_only=True)
class RayCronJobSpec(ApiModel):
    """Desired state of a RayCronJob."""

    job_template: RayJobSpec = jfield("jobTemplate", required=True)
    schedule: str = jfield("schedule", required=True)
    time_zone: str | None = jfield("timeZone", min_length=1)
    suspend: bool | None = jfield("suspend")


@attrs.define(kw_only=True)
class RayCronJobStatus(ApiModel):
    """Observed state of a RayCronJob."""

    last_schedule_time: str | None = jfield("lastScheduleTime", date_time=True)


@attrs.define(kw_only=True)
class RayCronJob(_ObjectMixin, ApiModel):
    """A RayCronJob object. ``metadata`` is the ObjectMeta dict, kept verbatim."""

    api_version: str | None = jfield("apiVersion")
    kind: str | None = jfield("kind")
    metadata: dict[str, Any] | None = jfield("metadata", embedded="meta/v1.ObjectMeta")
    spec: RayCronJobSpec | None = jfield("spec")
    status: RayCronJobStatus | None = jfield("status")

    @classmethod
    def create(
        cls,
        *,
        metadata: dict[str, Any],
        spec: RayCronJobSpec,
        status: RayCronJobStatus | None = None,
    ) -> RayCronJob:
        """A new object with ``apiVersion``/``kind`` filled in."""
        return cls(
            api_version=API_VERSION,
            kind=KIND_RAYCRONJOB,
            metadata=metadata,
            spec=spec,
            status=status,
        )
