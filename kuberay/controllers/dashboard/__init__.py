"""The Ray dashboard client, kept off the reconcile workers.

Reconcilers only touch :class:`DashboardPoller`: it never awaits the network; calls run in
bounded background tasks and a changed outcome re-enqueues the owner (RayJob/RayService).
:class:`DashboardClientFactory` decides where to dial (in-cluster DNS, a ready endpoint checked
by the dial guard, or the apiserver proxy) and with which token; :class:`DashboardClient` speaks
Ray's Jobs and Serve REST APIs and raises only :class:`DashboardError` subclasses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kuberay.lazy import lazy_exports

if TYPE_CHECKING:
    from kuberay.controllers.dashboard.client import (
        DashboardClient,
    )
    from kuberay.controllers.dashboard.errors import (
        BadResponse,
        DashboardError,
        DashboardUnreachable,
        DuplicateSubmissionId,
        JobNotFound,
    )
    from kuberay.controllers.dashboard.factory import (
        DashboardClientFactory,
    )
    from kuberay.controllers.dashboard.guard import (
        ALLOWED_NETWORKS_ENV,
        DialGuard,
    )
    from kuberay.controllers.dashboard.models import (
        JobInfo,
        ServeDetails,
    )
    from kuberay.controllers.dashboard.poller import (
        DashboardPoller,
        ObjectKey,
        Observed,
    )
    from kuberay.controllers.dashboard.setup import (
        setup_dashboard_poller,
    )
    from kuberay.controllers.dashboard.target import (
        DashboardTarget,
        ServeProxyTarget,
    )

# Each name is imported from its module when first used (an idle operator loads few).
_EXPORTS = {
    "kuberay.controllers.dashboard.client": ("DashboardClient",),
    "kuberay.controllers.dashboard.errors": (
        "BadResponse",
        "DashboardError",
        "DashboardUnreachable",
        "DuplicateSubmissionId",
        "JobNotFound",
    ),
    "kuberay.controllers.dashboard.factory": ("DashboardClientFactory",),
    "kuberay.controllers.dashboard.guard": ("ALLOWED_NETWORKS_ENV", "DialGuard"),
    "kuberay.controllers.dashboard.models": (
        "JobInfo",
        "ServeDetails",
    ),
    "kuberay.controllers.dashboard.poller": ("DashboardPoller", "ObjectKey", "Observed"),
    "kuberay.controllers.dashboard.setup": ("setup_dashboard_poller",),
    "kuberay.controllers.dashboard.target": ("DashboardTarget", "ServeProxyTarget"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

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
    "ServeDetails",
    "ServeProxyTarget",
    "setup_dashboard_poller",
]
