"""What happens to a finished RayJob (Complete or Failed), as a pure function.

In KubeRay's order: a RayJob on an existing cluster (``clusterSelector``) deletes
nothing; with the ``RayJobDeletionPolicy`` gate and a ``deletionStrategy``, its
``deletionRules`` or the legacy ``onSuccess``/``onFailure`` pair decide; else
``shutdownAfterJobFinishes`` deletes the RayCluster (or, with
``DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true``, the RayJob) ``ttlSecondsAfterFinished``
after ``status.endTime``; else nothing.

Deletion rules: a rule applies when its condition's ``jobStatus`` equals
``status.jobStatus`` (or its ``jobDeploymentStatus`` equals the deployment status);
it is due ``ttlSeconds`` after ``status.endTime``. Among due rules whose effect is not
already there (cluster gone or being deleted; every worker group suspended), ONE is
run per pass, the most destructive (DeleteSelf > DeleteCluster > DeleteWorkers >
DeleteNone; the first listed wins a tie); the pass then requeues 2 s after the
earliest rule not yet due, or not at all. Every action is idempotent against the
cache, so a pass over an unchanged world writes nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Final

from kuberay.api.v1.rules import ttl_seconds_after_finished
from kuberay.controllers.rayjob import status as S
from kuberay.controllers.rayjob.world import (
    DELETE_CLUSTER,
    DELETE_SELF,
    SUSPEND_WORKERS,
    Action,
    World,
)
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile.clock import parse_time

POLICY_DELETE_CLUSTER: Final = "DeleteCluster"
POLICY_DELETE_WORKERS: Final = "DeleteWorkers"
POLICY_DELETE_SELF: Final = "DeleteSelf"
POLICY_DELETE_NONE: Final = "DeleteNone"

#: How destructive each policy is (higher runs first).
IMPACT: Final = {
    POLICY_DELETE_SELF: 4,
    POLICY_DELETE_CLUSTER: 3,
    POLICY_DELETE_WORKERS: 2,
    POLICY_DELETE_NONE: 1,
}
#: Added to every "until the next deadline" requeue.
REQUEUE_MARGIN: Final = 2.0


def _cluster_deleted(world: World) -> bool:
    cluster = world.cluster
    return cluster is None or bool(k8s.meta(cluster).get("deletionTimestamp"))


def _workers_suspended(world: World) -> bool:
    if _cluster_deleted(world):
        return True
    assert world.cluster is not None
    groups = k8s.spec(world.cluster).get("workerGroupSpecs") or []
    return all(g.get("suspend") is True for g in groups)


def policy_done(policy: str, world: World) -> bool:
    """The state ``policy`` leads to is already there (KubeRay
    ``isDeletionActionCompleted``; DeleteSelf is never done while the RayJob exists)."""
    if policy == POLICY_DELETE_WORKERS:
        return _workers_suspended(world)
    if policy == POLICY_DELETE_CLUSTER:
        return _cluster_deleted(world)
    return policy == POLICY_DELETE_NONE


def policy_action(policy: str, job: Obj, world: World) -> Action | None:
    """The action of ``policy``, or None when there is nothing (left) to do."""
    cluster = str(k8s.status(job).get("rayClusterName") or "")
    if policy == POLICY_DELETE_SELF:
        return Action(DELETE_SELF, str(k8s.meta(job).get("name")))
    if policy == POLICY_DELETE_CLUSTER and not _cluster_deleted(world):
        return Action(DELETE_CLUSTER, cluster)
    if policy == POLICY_DELETE_WORKERS and not _workers_suspended(world):
        return Action(SUSPEND_WORKERS, cluster)
    return None


def rule_matches(rule: Obj, status: Obj) -> bool:
    """A deletion rule's condition holds for ``status``."""
    cond = rule.get("condition") or {}
    if cond.get("jobStatus") is not None:
        return bool(cond["jobStatus"] == (status.get("jobStatus") or ""))
    return bool(cond.get("jobDeploymentStatus") == (status.get("jobDeploymentStatus") or ""))


