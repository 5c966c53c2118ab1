"""Bad RayJobs always get an answer from the RayJob builders.

Property: for every mutant of a KubeRay sample RayJob (keys dropped, values of the wrong type,
odd strings; see ``tests/mutants.py``) that ``validate_rayjob`` accepts, each RayJob builder
either returns an object or raises :class:`RayJobBuildError` with a message (which the RayJob
controller reports) - never another exception - and the RayCluster it creates builds.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kuberay.api.v1.validation import validate_rayjob
from kuberay.controllers.builders.service import build_rayjob_head_service
from kuberay.controllers.builders.submit_command import RayJobBuildError, build_job_submit_command
from kuberay.controllers.builders.submitter import build_submitter_job
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.rayjob.rayjob_cluster import build_rayjob_cluster
from kuberay.controllers.rayjob.submit_body import build_job_submit_body
from tests.kuberay_samples import requires_kuberay_samples
from tests.mutants import GATES, mutate, run_builders, sample_documents

JOBS = sample_documents(("RayJob",))
MODES = ("K8sJobMode", "SidecarMode", "HTTPMode")

pytestmark = requires_kuberay_samples


def _as_seen_by_the_controller(job: dict[str, Any], mode: str) -> dict[str, Any]:
    out = copy.deepcopy(job)
    out["metadata"].update(uid="uid-1")
    spec = out["spec"]
    spec["submissionMode"] = mode
    if mode == "SidecarMode":
        spec.pop("submitterPodTemplate", None)
        spec.pop("submitterConfig", None)
        spec.pop("clusterSelector", None)
    out["status"] = {
        "jobId": "mutant-x7k2m",
        "rayClusterName": "mutant-bc2df",
        "dashboardURL": "mutant-bc2df-head-svc.default.svc.cluster.local:8265",
    }
    return out


def _existing_cluster() -> dict[str, Any]:
    container = {"name": "ray-head", "image": "rayproject/ray:2.52.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "existing", "namespace": "default", "uid": "uid-2"},
        "spec": {"headGroupSpec": {"template": {"spec": {"containers": [container]}}}},
    }


def _answers(build: Any) -> Any:
    """The builder's object, or None when it refused with a RayJobBuildError."""
    try:
        return build()
    except RayJobBuildError as err:
        assert str(err)
        return None


def _check(job: dict[str, Any]) -> None:
    options = BuildOptions()
    gates = {**GATES, "SidecarSubmitterRestart": True}
    spec = job["spec"]
    cluster: dict[str, Any] | None = None
    if isinstance(spec.get("rayClusterSpec"), dict):
        cluster = _answers(
            lambda: build_rayjob_cluster(job, "mutant-bc2df", gates=gates, options=options)
        )
        if cluster is not None:
            assert not run_builders(cluster, gates)
            _answers(lambda: build_rayjob_head_service(job, cluster, options=options))
    else:
        cluster = _existing_cluster()
    if cluster is not None:
        _answers(lambda: build_submitter_job(job, cluster, gates=gates, options=options))
    _answers(lambda: build_job_submit_command(job, submission_mode="K8sJobMode", gates=gates))
    _answers(lambda: build_job_submit_body(job))


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.sampled_from(JOBS or [("none", {})]),
    st.sampled_from(MODES),
    st.randoms(use_true_random=False),
)
def test_validator_accepted_rayjob_mutants_build_or_refuse(
    sample: tuple[str, dict[str, Any]], mode: str, rng: random.Random
) -> None:
    _name, base = sample
    if not base:
        return
    mutant, _edits = mutate(_as_seen_by_the_controller(base, mode), rng)
    if [e for e in validate_rayjob(mutant, gates=GATES) if e.source != "webhook"]:
        return
    before = copy.deepcopy(mutant)
    _check(mutant)
    assert mutant == before


@pytest.mark.parametrize("mode", MODES)
def test_every_sample_builds_in_every_mode(mode: str) -> None:
    for _name, base in JOBS:
        job = _as_seen_by_the_controller(base, mode)
        if mode == "SidecarMode" and not job["spec"].get("rayClusterSpec"):
            continue
        if [e for e in validate_rayjob(job, gates=GATES) if e.source != "webhook"]:
            continue
        _check(job)


@pytest.mark.parametrize("field", ["entrypointNumCpus", "entrypointNumGpus"])
def test_a_number_no_float32_holds_is_refused_not_crashing(field: str) -> None:
    """The validator lets 1e39 through (JSON number); Go could not even decode it."""
    _name, base = JOBS[0]
    job = _as_seen_by_the_controller(base, "K8sJobMode")
    job["spec"][field] = 1e39
    assert not [e for e in validate_rayjob(job, gates=GATES) if e.source != "webhook"]
    with pytest.raises(RayJobBuildError, match="float32"):
        build_job_submit_command(job, submission_mode="K8sJobMode", gates={})
    with pytest.raises(RayJobBuildError, match="float32"):
        build_job_submit_body(job)


def test_null_sub_objects_are_treated_as_absent() -> None:
    _name, base = JOBS[0]
    job = _as_seen_by_the_controller(base, "K8sJobMode")
    job["spec"]["submitterPodTemplate"] = {
        "metadata": None,
        "spec": {"containers": [{"name": "s", "image": "x"}], "restartPolicy": "Never"},
    }
    submitter = build_submitter_job(job, _existing_cluster(), gates={}, options=BuildOptions())
    template = submitter["spec"]["template"]
    assert template["metadata"]["labels"]["ray.io/originated-from-crd"] == "RayJob"
    job["spec"]["submitterPodTemplate"] = {"spec": None}
    with pytest.raises(RayJobBuildError, match="no container"):
        build_submitter_job(job, _existing_cluster(), gates={}, options=BuildOptions())
    sidecar = _as_seen_by_the_controller(base, "SidecarMode")
    sidecar["spec"]["rayClusterSpec"]["headGroupSpec"] = None
    with pytest.raises(RayJobBuildError, match="head container"):
        build_rayjob_cluster(sidecar, "c", gates={}, options=BuildOptions())
