"""The Ray dashboard client, kept off the reconcile workers.

Reconcilers only touch :class:`DashboardPoller`: it never awaits the network; calls run in
bounded background tasks and a changed outcome re-enqueues the owner (RayJob/RayService).
:class:`DashboardClientFactory` decides where to dial (in-cluster DNS, a ready endpoint checked
by the dial guard, or the apiserver proxy) and with which token; :class:`DashboardClient` speaks
Ray's Jobs and Serve REST APIs and raises only :class:`DashboardError` subclasses.
"""

from kuberay.controllers.dashboard.client import DashboardClient
from kuberay.controllers.dashboard.errors import (
    BadResponse,
    DashboardError,
    DashboardUnreachable,
    DuplicateSubmissionId,
    JobNotFound,
)
from kuberay.controllers.dashboard.factory import DashboardClientFactory
from kuberay.controllers.dashboard.guard import ALLOWED_NETWORKS_ENV, DialGuard
from kuberay.controllers.dashboard.models import (
    JobInfo,
    ServeApplicationStatus,
    ServeDeploymentStatus,
    ServeDetails,
)
from kuberay.controllers.dashboard.poller import DashboardPoller, ObjectKey, Observed
from kuberay.controllers.dashboard.setup import cached_secret_reader, setup_dashboard_poller
from kuberay.controllers.dashboard.target import DashboardTarget, ServeProxyTarget

__all__ = [
    "ALLOWED_NETWORKS_ENV",
    "BadResponse",
    "DashboardClient",
    "DashboardClientFactory",
    "DashboardError",
    "DashboardPoller",
    "DashboardTarget",
    "DashboardUnreachable",
    "DialGuard",
    "DuplicateSubmissionId",
    "JobInfo",
    "JobNotFound",
    "ObjectKey",
    "Observed",
    "ServeApplicationStatus",
    "ServeDeploymentStatus",
    "ServeDetails",
    "ServeProxyTarget",
    "cached_secret_reader",
    "setup_dashboard_poller",
]