def select_rule(rules: Sequence[Obj]) -> Obj:
    """The most destructive rule of ``rules`` (the first listed wins a tie)."""
    best = rules[0]
    for rule in rules[1:]:
        if IMPACT.get(str(rule.get("policy")), 0) > IMPACT.get(str(best.get("policy")), 0):
            best = rule
    return best


def _until(deadline: dt.datetime, now: dt.datetime) -> float:
    return (deadline - now).total_seconds() + REQUEUE_MARGIN


def deletion_rules(job: Obj, world: World) -> tuple[Action | None, float | None]:
    """(the one action to run now, requeue) for ``spec.deletionStrategy.deletionRules``."""
    status = k8s.status(job)
    end = parse_time(status.get("endTime")) or world.now
    overdue: list[Obj] = []
    next_due: dt.datetime | None = None
    rules = (k8s.spec(job).get("deletionStrategy") or {}).get("deletionRules") or []
    for rule in rules:
        if not rule_matches(rule, status):
            continue
        ttl = int((rule.get("condition") or {}).get("ttlSeconds") or 0)
        due = end + dt.timedelta(seconds=ttl)
        if world.now < due:
            if next_due is None or due < next_due:
                next_due = due
            continue
        if policy_done(str(rule.get("policy")), world):
            continue
        overdue.append(rule)
    action = None
    if overdue:
        action = policy_action(str(select_rule(overdue).get("policy")), job, world)
    return action, (None if next_due is None else _until(next_due, world.now))


def _after_ttl(job: Obj, world: World) -> float | None:
    """Seconds to wait until ``endTime + ttlSecondsAfterFinished`` (+2 s), or None once
    it has passed."""
    status = k8s.status(job)
    end = parse_time(status.get("endTime")) or world.now
    ttl = ttl_seconds_after_finished(k8s.spec(job))
    due = end + dt.timedelta(seconds=ttl)
    return _until(due, world.now) if due > world.now else None


def legacy_policy(job: Obj, world: World) -> tuple[Action | None, float | None]:
    """``deletionStrategy.onSuccess`` / ``onFailure`` after ``ttlSecondsAfterFinished``."""
    status = k8s.status(job)
    strategy = k8s.spec(job).get("deletionStrategy") or {}
    job_status = status.get("jobStatus")
    if job_status == S.JOB_SUCCEEDED:
        policy = (strategy.get("onSuccess") or {}).get("policy")
    elif job_status == S.JOB_FAILED:
        policy = (strategy.get("onFailure") or {}).get("policy")
    else:
        return None, None
    if not policy or policy == POLICY_DELETE_NONE:
        return None, None
    wait = _after_ttl(job, world)
    if wait is not None:
        return None, wait
    return policy_action(str(policy), job, world), None


def shutdown_after_finish(
    job: Obj, world: World, delete_rayjob: bool
) -> tuple[Action | None, float | None]:
    """``shutdownAfterJobFinishes``: the RayCluster (or the RayJob) after the TTL."""
    wait = _after_ttl(job, world)
    if wait is not None:
        return None, wait
    if delete_rayjob:
        return policy_action(POLICY_DELETE_SELF, job, world), None
    return policy_action(POLICY_DELETE_CLUSTER, job, world), None


def after_terminal(
    job: Obj, world: World, deletion_policy_gate: bool, delete_rayjob: bool
) -> tuple[Action | None, float | None]:
    """(action, requeue) for a Complete/Failed RayJob; see the module docstring."""
    spec = k8s.spec(job)
    if world.spec.uses_cluster_selector:
        return None, None
    strategy = spec.get("deletionStrategy")
    if deletion_policy_gate and strategy:
        if strategy.get("deletionRules") is not None:
            return deletion_rules(job, world)
        return legacy_policy(job, world)
    if spec.get("shutdownAfterJobFinishes"):
        return shutdown_after_finish(job, world, delete_rayjob)
    return None, None
