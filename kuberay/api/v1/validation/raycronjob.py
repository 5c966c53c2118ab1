"""RayCronJob validation (``ValidateRayCronJobSpec``) and its update rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuberay.api.v1.constants import (
    MAX_RAYCRONJOB_NAME_LENGTH,
)
from kuberay.api.v1.gates import FeatureGates
from kuberay.api.v1.raycronjob_types import RayCronJob, RayCronJobSpec
from kuberay.api.v1.rayjob_types import RayJobSpec
from kuberay.api.v1.schedule import load_go_location, parse_standard
from kuberay.api.v1.validation.common import _cel_job_spec, _coerce, _crd_errors, _Errors, _wrap
from kuberay.api.v1.validation.errors import FieldError
from kuberay.api.v1.validation.rayjob import (
    _job_transitions,
    _validate_job_spec,
)


# --- RayCronJob -----------------------------------------------------------------------------
def validate_raycronjob(
    cronjob: RayCronJob | Mapping[str, Any], *, gates: FeatureGates = None
) -> list[FieldError]:
    """Every error KubeRay would raise for a RayCronJob (``ValidateRayCronJobSpec``).

    Name ≤ 36 chars; ``schedule`` without ``TZ`` and parseable by robfig ``ParseStandard``;
    ``timeZone`` non-empty and known; ``jobTemplate`` valid as a RayJob spec (messages
    prefixed ``"invalid RayJob template: "``, no annotations). All of source ``spec``.
    """
    model = _coerce(RayCronJob, cronjob)
    if isinstance(model, list):
        return model

    def cel(errs: list[FieldError]) -> None:
        if model.spec is not None:
            _cel_job_spec(model.spec.job_template, "spec.jobTemplate", errs)

    out = _crd_errors(model, cel)
    errors = _Errors("spec")
    if len(model.name) > MAX_RAYCRONJOB_NAME_LENGTH:
        errors.add(
            "metadata.name",
            f"RayCronJob name should be no more than {MAX_RAYCRONJOB_NAME_LENGTH} characters",
        )
    spec = model.spec or RayCronJobSpec(job_template=RayJobSpec(), schedule="")
    if "TZ" in spec.schedule:
        errors.add(
            "spec.schedule", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
        )
    else:
        try:
            parse_standard(spec.schedule)
        except ValueError as exc:
            errors.add("spec.schedule", f"invalid cron schedule: {exc}")
    if spec.time_zone is not None:
        if spec.time_zone == "":
            errors.add(
                "spec.timeZone",
                "timeZone must not be empty string, omit the field to use the local time zone "
                "of the KubeRay operator",
            )
        else:
            try:
                load_go_location(spec.time_zone)
            except ValueError as exc:
                errors.add("spec.timeZone", f"invalid time zone: {exc}")
    errors.extend(
        _wrap(
            _validate_job_spec(spec.job_template, {}, "spec.jobTemplate", gates),
            "invalid RayJob template: ",
        )
    )
    out.extend(errors.items)
    return out


def validate_raycronjob_update(
    old: RayCronJob | Mapping[str, Any],
    new: RayCronJob | Mapping[str, Any],
    *,
    gates: FeatureGates = None,
) -> list[FieldError]:
    """Errors of a RayCronJob update: the immutable fields inside ``jobTemplate``, then
    :func:`validate_raycronjob` of the new object."""
    old_model, new_model = _coerce(RayCronJob, old), _coerce(RayCronJob, new)
    if isinstance(new_model, list):
        return new_model
    out: list[FieldError] = []
    if (
        not isinstance(old_model, list)
        and old_model.spec is not None
        and new_model.spec is not None
    ):
        _job_transitions(
            old_model.spec.job_template, new_model.spec.job_template, "spec.jobTemplate", out
        )
    return out + validate_raycronjob(new_model, gates=gates)
