"""The HTTPMode (re)submission is an action ``decide`` returns: ``observe`` only reads the
poller's outcomes (it sends nothing), and the action's handler sends it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import pytest

from kuberay.controllers.dashboard import JobInfo
from kuberay.controllers.dashboard.poller import Observed
from kuberay.controllers.dashboard.target import DashboardTarget
from kuberay.controllers.rayjob import machine as M
from kuberay.controllers.rayjob.children import Children
from kuberay.controllers.rayjob.context import Ctx, RayJobSettings
from kuberay.controllers.rayjob.reconciler import RayJobReconciler
from kuberay.controllers.rayjob.world import World
from tests.unit.controllers.rayjob.rayjob_fixtures import (
    CLUSTER,
    NAME,
    NS,
    cluster,
    head_service,
    info,
    not_found,
    rayjob,
    rayjob_service,
    running,
    unreachable,
)

KEY = (NS, NAME)
#: The calls that send something to a Ray dashboard.
SENDING = {"submit_job", "stop_job"}


class _Dashboard:
    """A JobDashboard recording each call as (method, args); ``lookup`` is what
    ``job_info`` answers, ``submitted`` what ``submit_outcome`` answers."""

    on_result: Any = None

    def __init__(
        self, lookup: Observed[JobInfo] | None, submitted: Observed[str] | None = None
    ) -> None:
        self.lookup = lookup
        self.submitted = submitted
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def job_info(self, *a: Any, **k: Any) -> Observed[JobInfo] | None:
        self.calls.append(("job_info", a, k))
        return self.lookup

    def submit_job(self, *a: Any, **k: Any) -> Observed[str] | None:
        self.calls.append(("submit_job", a, k))
        return self.submitted

    def submit_outcome(self, *a: Any, **k: Any) -> Observed[str] | None:
        self.calls.append(("submit_outcome", a, k))
        return self.submitted

    def stop_job(self, *a: Any, **k: Any) -> None:
        self.calls.append(("stop_job", a, k))

    def stop_outcome(self, *a: Any, **k: Any) -> None:
        self.calls.append(("stop_outcome", a, k))

    def forget(self, *a: Any, **k: Any) -> None:
        self.calls.append(("forget", a, k))

    def names(self) -> list[str]:
        return [name for name, _, _ in self.calls]


class _Cache:
    """The informer cache of a Running RayJob whose cluster and Services exist."""

    def __init__(self, objects: Mapping[tuple[str, str], dict[str, Any]]) -> None:
        self.objects = objects

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Any:
        return self.objects.get((kind, name))

    def list(self, *a: Any, **k: Any) -> list[Any]:
        return []


def _ctx(dashboard: _Dashboard) -> Ctx:
    objects = {
        ("RayCluster", CLUSTER): cluster(),
        ("Service", f"{CLUSTER}-head-svc"): head_service(),
        ("Service", f"{NAME}-head-svc"): rayjob_service(),
    }
    return Ctx(
        client=cast(Any, None),
        cache=cast(Any, _Cache(objects)),
        recorder=cast(Any, None),
        settings=RayJobSettings(),
        dashboard=dashboard,
    )


def _http_job() -> dict[str, Any]:
    return rayjob(running(), submissionMode="HTTPMode")


def _pass(dashboard: _Dashboard) -> tuple[Ctx, World, M.Decision, list[str]]:
    """observe (recording what it called), then decide."""
    ctx = _ctx(dashboard)
    job = _http_job()
    world = RayJobReconciler(ctx).observe(job, KEY)
    observed = dashboard.names()
    return ctx, world, M.decide(job, world, ctx.settings), observed


@pytest.mark.parametrize("submitted", [None, unreachable("refused")])
async def test_a_job_the_dashboard_does_not_know_is_submitted_by_a_decided_action(
    submitted: Any,
) -> None:
    lookup = Observed[JobInfo](value=None, error=not_found().error, finished_at=5.0, started_at=4.0)
    dashboard = _Dashboard(lookup, submitted)
    ctx, world, decision, observed = _pass(dashboard)

    assert not SENDING & set(observed), observed  # observe sends nothing
    assert "submit_outcome" in observed and world.submit is submitted
    assert world.spec.submission_mode == "HTTPMode"
    assert [(a.kind, a.name) for a in decision.actions] == [(M.SUBMIT_JOB, "job-xyz")]

    await Children(ctx, _http_job(), world).run(decision.actions)
    sent = [(a, k) for name, a, k in dashboard.calls[len(observed) :] if name == "submit_job"]
    assert len(sent) == 1
    (owner, target, body, job_id), kwargs = sent[0]
    assert owner == KEY and job_id == "job-xyz"
    assert target == DashboardTarget.from_cluster(cluster())
    assert body["entrypoint"] == "python -c 'print(1)'"
    assert kwargs == {"not_found_at": 4.0}  # a success before that lookup is out of date


def test_a_job_the_dashboard_knows_is_not_submitted() -> None:
    dashboard = _Dashboard(info("RUNNING"))
    _, world, decision, observed = _pass(dashboard)
    assert not SENDING & set(observed)
    assert "submit_outcome" not in observed and world.submit is None
    assert M.SUBMIT_JOB not in [a.kind for a in decision.actions]


def test_every_action_kind_decide_can_return_has_a_handler() -> None:
    """An action kind without a handler would stop the reconcile with a KeyError."""
    import inspect
    import re

    from kuberay.controllers.rayjob import world as w
    from kuberay.controllers.rayjob.children import HANDLERS

    source = inspect.getsource(w).split("# ----- actions", 1)[1].split("@attrs.frozen", 1)[0]
    kinds = {getattr(w, n) for n in re.findall(r"^([A-Z_]+): Final = ", source, re.M)}
    assert len(kinds) >= 15, sorted(kinds)
    assert kinds == set(HANDLERS), sorted(kinds ^ set(HANDLERS))
