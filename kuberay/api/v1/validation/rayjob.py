"""RayJob validation (``ValidateRayJobSpec``, metadata, status) and its update rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from kuberay.api.v1.constants import (
    GATE_RAYJOB_DELETION_POLICY,
    MAX_RAYJOB_NAME_LENGTH,
    RAY_CLUSTER_LABEL_KEY,
)
from kuberay.api.v1.convert import join_path
from kuberay.api.v1.enums import (
    DeletionPolicyType,
    JobDeploymentStatus,
    JobSubmissionMode,
)
from kuberay.api.v1.gates import FeatureGates, gate_enabled
from kuberay.api.v1.rayjob_types import RayJob, RayJobSpec
from kuberay.api.v1.rules import (
    is_autoscaling_enabled,
    is_k8s_auth_enabled,
    submission_mode,
)
from kuberay.api.v1.validation.common import (
    _cel_job_spec,
    _coerce,
    _crd_errors,
    _Errors,
    _immutable,
    _restart_policy,
    _validate_name,
    _wrap,
    rule_dict,
    rule_object,
)
from kuberay.api.v1.validation.errors import FieldError
from kuberay.api.v1.validation.names import validate_job_spec_names
from kuberay.api.v1.validation.raycluster import (
    _cluster_transitions,
    _validate_cluster_spec,
)


# --- RayJob ---------------------------------------------------------------------------------
def _runtime_env_error(text: str) -> str | None:
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return f"failed to unmarshal RuntimeEnvYAML: {text}: {exc}"
    if value is None or isinstance(value, dict):
        return None
    go_type = (
        "array"
        if isinstance(value, list)
        else "bool"
        if isinstance(value, bool)
        else "number"
        if isinstance(value, int | float)
        else "string"
    )
    return (
        f"failed to unmarshal RuntimeEnvYAML: {text}: error unmarshaling JSON: while decoding "
        f"JSON: json: cannot unmarshal {go_type} into Go value of type map[string]interface {{}}"
    )


_DELETION_ORDER = (
    DeletionPolicyType.DELETE_WORKERS,
    DeletionPolicyType.DELETE_CLUSTER,
    DeletionPolicyType.DELETE_SELF,
)


def _validate_deletion(errors: _Errors, base: str, spec: RayJobSpec, gates: FeatureGates) -> None:
    shutdown = spec.shutdown_after_job_finishes is True
    ttl = spec.ttl_seconds_after_finished or 0
    if not shutdown and ttl > 0:
        errors.add(
            join_path(base, "ttlSecondsAfterFinished"),
            "The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false "
            "cannot have TTLSecondsAfterFinished",
        )
    strategy = spec.deletion_strategy
    if strategy is None:
        return
    spath = join_path(base, "deletionStrategy")
    if not gate_enabled(gates, GATE_RAYJOB_DELETION_POLICY):
        errors.add(
            spath, "RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy"
        )
    legacy = strategy.on_success is not None or strategy.on_failure is not None
    rules = strategy.deletion_rules or []
    if rules and shutdown:
        errors.add(
            join_path(base, "shutdownAfterJobFinishes"),
            "The RayJob spec is invalid: spec.shutdownAfterJobFinishes and "
            "spec.deletionStrategy.deletionRules are mutually exclusive",
        )
    if rules and legacy:
        errors.add(
            spath,
            "The RayJob spec is invalid: Cannot use both legacy onSuccess/onFailure fields and "
            "deletionRules simultaneously",
        )
    selector_mode = bool(spec.cluster_selector)
    autoscaling = is_autoscaling_enabled(rule_object(spec.ray_cluster_spec))
    if legacy:
        on_success, on_failure = strategy.on_success, strategy.on_failure
        if on_success is None or on_failure is None:
            errors.add(
                spath,
                "both DeletionStrategy.OnSuccess and DeletionStrategy.OnFailure must be set when "
                "using the legacy deletion policy fields of DeletionStrategy",
            )
            return
        if on_success.policy is None:
            errors.add(
                f"{spath}.onSuccess.policy",
                "the DeletionPolicyType field of DeletionStrategy.OnSuccess cannot be unset when "
                "DeletionStrategy is enabled",
            )
        if on_failure.policy is None:
            errors.add(
                f"{spath}.onFailure.policy",
                "the DeletionPolicyType field of DeletionStrategy.OnFailure cannot be unset when "
                "DeletionStrategy is enabled",
            )
        if on_success.policy is None or on_failure.policy is None:
            return
        cluster_scoped = (DeletionPolicyType.DELETE_CLUSTER, DeletionPolicyType.DELETE_WORKERS)
        if selector_mode:
            if on_success.policy in cluster_scoped:
                errors.add(
                    f"{spath}.onSuccess.policy",
                    "the ClusterSelector mode doesn't support DeletionStrategy="
                    f"{on_success.policy} on success",
                )
            if on_failure.policy in cluster_scoped:
                errors.add(
                    f"{spath}.onFailure.policy",
                    "the ClusterSelector mode doesn't support DeletionStrategy="
                    f"{on_failure.policy} on failure",
                )
        policies = (on_success.policy, on_failure.policy)
        if DeletionPolicyType.DELETE_WORKERS in policies and autoscaling:
            errors.add(
                spath,
                "DeletionStrategy=DeleteWorkers currently does not support RayCluster with "
                "autoscaling enabled",
            )
        if shutdown and DeletionPolicyType.DELETE_NONE in policies:
            errors.add(
                spath,
                "The RayJob spec is invalid: shutdownAfterJobFinshes is set to 'true' while "
                "deletion policy is 'DeleteNone'",
            )
        return
    if not rules:
        errors.add(
            spath,
            "The RayJob spec is invalid: DeletionStrategy requires either BOTH onSuccess and "
            "onFailure, OR the deletionRules field (cannot be empty)",
        )
        return
    by_job_status: dict[str, dict[str, int]] = {}
    by_deployment_status: dict[str, dict[str, int]] = {}
    for i, rule in enumerate(rules):
        rpath = f"{spath}.deletionRules[{i}]"
        cond = rule.condition
        cond_ttl = cond.ttl_seconds or 0
        if cond.job_status is not None and cond.job_deployment_status is not None:
            errors.add(
                f"{rpath}.condition",
                f"deletionRules[{i}]: cannot set both JobStatus and JobDeploymentStatus at the "
                "same time",
            )
            continue
        if cond.job_status is None and cond.job_deployment_status is None:
            errors.add(
                f"{rpath}.condition",
                f"deletionRules[{i}]: exactly one of JobStatus and JobDeploymentStatus must be set",
            )
            continue
        if cond_ttl < 0:
            errors.add(
                f"{rpath}.condition.ttlSeconds",
                f"deletionRules[{i}]: TTLSeconds must be non-negative",
            )
            continue
        policy = str(rule.policy)
        if selector_mode and policy in ("DeleteCluster", "DeleteWorkers"):
            errors.add(
                f"{rpath}.policy",
                f"deletionRules[{i}]: DeletionPolicyType '{policy}' not supported when "
                "ClusterSelector is set",
            )
            continue
        if autoscaling and policy == "DeleteWorkers":
            errors.add(
                f"{rpath}.policy",
                f"deletionRules[{i}]: DeletionPolicyType 'DeleteWorkers' not supported with "
                "autoscaling enabled",
            )
            continue
        if cond.job_status is not None:
            label, value, table = "JobStatus", str(cond.job_status), by_job_status
        else:
            label, value = "JobDeploymentStatus", str(cond.job_deployment_status)
            table = by_deployment_status
        seen_policies = table.setdefault(value, {})
        if policy in seen_policies:
            errors.add(
                rpath,
                f"deletionRules[{i}]: duplicate rule for DeletionPolicyType '{policy}' and "
                f"{label} '{value}'",
            )
            continue
        seen_policies[policy] = cond_ttl
    for label, table in (
        ("JobStatus", by_job_status),
        ("JobDeploymentStatus", by_deployment_status),
    ):
        for value, policy_ttls in table.items():
            previous: tuple[str, int] | None = None
            for policy_type in _DELETION_ORDER:
                ttl_value = policy_ttls.get(policy_type.value)
                if ttl_value is None:
                    continue
                if previous is not None and ttl_value < previous[1]:
                    errors.add(
                        f"{spath}.deletionRules",
                        f"for {label} '{value}': {policy_type.value} TTL ({ttl_value}) must be >= "
                        f"{previous[0]} TTL ({previous[1]})",
                    )
                previous = (policy_type.value, ttl_value)


def _validate_job_spec(
    spec: RayJobSpec,
    annotations: Mapping[str, str],
    base: str,
    gates: FeatureGates,
) -> list[FieldError]:
    """``ValidateRayJobSpec``, every rule, in KubeRay's order."""
    errors = _Errors("spec")
    shutdown = spec.shutdown_after_job_finishes is True
    suspend = spec.suspend is True
    mode = submission_mode(rule_dict(spec))
    if suspend and not shutdown:
        errors.add(
            join_path(base, "suspend"),
            "The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false is "
            "not allowed to be suspended",
        )
    if (spec.ttl_seconds_after_finished or 0) < 0:
        errors.add(
            join_path(base, "ttlSecondsAfterFinished"),
            "The RayJob spec is invalid: TTLSecondsAfterFinished must be a non-negative integer",
        )
    _validate_deletion(errors, base, spec, gates)

    selector_mode = bool(spec.cluster_selector)
    if suspend and selector_mode:
        errors.add(
            join_path(base, "suspend"),
            "The RayJob spec is invalid: the ClusterSelector mode doesn't support the suspend "
            "operation",
        )
    if spec.ray_cluster_spec is None and not selector_mode:
        errors.add(
            join_path(base, "rayClusterSpec"),
            "The RayJob spec is invalid: one of RayClusterSpec or ClusterSelector must be set",
        )
    backoff = spec.backoff_limit
    if selector_mode:
        if not (spec.cluster_selector or {}).get(RAY_CLUSTER_LABEL_KEY):
            errors.add(
                join_path(base, f"clusterSelector[{RAY_CLUSTER_LABEL_KEY}]"),
                "cluster name in ClusterSelector should not be empty",
            )
        if mode == JobSubmissionMode.SIDECAR_MODE:
            errors.add(
                join_path(base, "clusterSelector"),
                "ClusterSelector is not supported in SidecarMode",
            )
        if backoff is not None and backoff > 0:
            errors.add(
                join_path(base, "backoffLimit"),
                "The RayJob spec is invalid: BackoffLimit is incompatible with ClusterSelector "
                "mode",
            )
    if mode == JobSubmissionMode.INTERACTIVE_MODE and backoff is not None and backoff > 0:
        errors.add(
            join_path(base, "backoffLimit"),
            "The RayJob spec is invalid: BackoffLimit is incompatible with InteractiveMode",
        )
    if mode == JobSubmissionMode.SIDECAR_MODE:
        if spec.submitter_pod_template is not None:
            errors.add(
                join_path(base, "submitterPodTemplate"),
                "Currently, SidecarMode doesn't support SubmitterPodTemplate",
            )
        if spec.submitter_config is not None:
            errors.add(
                join_path(base, "submitterConfig"),
                "Currently, SidecarMode doesn't support SubmitterConfig",
            )
        if spec.ray_cluster_spec is not None and _restart_policy(
            spec.ray_cluster_spec.head_group_spec.template
        ) not in ("", "Never"):
            errors.add(
                join_path(base, "rayClusterSpec.headGroupSpec.template.spec.restartPolicy"),
                "restartPolicy for head Pod should be Never or unset when using SidecarMode",
            )
    cluster_spec = spec.ray_cluster_spec
    if cluster_spec is not None:
        cbase = join_path(base, "rayClusterSpec")
        if is_k8s_auth_enabled(rule_dict(cluster_spec.auth_options)):
            errors.add(
                f"{cbase}.authOptions.enableK8sTokenAuth",
                "The RayJob spec is invalid: K8s token auth mode is currently not supported for "
                "RayJob",
            )
        errors.extend(
            _wrap(
                _validate_cluster_spec(cluster_spec, annotations, cbase, gates),
                "The RayJob spec is invalid: ",
            )
        )
    runtime_env_error = _runtime_env_error(spec.runtime_env_yaml or "")
    if runtime_env_error:
        errors.add(join_path(base, "runtimeEnvYAML"), runtime_env_error)
    if spec.active_deadline_seconds is not None and spec.active_deadline_seconds <= 0:
        errors.add(
            join_path(base, "activeDeadlineSeconds"),
            "The RayJob spec is invalid: activeDeadlineSeconds must be a positive integer",
        )
    if spec.pre_running_deadline_seconds is not None and spec.pre_running_deadline_seconds <= 0:
        errors.add(
            join_path(base, "preRunningDeadlineSeconds"),
            "The RayJob spec is invalid: preRunningDeadlineSeconds must be a positive integer",
        )
    if backoff is not None and backoff < 0:
        errors.add(
            join_path(base, "backoffLimit"),
            "The RayJob spec is invalid: backoffLimit must be a positive integer",
        )
    validate_job_spec_names(errors, base, spec.cluster_selector, spec.job_id)
    return errors.items


