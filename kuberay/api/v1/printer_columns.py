"""The columns ``kubectl get`` prints for each ray.io kind: the CRDs'
``additionalPrinterColumns`` (KubeRay's, column for column), defined once here.

:mod:`kuberay.api.v1.crd` writes them into the CRDs; the API server's dashboard shows the
same columns in its lists. ``priority`` > 0 columns are the ``-o wide`` ones.
"""

from __future__ import annotations

import copy
from typing import Any

from kuberay.api.v1.constants import KIND_RAYCLUSTER, KIND_RAYCRONJOB, KIND_RAYJOB, KIND_RAYSERVICE

#: Where every object's creation time is: the ``age`` column's path.
CREATION_TIMESTAMP_PATH = ".metadata.creationTimestamp"


def _column(
    name: str, json_path: str, col_type: str = "string", priority: int = 0
) -> dict[str, Any]:
    column: dict[str, Any] = {"jsonPath": json_path, "name": name, "type": col_type}
    if priority:
        column["priority"] = priority
    return column


_PRINTER_COLUMNS: dict[str, list[dict[str, Any]]] = {
    KIND_RAYCLUSTER: [
        _column("desired workers", ".status.desiredWorkerReplicas", "integer"),
        _column("available workers", ".status.availableWorkerReplicas", "integer"),
        _column("cpus", ".status.desiredCPU"),
        _column("memory", ".status.desiredMemory"),
        _column("gpus", ".status.desiredGPU"),
        _column("tpus", ".status.desiredTPU", priority=1),
        _column("status", ".status.state"),
        _column("age", CREATION_TIMESTAMP_PATH, "date"),
        _column("head pod IP", ".status.head.podIP", priority=1),
        _column("head service IP", ".status.head.serviceIP", priority=1),
    ],
    KIND_RAYJOB: [
        _column("job status", ".status.jobStatus"),
        _column("deployment status", ".status.jobDeploymentStatus"),
        _column("ray cluster name", ".status.rayClusterName"),
        _column("start time", ".status.startTime"),
        _column("end time", ".status.endTime"),
        _column("age", CREATION_TIMESTAMP_PATH, "date"),
    ],
    KIND_RAYSERVICE: [
        _column("service status", ".status.serviceStatus"),
        _column("num serve endpoints", ".status.numServeEndpoints"),
    ],
    KIND_RAYCRONJOB: [
        _column("schedule", ".spec.schedule"),
        _column("timezone", ".spec.timeZone"),
        _column("last schedule", ".status.lastScheduleTime", "date"),
        _column("age", CREATION_TIMESTAMP_PATH, "date"),
        _column("suspend", ".spec.suspend", "boolean"),
    ],
}


def printer_columns(kind: str) -> list[dict[str, Any]]:
    """``kind``'s ``additionalPrinterColumns`` (a fresh copy), in the CRD's order;
    ``KeyError`` for a kind that is not one of the four."""
    return copy.deepcopy(_PRINTER_COLUMNS[kind])
