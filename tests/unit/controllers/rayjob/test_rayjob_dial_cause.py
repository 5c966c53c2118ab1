"""A RayJob whose dashboard cannot be dialled says why: the wait message names the cause,
the timeouts append the last error to KubeRay's message, and each change of either calls
for one Warning Event (none when nothing changed)."""

from __future__ import annotations

from typing import Any

from kuberay.controllers.dashboard import BadResponse, DashboardUnreachable, JobInfo, Observed
from kuberay.controllers.dashboard.errors import Cause
from kuberay.controllers.rayjob.machine import World, last_check_error
from kuberay.controllers.rayjob.status import LAST_ERROR
from kuberay.controllers.rayjob.why import WAIT_PREFIX, overlay, warning_event
from tests.unit.controllers.rayjob.rayjob_fixtures import (
    ago,
    cluster,
    decide,
    head_service,
    info,
    not_found,
    rayjob,
    rayjob_service,
    running,
    settings,
    submitter,
    world,
)

REFUSED = (
    "dashboard address 10.244.0.5:8265 refused: not in the allowed networks 127.0.0.0/8 "
    "(set KUBERAY_DASHBOARD_ALLOWED_NETWORKS or run the operator in the cluster)"
)


def refused_by_guard() -> Observed[JobInfo]:
    error = DashboardUnreachable(
        "dashboard of RayCluster default/rc: not dialling 10.244.0.5:8265: ...",
        cause=Cause.NOT_ALLOWED,
        address="10.244.0.5:8265",
        detail="127.0.0.0/8",
    )
    return Observed(value=None, error=error, finished_at=0.0)


def live_world(**kw: Any) -> World:
    base: dict[str, Any] = {
        "cluster": cluster(),
        "cluster_head_service": head_service(),
        "rayjob_service": rayjob_service(),
        "submitter": submitter(),
    }
    base.update(kw)
    return world(**base)


def test_wait_message_names_the_refused_address_and_the_setting() -> None:
    job = rayjob(running())
    new = running(message="")
    assert overlay(job, running(message=""), new, live_world(job_info=refused_by_guard()), None)
    assert new["message"].startswith(WAIT_PREFIX)
    assert new["message"].endswith(f"is unreachable: {REFUSED}")


def test_wait_message_names_an_auth_refusal() -> None:
    bad = BadResponse("GetJobInfo: refused (401)", status=401, address="10.0.0.5:8265")
    new = running(message="")
    overlay(
        rayjob(running()),
        running(),
        new,
        live_world(job_info=Observed[JobInfo](value=None, error=bad, finished_at=0.0)),
        None,
    )
    assert "fails the job status checks" in new["message"]
    assert "10.0.0.5:8265" in new["message"] and "HTTP 401" in new["message"]


def test_warning_event_on_a_new_cause_only() -> None:
    w = live_world(job_info=refused_by_guard())
    job = rayjob(running())
    old = running(message="")
    new = running(message="")
    overlay(job, old, new, w, None)
    event = warning_event(old, new, w)
    assert event is not None
    reason, message = event
    assert reason == "DashboardAddressNotAllowed"
    assert REFUSED in message and not message.startswith(WAIT_PREFIX)
    # the same world again: same message, no Event
    again = dict(new)
    assert not overlay(job, new, again, w, None)
    assert warning_event(new, again, w) is None
    # a Ray message or a cleared wait message is no Event
    assert warning_event(new, running(message=""), live_world(job_info=info("RUNNING"))) is None


def test_timeout_appends_the_last_error() -> None:
    job = rayjob(running(jobStatusCheckFailureStartTime=ago(301)))
    d = decide(job, live_world(job_info=refused_by_guard()), settings())
    message = d.status["message"]
    assert message.startswith("Job status checks have been failing since ")
    assert message.endswith(f"exceeded timeout of 300s{LAST_ERROR}{REFUSED}")
    event = warning_event(job["status"], d.status, live_world(job_info=refused_by_guard()))
    assert event == ("JobStatusCheckTimeoutExceeded", message)


def test_submitter_timeout_appends_the_last_error() -> None:
    w = live_world(submitter=submitter(("Complete", 31)), job_info=refused_by_guard())
    d = decide(rayjob(running()), w, settings())
    assert d.status["jobDeploymentStatus"] == "Failed"
    assert d.status["message"].endswith(
        f"did not reach terminal state within 30s{LAST_ERROR}{REFUSED}"
    )


def test_last_error_falls_back_to_the_wait_message() -> None:
    # after an operator restart no lookup has finished: the wait message still says why
    status = running(message=f"{WAIT_PREFIX}the Ray dashboard of RayCluster rc is unreachable: x")
    assert last_check_error(status, live_world()) == (
        "the Ray dashboard of RayCluster rc is unreachable: x"
    )
    assert last_check_error(running(message="Job is running"), live_world()) is None
    # HTTPMode: the job is unknown and the submission failed: the submission's failure
    submit: Observed[str] = Observed(
        value=None,
        error=DashboardUnreachable("s", cause=Cause.TIMEOUT, address="a:1", detail="2s"),
        finished_at=0.0,
    )
    assert last_check_error(running(), live_world(job_info=not_found(), submit=submit)) == (
        "dashboard address a:1: no answer within 2s"
    )
    # nothing failing, nothing shown: KubeRay's message alone
    d = decide(
        rayjob(running(jobStatusCheckFailureStartTime=ago(301))),
        live_world(job_info=info("RUNNING")),
        settings(),
    )
    assert d.status["message"].endswith("exceeded timeout of 300s")