def validate_rayjob(
    job: RayJob | Mapping[str, Any], *, gates: FeatureGates = None
) -> list[FieldError]:
    """Every error KubeRay would raise for a RayJob.

    Order: ``crd``; ``metadata`` (name ≤ 47, DNS-1035); ``spec`` (``ValidateRayJobSpec``,
    including the embedded ``rayClusterSpec`` with messages prefixed
    ``"The RayJob spec is invalid: "``); ``status`` (Waiting only in InteractiveMode).
    """
    model = _coerce(RayJob, job)
    if isinstance(model, list):
        return model
    spec = model.spec if model.spec is not None else RayJobSpec()
    out = _crd_errors(model, lambda errs: _cel_job_spec(model.spec, "spec", errs))
    metadata = _Errors("metadata")
    _validate_name(
        metadata, "RayJob", model.name, MAX_RAYJOB_NAME_LENGTH, "The RayJob metadata is invalid: "
    )
    out.extend(metadata.items)
    out.extend(_validate_job_spec(spec, model.annotations, "spec", gates))
    status = model.status
    if (
        status is not None
        and status.job_deployment_status == JobDeploymentStatus.WAITING
        and submission_mode(rule_dict(spec)) != JobSubmissionMode.INTERACTIVE_MODE
    ):
        out.append(
            FieldError(
                "status.jobDeploymentStatus",
                "The RayJob status is invalid: JobDeploymentStatus cannot be `Waiting` when "
                "SubmissionMode is not InteractiveMode",
                "status",
            )
        )
    return out


