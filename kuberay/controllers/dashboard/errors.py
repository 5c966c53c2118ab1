"""Typed failures of a Ray dashboard call. Nothing else escapes the dashboard client.

``str(error)`` is written for the user who reads it in a log line or a RayJob/RayService
status message: it says which call failed, where, and what to look at.
"""

from __future__ import annotations

__all__ = [
    "BadResponse",
    "DashboardError",
    "DashboardUnreachable",
    "DuplicateSubmissionId",
    "JobNotFound",
]


class DashboardError(Exception):
    """Base class: a dashboard call did not produce its result."""


class JobNotFound(DashboardError):
    """``GET /api/jobs/{id}`` answered 404: the cluster has no such job (KubeRay: "not exist")."""

    def __init__(self, job_id: str) -> None:
        super().__init__(f"Job {job_id} does not exist on the cluster")
        self.job_id = job_id


class DuplicateSubmissionId(DashboardError):
    """``POST /api/jobs/`` refused the submission id because a job already uses it.

    KubeRay treats this as "already submitted" (the id is ours, so the job is ours).
    """

    def __init__(self, submission_id: str) -> None:
        super().__init__(
            f"submission ID '{submission_id}' already used, Please use a different submission_id"
        )
        self.submission_id = submission_id


class DashboardUnreachable(DashboardError):
    """No answer: connection refused or reset, timeout, no ready endpoint behind the head
    Service, missing auth Secret, or an address the dial guard refuses."""


class BadResponse(DashboardError):
    """The dashboard answered, but not as expected: an unexpected HTTP status (``status``) or a
    body that does not decode (``status`` is then the HTTP status of that answer)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status
