"""The Ray dashboard client, kept off the reconcile workers.

Reconcilers only touch :class:`DashboardPoller`: it never awaits the network; calls run in
bounded background tasks and a changed outcome re-enqueues the owner (RayJob/RayService).
"""

from kuberay.controllers.dashboard.errors import (
    BadResponse,
    DashboardError,
    DashboardUnreachable,
    DuplicateSubmissionId,
    JobNotFound,
)
from kuberay.controllers.dashboard.models import (
    JobInfo,
    ServeApplicationStatus,
    ServeDeploymentStatus,
    ServeDetails,
)

__all__ = [
    "BadResponse",
    "DashboardError",
    "DashboardUnreachable",
    "DuplicateSubmissionId",
    "JobInfo",
    "JobNotFound",
    "ServeApplicationStatus",
    "ServeDeploymentStatus",
    "ServeDetails",
]