def _job_transitions(
    old: RayJobSpec | None, new: RayJobSpec | None, base: str, out: list[FieldError]
) -> None:
    if old is None or new is None:
        return
    _immutable(
        old.managed_by,
        new.managed_by,
        join_path(base, "managedBy"),
        "the managedBy field is immutable",
        out,
    )
    _cluster_transitions(
        old.ray_cluster_spec, new.ray_cluster_spec, join_path(base, "rayClusterSpec"), out
    )


def validate_rayjob_update(
    old: RayJob | Mapping[str, Any],
    new: RayJob | Mapping[str, Any],
    *,
    gates: FeatureGates = None,
) -> list[FieldError]:
    """Errors of a RayJob update: ``managedBy`` (RayJob's and its cluster spec's) and the GCS FT
    backend are immutable, then :func:`validate_rayjob` of the new object. KubeRay has no
    other RayJob immutability rule: later ``rayClusterSpec`` edits are accepted and ignored by
    the controller once the cluster exists."""
    old_model, new_model = _coerce(RayJob, old), _coerce(RayJob, new)
    if isinstance(new_model, list):
        return new_model
    out: list[FieldError] = []
    if not isinstance(old_model, list):
        _job_transitions(old_model.spec, new_model.spec, "spec", out)
    return out + validate_rayjob(new_model, gates=gates)
