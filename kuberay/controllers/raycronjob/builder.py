"""The RayJob a RayCronJob creates for one tick (pure: cronjob dict + tick in, dict out).

KubeRay's child for tick ``t``: name ``<cronjob>-<t as Unix minutes>`` (so one tick
always maps to one name and a second create for it gets AlreadyExists), the
cronjob's namespace, label ``ray.io/cronjob-name=<cronjob>``, annotation
``ray.io/cronjob-scheduled-timestamp=<t in UTC, RFC 3339>``, a controller owner
reference to the RayCronJob, and as spec a deep copy of ``spec.jobTemplate`` taken
from the object as the apiserver returned it: every field survives, including ones
this build's typed model does not know.
"""

from __future__ import annotations

import copy
import datetime as dt

from kuberay.api.v1.constants import (
    API_VERSION,
    KIND_RAYCRONJOB,
    KIND_RAYJOB,
    RAY_CRONJOB_NAME_LABEL_KEY,
    RAY_CRONJOB_TIMESTAMP_ANNOTATION_KEY,
)
from kuberay.controllers.builders.owner import controller_owner_reference
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile.clock import format_time as rfc3339

__all__ = ["build_rayjob", "rayjob_name", "rfc3339"]


def rayjob_name(cronjob_name: str, tick: dt.datetime) -> str:
    """``<cronjob>-<tick.Unix() / 60>`` (Go's integer division, towards zero)."""
    seconds = int(tick.timestamp())
    minutes = abs(seconds) // 60 * (1 if seconds >= 0 else -1)
    return f"{cronjob_name}-{minutes}"


def build_rayjob(cronjob: Obj, tick: dt.datetime) -> Obj:
    """The RayJob for ``tick`` of ``cronjob`` (the raw object, with metadata uid)."""
    meta = cronjob["metadata"]
    template = k8s.spec(cronjob).get("jobTemplate") or {}
    return {
        "apiVersion": API_VERSION,
        "kind": KIND_RAYJOB,
        "metadata": {
            "name": rayjob_name(meta["name"], tick),
            "namespace": meta["namespace"],
            "labels": {RAY_CRONJOB_NAME_LABEL_KEY: meta["name"]},
            "annotations": {RAY_CRONJOB_TIMESTAMP_ANNOTATION_KEY: rfc3339(tick)},
            "ownerReferences": [controller_owner_reference(cronjob, KIND_RAYCRONJOB)],
        },
        "spec": copy.deepcopy(template),
    }
