# ruff: noqa: RUF009 - attribute declarations call jfield(), an attrs.field() wrapper
"""RayJob (ray.io/v1): spec, status and nested types, field for field as KubeRay v1.7."""

from __future__ import annotations

from typing import Any

import attrs

from kuberay.api.v1._meta import ApiModel, CelRule, jfield
from kuberay.api.v1.constants import API_VERSION, KIND_RAYJOB
from kuberay.api.v1.enums import (
    DeletionPolicyType,
    JobDeploymentStatus,
    JobStatus,
    JobSubmissionMode,
)
from kuberay.api.v1.raycluster_types import (
    MANAGED_BY_CEL,
    RayClusterSpec,
    RayClusterStatus,
    _ObjectMixin,
)

DELETION_STRATEGY_CEL: tuple[CelRule, ...] = (
    CelRule(
        rule="!((has(self.onSuccess) || has(self.onFailure)) && has(self.deletionRules))",
        message=(
            "legacy policies (onSuccess/onFailure) and deletionRules cannot be used together "
            "within the same deletionStrategy"
        ),
    ),
    CelRule(
        rule="((has(self.onSuccess) && has(self.onFailure)) || has(self.deletionRules))",
        message=(
            "deletionStrategy requires either BOTH onSuccess and onFailure, OR the "
            "deletionRules field (cannot be empty)"
        ),
    ),
)
DELETION_CONDITION_CEL: tuple[CelRule, ...] = (
    CelRule(
        rule="!(has(self.jobStatus) && has(self.jobDeploymentStatus))",
        message=(
            "JobStatus and JobDeploymentStatus cannot be used together within the same "
            "deletion condition."
        ),
    ),
    CelRule(
        rule="has(self.jobStatus) || has(self.jobDeploymentStatus)",
        message=(
            "the deletion condition requires either the JobStatus or the JobDeploymentStatus field."
        ),
    ),
)

_DELETION_POLICIES = list(DeletionPolicyType)


@attrs.define(kw_only=True)
class DeletionPolicy(ApiModel):
    """Legacy single-stage deletion policy (``onSuccess``/``onFailure``; deprecated)."""

    policy: DeletionPolicyType | None = jfield("policy", enum=_DELETION_POLICIES)


@attrs.define(kw_only=True)
class DeletionCondition(ApiModel):
    """When a deletion rule fires: exactly one of jobStatus / jobDeploymentStatus."""

    job_status: JobStatus | None = jfield(
        "jobStatus", enum=[JobStatus.SUCCEEDED.value, JobStatus.FAILED.value]
    )
    job_deployment_status: JobDeploymentStatus | None = jfield(
        "jobDeploymentStatus", enum=[JobDeploymentStatus.FAILED.value]
    )
    ttl_seconds: int | None = jfield("ttlSeconds", crd_default=0, minimum=0)


@attrs.define(kw_only=True)
class DeletionRule(ApiModel):
    """One deletion action and its trigger."""

    policy: DeletionPolicyType = jfield("policy", required=True, enum=_DELETION_POLICIES)
    condition: DeletionCondition = jfield("condition", required=True, cel=DELETION_CONDITION_CEL)


@attrs.define(kw_only=True)
class DeletionStrategy(ApiModel):
    """Post-completion cleanup: legacy onSuccess+onFailure, or deletionRules."""

    on_success: DeletionPolicy | None = jfield("onSuccess")
    on_failure: DeletionPolicy | None = jfield("onFailure")
    deletion_rules: list[DeletionRule] | None = jfield(
        "deletionRules", list_type="atomic", min_items=1
    )


@attrs.define(kw_only=True)
class SubmitterConfig(ApiModel):
    """Submitter settings (K8s Job backoffLimit; sidecar restart budget)."""

    backoff_limit: int | None = jfield("backoffLimit")


