"""Which deletion action a finished RayJob gets, and when it is looked at again."""

from __future__ import annotations

from typing import Any

import pytest

from kuberay.controllers.rayjob import machine as M
from kuberay.controllers.rayjob.deletion import after_terminal, select_rule
from tests.unit.controllers.rayjob.rayjob_fixtures import CLUSTER, ago, cluster, rayjob, world


def finished(job_status: str = "SUCCEEDED", end_ago: float = 0, **spec: Any) -> dict[str, Any]:
    deployment = "Complete" if job_status == "SUCCEEDED" else "Failed"
    status = {
        "jobDeploymentStatus": deployment,
        "jobStatus": job_status,
        "rayClusterName": CLUSTER,
        "endTime": ago(end_ago),
    }
    return rayjob(status, **spec)


def rule(policy: str, ttl: int = 0, **condition: str) -> dict[str, Any]:
    return {
        "policy": policy,
        "condition": {"ttlSeconds": ttl, **(condition or {"jobStatus": "SUCCEEDED"})},
    }


def rules(*items: dict[str, Any]) -> dict[str, Any]:
    return {"deletionStrategy": {"deletionRules": list(items)}, "shutdownAfterJobFinishes": False}


def suspended_cluster() -> dict[str, Any]:
    c = cluster()
    c["spec"]["workerGroupSpecs"][0]["suspend"] = True
    return c


@pytest.mark.parametrize(
    ("job", "seen", "kind", "requeue"),
    [
        # shutdownAfterJobFinishes: only the cluster, after the TTL (+2 s)
        (finished(), cluster(), M.DELETE_CLUSTER, None),
        (finished(ttlSecondsAfterFinished=10), cluster(), None, 12.0),
        (finished(end_ago=11, ttlSecondsAfterFinished=10), cluster(), M.DELETE_CLUSTER, None),
        (finished(), None, None, None),  # already gone: nothing to write
        (finished(clusterSelector={"ray.io/cluster": CLUSTER}), cluster(), None, None),
        (finished(shutdownAfterJobFinishes=False), cluster(), None, None),
        # legacy onSuccess / onFailure
        (
            finished(
                shutdownAfterJobFinishes=False,
                deletionStrategy={
                    "onSuccess": {"policy": "DeleteWorkers"},
                    "onFailure": {"policy": "DeleteSelf"},
                },
            ),
            cluster(),
            M.SUSPEND_WORKERS,
            None,
        ),
        (
            finished(
                "FAILED",
                shutdownAfterJobFinishes=False,
                deletionStrategy={
                    "onSuccess": {"policy": "DeleteWorkers"},
                    "onFailure": {"policy": "DeleteSelf"},
                },
            ),
            cluster(),
            M.DELETE_SELF,
            None,
        ),
        (
            finished(
                shutdownAfterJobFinishes=False,
                deletionStrategy={
                    "onSuccess": {"policy": "DeleteWorkers"},
                    "onFailure": {"policy": "DeleteSelf"},
                },
            ),
            suspended_cluster(),
            None,
            None,
        ),
        (
            finished(
                shutdownAfterJobFinishes=False,
                deletionStrategy={
                    "onSuccess": {"policy": "DeleteNone"},
                    "onFailure": {"policy": "DeleteNone"},
                },
            ),
            cluster(),
            None,
            None,
        ),
        # deletion rules
        (finished(**rules(rule("DeleteCluster"))), cluster(), M.DELETE_CLUSTER, None),
        (finished("FAILED", **rules(rule("DeleteCluster"))), cluster(), None, None),
        (
            finished(
                "FAILED",
                **rules(rule("DeleteCluster", jobDeploymentStatus="Failed")),
            ),
            cluster(),
            M.DELETE_CLUSTER,
            None,
        ),
        (
            finished(**rules(rule("DeleteWorkers"), rule("DeleteCluster"), rule("DeleteSelf"))),
            cluster(),
            M.DELETE_SELF,
            None,
        ),
        (
            finished(
                **rules(rule("DeleteWorkers"), rule("DeleteCluster", 5), rule("DeleteSelf", 10))
            ),
            cluster(),
            M.SUSPEND_WORKERS,
            7.0,
        ),
        (
            finished(
                end_ago=6,
                **rules(rule("DeleteWorkers"), rule("DeleteCluster", 5), rule("DeleteSelf", 10)),
            ),
            suspended_cluster(),
            M.DELETE_CLUSTER,
            6.0,
        ),
        (
            finished(
                end_ago=6,
                **rules(rule("DeleteWorkers"), rule("DeleteCluster", 5), rule("DeleteSelf", 10)),
            ),
            cluster(deletionTimestamp=ago(1)),
            None,
            6.0,
        ),
        (
            finished(
                end_ago=11,
                **rules(rule("DeleteWorkers"), rule("DeleteCluster", 5), rule("DeleteSelf", 10)),
            ),
            None,
            M.DELETE_SELF,
            None,
        ),
    ],
)
def test_after_terminal(
    job: dict[str, Any], seen: Any, kind: str | None, requeue: float | None
) -> None:
    action, wait = after_terminal(job, world(job, cluster=seen), True, False)
    assert (action.kind if action else None) == kind
    assert wait == requeue


def test_delete_rayjob_cr_after_job_finishes() -> None:
    action, _ = after_terminal(finished(), world(finished(), cluster=cluster()), True, True)
    assert action is not None and action.kind == M.DELETE_SELF


def test_strategy_ignored_without_the_gate() -> None:
    job = finished(**{**rules(rule("DeleteSelf")), "shutdownAfterJobFinishes": True})
    action, _ = after_terminal(job, world(job, cluster=cluster()), False, False)
    assert action is not None and action.kind == M.DELETE_CLUSTER


def test_most_destructive_rule_first_listed_wins_ties() -> None:
    a, b = rule("DeleteCluster", 1), rule("DeleteCluster", 2)
    assert select_rule([rule("DeleteNone"), a, rule("DeleteWorkers"), b]) is a
    assert select_rule([a, rule("DeleteSelf")])["policy"] == "DeleteSelf"
