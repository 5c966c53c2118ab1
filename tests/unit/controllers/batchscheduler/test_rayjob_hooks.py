"""Where the RayJob state machine calls the batch scheduler (KubeRay's rayjob_controller):
prepare in Initializing before the cluster exists; release on Suspending/Retrying once the
cluster and submitter are gone (before the status is reset) and on Complete/Failed."""

from __future__ import annotations

from kuberay.controllers.rayjob.context import RayJobSettings
from kuberay.controllers.rayjob.machine import World
from tests.unit.controllers.rayjob.rayjob_fixtures import CLUSTER, decide, rayjob, world

VOLCANO = RayJobSettings(batch_scheduler="volcano")


def kinds(settings: RayJobSettings, job: dict[str, object], world: World) -> list[str]:
    return [a.kind for a in decide(job, world, settings).actions]  # type: ignore[arg-type]


def test_initializing_prepares_the_gang_before_creating_the_cluster() -> None:
    job = rayjob({"jobDeploymentStatus": "Initializing", "rayClusterName": CLUSTER})
    assert kinds(VOLCANO, job, world(job)) == ["BatchSubmit", "CreateCluster"]
    assert kinds(RayJobSettings(), job, world(job)) == ["CreateCluster"]


def test_suspending_releases_once_the_cluster_is_gone() -> None:
    job = rayjob({"jobDeploymentStatus": "Suspending", "rayClusterName": CLUSTER}, suspend=True)
    cluster = {"metadata": {"name": CLUSTER, "namespace": "ns"}}
    assert "BatchCleanup" not in kinds(VOLCANO, job, world(job, cluster=cluster))
    d = decide(job, world(job), VOLCANO)
    assert [(a.kind, a.name) for a in d.actions] == [("BatchCleanup", CLUSTER)]
    assert d.status["jobDeploymentStatus"] == "Suspended" and d.status["rayClusterName"] == ""


def test_terminal_states_release_on_every_pass() -> None:
    job = rayjob(
        {"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED", "rayClusterName": CLUSTER},
        shutdownAfterJobFinishes=False,
    )
    d = decide(job, world(job), VOLCANO)
    assert [(a.kind, a.name) for a in d.actions][-1] == ("BatchCleanupTerminal", CLUSTER)