@attrs.define(kw_only=True)
class RayJobSpec(ApiModel):
    """Desired state of a RayJob (also the ``jobTemplate`` of a RayCronJob).

    CRD defaults: ``backoffLimit`` 0, ``submissionMode`` K8sJobMode,
    ``ttlSecondsAfterFinished`` 0.
    """

    active_deadline_seconds: int | None = jfield("activeDeadlineSeconds")
    backoff_limit: int | None = jfield("backoffLimit", crd_default=0)
    ray_cluster_spec: RayClusterSpec | None = jfield("rayClusterSpec")
    submitter_pod_template: dict[str, Any] | None = jfield(
        "submitterPodTemplate", embedded="core/v1.PodTemplateSpec"
    )
    metadata: dict[str, str] | None = jfield("metadata")
    cluster_selector: dict[str, str] | None = jfield("clusterSelector")
    submitter_config: SubmitterConfig | None = jfield("submitterConfig")
    managed_by: str | None = jfield("managedBy", cel=MANAGED_BY_CEL)
    deletion_strategy: DeletionStrategy | None = jfield(
        "deletionStrategy", cel=DELETION_STRATEGY_CEL
    )
    entrypoint: str | None = jfield("entrypoint")
    runtime_env_yaml: str | None = jfield("runtimeEnvYAML")
    job_id: str | None = jfield("jobId")
    submission_mode: str | None = jfield(
        "submissionMode", crd_default=JobSubmissionMode.K8S_JOB_MODE.value
    )
    entrypoint_resources: str | None = jfield("entrypointResources")
    entrypoint_num_cpus: float | None = jfield("entrypointNumCpus")
    entrypoint_num_gpus: float | None = jfield("entrypointNumGpus")
    ttl_seconds_after_finished: int | None = jfield("ttlSecondsAfterFinished", crd_default=0)
    pre_running_deadline_seconds: int | None = jfield("preRunningDeadlineSeconds", minimum=1)
    shutdown_after_job_finishes: bool | None = jfield("shutdownAfterJobFinishes")
    suspend: bool | None = jfield("suspend")


@attrs.define(kw_only=True)
class RayJobStatusInfo(ApiModel):
    """Start/end time of the Ray job as reported by the dashboard."""

    start_time: str | None = jfield("startTime", date_time=True)
    end_time: str | None = jfield("endTime", date_time=True)


@attrs.define(kw_only=True)
class RayJobStatus(ApiModel):
    """Observed state of a RayJob. CRD defaults ``succeeded``/``failed`` to 0."""

    ray_job_info: RayJobStatusInfo | None = jfield("rayJobInfo")
    job_id: str | None = jfield("jobId")
    ray_cluster_name: str | None = jfield("rayClusterName")
    dashboard_url: str | None = jfield("dashboardURL")
    job_status: str | None = jfield("jobStatus")
    job_deployment_status: str | None = jfield("jobDeploymentStatus")
    reason: str | None = jfield("reason")
    message: str | None = jfield("message")
    start_time: str | None = jfield("startTime", date_time=True)
    end_time: str | None = jfield("endTime", date_time=True)
    succeeded: int | None = jfield("succeeded", crd_default=0)
    failed: int | None = jfield("failed", crd_default=0)
    ray_cluster_status: RayClusterStatus | None = jfield("rayClusterStatus")
    job_status_check_failure_start_time: str | None = jfield(
        "jobStatusCheckFailureStartTime", date_time=True
    )
    observed_generation: int | None = jfield("observedGeneration", int_format="int64")


@attrs.define(kw_only=True)
class RayJob(_ObjectMixin, ApiModel):
    """A RayJob object. ``metadata`` is the ObjectMeta dict, kept verbatim."""

    api_version: str | None = jfield("apiVersion")
    kind: str | None = jfield("kind")
    metadata: dict[str, Any] | None = jfield("metadata", embedded="meta/v1.ObjectMeta")
    spec: RayJobSpec | None = jfield("spec")
    status: RayJobStatus | None = jfield("status")

    @classmethod
    def create(
        cls,
        *,
        metadata: dict[str, Any],
        spec: RayJobSpec,
        status: RayJobStatus | None = None,
    ) -> RayJob:
        """A new object with ``apiVersion``/``kind`` filled in."""
        return cls(
            api_version=API_VERSION, kind=KIND_RAYJOB, metadata=metadata, spec=spec, status=status
        )
