"""The RayJob builders against what KubeRay's own Go code produced for the same RayJob.

``data/kuberay_rayjob_go_golden.json.gz`` records KubeRay's Go output (KubeRay ``feeaf72``; see
``data/README.md``): for every RayJob sample, every RayCronJob job template and crafted
variants (submission modes, the SidecarSubmitterRestart gate, ENABLE_LOGIN_SHELL, submitter
templates, runtime envs, metadata and Ray versions, entrypoint resources, auth, long names, head
Service options, clusterSelector) it records both submit commands, the RayCluster, the head
pod the RayCluster controller builds from it (SidecarMode: with the submitter container), the
submitter Job, the RayJob head Service and the HTTPMode submit body, or the error KubeRay
returns instead.

Commands are compared token for token. Objects are compared on Go's JSON view (empty values
dropped, quantities canonical; see ``builders_testlib.normalize``), without TypeMeta, the fake
client's ``resourceVersion`` and the Go zero-valued RayCluster ``status``. The submit body is
compared as parsed JSON, with its keys in Go's order at every level. Error messages are
compared exactly except where they quote a YAML/JSON parser (PyYAML and Go word their syntax
errors differently) or a Go panic (our builders raise a typed error instead).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from builders_testlib import load_gz, normalize

from kuberay.controllers.builders.pod import build_head_pod
from kuberay.controllers.builders.service import build_rayjob_head_service
from kuberay.controllers.builders.submit_command import RayJobBuildError, build_job_submit_command
from kuberay.controllers.builders.submitter import build_submitter_job
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.rayjob.rayjob_cluster import build_rayjob_cluster
from kuberay.controllers.rayjob.submit_body import build_job_submit_body

GOLDEN: list[dict[str, Any]] = load_gz("kuberay_rayjob_go_golden.json.gz")
MODES = ("K8sJobMode", "SidecarMode")


def _record(objects: dict[str, Any], key: str, build: Callable[[], Any]) -> Any:
    try:
        objects[key] = build()
    except RayJobBuildError as err:
        objects[key + "Err"] = str(err)
        return None
    return objects[key]


def _build_all(case: dict[str, Any]) -> dict[str, Any]:
    rayjob = case["rayjob"]
    gates: dict[str, bool] = case.get("features") or {}
    options = BuildOptions.from_env(case.get("env") or {})
    objects: dict[str, Any] = {}
    for mode in MODES:
        _record(
            objects,
            f"command:{mode}",
            lambda mode=mode: build_job_submit_command(rayjob, submission_mode=mode, gates=gates),
        )
    cluster = None
    if rayjob["spec"].get("rayClusterSpec") is not None:
        cluster = _record(
            objects,
            "rayCluster",
            lambda: build_rayjob_cluster(rayjob, case["clusterName"], gates=gates, options=options),
        )
        if cluster is not None:
            head_options = BuildOptions.from_env(case.get("env") or {}, kuberay_version="nightly")
            objects["headPod"] = build_head_pod(cluster, head_options, gates)
    elif case.get("cluster"):
        cluster = case["cluster"]
    if cluster is not None:
        _record(
            objects,
            "submitterJob",
            lambda: build_submitter_job(rayjob, cluster, gates=gates, options=options),
        )
        if not rayjob["spec"].get("clusterSelector"):
            objects["headService"] = build_rayjob_head_service(rayjob, cluster, options=options)
    _record(objects, "submitBody", lambda: build_job_submit_body(rayjob))
    return objects


def _comparable(objects: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in objects.items():
        if key.endswith("Err") or key.startswith("command:") or key == "submitBody":
            continue
        obj = normalize(copy.deepcopy(value))
        if key != "headPod":  # KubeRay's pods carry TypeMeta, its other objects do not
            obj.pop("apiVersion", None)
            obj.pop("kind", None)
        obj.pop("status", None)
        obj.get("metadata", {}).pop("resourceVersion", None)
        if key == "headService" and "ports" in obj.get("spec", {}):
            obj["spec"]["ports"].sort(key=lambda p: p.get("name", ""))
        result[key] = obj
    return result


def _errors_match(ours: str, theirs: str) -> bool:
    if theirs.startswith("panic:"):
        return True
    for parser_error in ("yaml: ", "invalid character"):
        if parser_error in theirs:
            return ours.startswith(theirs.split(parser_error)[0])
    return ours == theirs


@pytest.mark.parametrize("entry", GOLDEN, ids=[e["case"]["name"] for e in GOLDEN])
def test_matches_kuberay_go_output(entry: dict[str, Any]) -> None:
    case = entry["case"]
    expected = entry["expected"]
    before = copy.deepcopy(case)
    ours = _build_all(case)
    assert case == before  # builders never mutate their input

    assert sorted(ours) == sorted(expected)
    for key in expected:
        if key.endswith("Err"):
            assert _errors_match(ours[key], expected[key]), (key, ours[key], expected[key])
    for mode in MODES:
        if f"command:{mode}" in expected:
            assert ours[f"command:{mode}"] == expected[f"command:{mode}"]
    if "submitBody" in expected:
        go_body = json.loads(expected["submitBody"])
        assert ours["submitBody"] == go_body
        # Same keys in the same order at every level, same numbers once printed and re-read.
        assert json.dumps(ours["submitBody"]) == json.dumps(go_body)
        assert json.loads(json.dumps(ours["submitBody"])) == go_body
    assert _comparable(ours) == _comparable(expected)


def test_golden_set_covers_every_feature() -> None:
    names = {e["case"]["name"] for e in GOLDEN}
    for expected in (
        "mode:SidecarMode:full-options",
        "mode:HTTPMode:full-options",
        "gate:SidecarMode:restart=True:login=True",
        "submitter-template:no-command",
        "submitter-template:with-command",
        "submitter-config:backoffLimit=5",
        "runtime-env:go-scalars:K8sJobMode",
        "metadata:rayVersion=2.5.0",
        'auth:{"enableK8sTokenAuth": true, "mode": "token"}:K8sJobMode',
        "long-name:70:SidecarMode",
        "cluster-selector:K8sJobMode",
    ):
        assert expected in names
    samples = [n for n in names if n.startswith("sample:")]
    assert len(samples) >= 25
    assert any(n.endswith(":jobTemplate") for n in samples)
