"""Validation of RayCluster, RayJob, RayService and RayCronJob exactly as KubeRay's.

Every public ``validate_*`` function returns **all** problems at once as a list of
:class:`FieldError` (``path`` like ``spec.workerGroupSpecs[0].minReplicas``, ``message``,
``source``). Each message is the text KubeRay itself reports for that rule (so it can go
straight into an event note or ``status.message``), and errors are listed in KubeRay's check
order: the first error of a given source is the one KubeRay's controller would report.

``source`` tells who enforces a rule in KubeRay:

* ``crd``      -- the kube-apiserver, from the CRD schema (types, enums, ``minimum``,
  required fields, CEL rules, and the typed schemas of embedded Kubernetes objects). Listed
  first; KubeRay's controllers never see such objects. Checked here too, as defence in depth
  (older CRDs installed, objects that never went through the apiserver).
* ``metadata`` -- controller metadata checks (event ``Invalid<Kind>Metadata``).
* ``spec``     -- controller spec checks (event ``Invalid<Kind>Spec``), plus values that are
  well-typed but that the builders cannot use (unparsable quantities ...).
* ``upgrade``  -- RayCluster ``ValidateRayClusterUpgradeOptions`` (event InvalidRayClusterSpec).
* ``status``   -- controller status sanity checks (event ``Invalid<Kind>Status``).
* ``webhook``  -- only the optional validating webhook (unique worker group names).

Rules that depend on feature gates take ``gates`` (see :mod:`kuberay.api.v1.gates`).
Inputs may be models or plain dicts; a dict that does not even structure yields its
structural errors (source ``crd``) only. No validator raises on any JSON-like input.

Modules: :mod:`.errors` (FieldError), :mod:`.common` (structural checks), :mod:`.schema`
(embedded-type schema checks), :mod:`.raycluster` (+ :mod:`.raycluster_features`), :mod:`.rayjob`,
:mod:`.rayservice`, :mod:`.raycronjob`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kuberay.lazy import lazy_exports

if TYPE_CHECKING:
    from kuberay.api.v1.validation.errors import ErrorSource, FieldError, first_error
    from kuberay.api.v1.validation.raycluster import (
        raycluster_spec_warnings,
        validate_raycluster,
        validate_raycluster_update,
    )
    from kuberay.api.v1.validation.raycronjob import validate_raycronjob, validate_raycronjob_update
    from kuberay.api.v1.validation.rayjob import validate_rayjob, validate_rayjob_update
    from kuberay.api.v1.validation.rayservice import validate_rayservice, validate_rayservice_update

_EXPORTS: dict[str, tuple[str, ...]] = {
    "kuberay.api.v1.validation.errors": (
        "ErrorSource",
        "FieldError",
        "first_error",
    ),
    "kuberay.api.v1.validation.raycluster": (
        "raycluster_spec_warnings",
        "validate_raycluster",
        "validate_raycluster_update",
    ),
    "kuberay.api.v1.validation.raycronjob": (
        "validate_raycronjob",
        "validate_raycronjob_update",
    ),
    "kuberay.api.v1.validation.rayjob": (
        "validate_rayjob",
        "validate_rayjob_update",
    ),
    "kuberay.api.v1.validation.rayservice": (
        "validate_rayservice",
        "validate_rayservice_update",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "ErrorSource",
    "FieldError",
    "first_error",
    "raycluster_spec_warnings",
    "validate_raycluster",
    "validate_raycluster_update",
    "validate_raycronjob",
    "validate_raycronjob_update",
    "validate_rayjob",
    "validate_rayjob_update",
    "validate_rayservice",
    "validate_rayservice_update",
]
