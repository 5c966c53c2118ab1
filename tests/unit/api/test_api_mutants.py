"""Issue 14: bad input always gets an answer.

Property: for every mutant of a KubeRay sample cluster (keys dropped, values of the wrong type,
odd strings; see ``tests/mutants.py``), ``validate_raycluster`` never raises, and when it
accepts the object every builder the RayCluster controller runs succeeds. Rejections name the
field path. 300 hypothesis examples per run (``MUTANT_EXAMPLES``); the offline harness
``hack/benchmarks/mutants.py`` runs thousands more.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kuberay.api.v1.validation import validate_raycluster, validate_rayjob, validate_rayservice
from tests.kuberay_samples import requires_kuberay_samples
from tests.mutants import (
    GATES,
    lifted_cluster,
    mutate,
    run_builders,
    sample_clusters,
    sample_documents,
)

SAMPLES = sample_clusters()
MUTANT_EXAMPLES = 300

pytestmark = requires_kuberay_samples


def _check(sample: tuple[str, dict[str, Any]], rng: random.Random) -> None:
    name, base = sample
    mutant, edits = mutate(base, rng)
    errors = validate_raycluster(mutant, gates=GATES)
    fatal = [e for e in errors if e.source != "webhook"]
    if fatal:
        assert all(e.path and e.message for e in fatal)
        return
    crashes = run_builders(mutant)
    assert not crashes, f"{name} {edits}: " + "; ".join(map(str, crashes))


@settings(
    max_examples=MUTANT_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.sampled_from(SAMPLES or [("none", {})]), st.randoms(use_true_random=False))
def test_validator_accepted_mutants_build(
    sample: tuple[str, dict[str, Any]], rng: random.Random
) -> None:
    _check(sample, rng)


@pytest.mark.parametrize("seed", range(3))
def test_every_sample_unmutated_is_accepted_and_builds(seed: int) -> None:
    for name, cluster in SAMPLES[seed::3]:
        fatal = [e for e in validate_raycluster(cluster, gates=GATES) if e.source != "webhook"]
        assert not fatal, (name, fatal)
        assert not run_builders(cluster), name


def _cluster_with_head_container(**fields: Any) -> dict[str, Any]:
    container = {"name": "ray-head", "image": "rayproject/ray:2.52.0", **fields}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "bad", "namespace": "default"},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [container]}},
            }
        },
    }


HEAD = "spec.headGroupSpec.template.spec.containers[0]"


@pytest.mark.parametrize(
    ("fields", "path", "needle"),
    [
        ({"ports": "x"}, f"{HEAD}.ports", "must be of type array"),
        ({"env": {"a": 1}}, f"{HEAD}.env", "must be of type array"),
        ({"resources": {"limits": {"cpu": "{}"}}}, f"{HEAD}.resources.limits[cpu]", "should match"),
        (
            {"resources": {"limits": {"cpu": [1]}}},
            f"{HEAD}.resources.limits[cpu]",
            "integer,string",
        ),
        ({"ports": [{"containerPort": "80"}]}, f"{HEAD}.ports[0].containerPort", "integer"),
        ({"ports": [{"name": "x"}]}, f"{HEAD}.ports[0].containerPort", "Required value"),
        ({"env": [{"name": "A"}, {"name": "A"}]}, f"{HEAD}.env[1]", "Duplicate value"),
        ({"args": [None]}, f"{HEAD}.args[0]", 'must be of type string: "null"'),
        (
            {"volumeMounts": [{"name": 1, "mountPath": "/x"}]},
            f"{HEAD}.volumeMounts[0].name",
            "string",
        ),
    ],
)
def test_wrongly_typed_embedded_fields_are_rejected_with_their_path(
    fields: dict[str, Any], path: str, needle: str
) -> None:
    errors = validate_raycluster(_cluster_with_head_container(**fields), gates=GATES)
    crd = [e for e in errors if e.source == "crd"]
    assert any(e.path == path and needle in e.message for e in crd), crd


def test_nulls_and_unknown_fields_are_not_errors_as_the_apiserver_drops_them() -> None:
    cluster = _cluster_with_head_container(
        resources={"limits": {"cpu": None}},
        someFutureField={"x": 1},
        env=[{"name": "A", "value": None}],
    )
    assert validate_raycluster(cluster, gates=GATES) == []
    assert run_builders(cluster) == []


JOBS_AND_SERVICES = sample_documents(("RayJob", "RayService"))


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.sampled_from(JOBS_AND_SERVICES or [("none", {})]), st.randoms(use_true_random=False))
def test_rayjob_and_rayservice_mutants_validate_without_raising_and_build(
    sample: tuple[str, dict[str, Any]], rng: random.Random
) -> None:
    """200 examples: the validators answer every mutant; an accepted one's cluster builds."""
    name, base = sample
    if not base:
        return
    mutant, edits = mutate(base, rng)
    validate = validate_rayjob if mutant["kind"] == "RayJob" else validate_rayservice
    fatal = [e for e in validate(mutant, gates=GATES) if e.source != "webhook"]
    if fatal:
        assert all(e.path and e.message for e in fatal)
        return
    cluster = lifted_cluster(mutant)
    if cluster is not None:
        assert not run_builders(cluster), f"{name} {edits}"


@pytest.mark.parametrize(
    "amount", ["9" * 5000, "1e1000000000", "1e-1000000000", "1." + "0" * 5000 + "1", "2e1001"]
)
def test_unusable_quantities_are_rejected_not_crashing_or_hanging(amount: str) -> None:
    cluster = _cluster_with_head_container(resources={"limits": {"cpu": amount}})
    errors = validate_raycluster(cluster, gates=GATES)
    assert [e.path for e in errors] == [f"{HEAD}.resources.limits[cpu]"]
    assert errors[0].source == "spec"


@pytest.mark.parametrize("amount", ["1e400", "-1e300", "999999999999999999999999e900", "1e-900"])
def test_huge_but_usable_quantities_build(amount: str) -> None:
    cluster = _cluster_with_head_container(
        resources={"limits": {"cpu": amount, "google.com/tpu": amount}}
    )
    assert validate_raycluster(cluster, gates=GATES) == []
    assert run_builders(cluster) == []
