"""Generated CustomResourceDefinitions: up to date, structural, and faithful to KubeRay's."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from kuberay_api_testutil import REPO

from kuberay.api.v1.crd import crd_filename, generate_crd, generate_crds, render_yaml

GEN_CRDS = REPO / "hack" / "docs" / "gen_crds.py"
CRD_DIR = REPO / "manifests" / "crds"
KINDS = ("RayCluster", "RayJob", "RayService", "RayCronJob")
PRESERVE = "x-kubernetes-preserve-unknown-fields"


def _load_gen_crds() -> ModuleType:
    from hack.docs import gen_crds

    return gen_crds


def _schema(kind: str) -> dict[str, Any]:
    crd = generate_crd(kind)
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def _nodes(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    yield path, schema
    for name, sub in schema.get("properties", {}).items():
        yield from _nodes(sub, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        yield from _nodes(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _nodes(schema["additionalProperties"], f"{path}{{}}")


def _at(schema: dict[str, Any], dotted: str) -> dict[str, Any]:
    node = schema
    for part in dotted.split("."):
        node = node["items"] if part == "[]" else node["properties"][part]
    return node


def test_committed_crds_are_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, str(GEN_CRDS), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_check_detects_stale_files(tmp_path: Path) -> None:
    module = _load_gen_crds()
    assert module.main(["--out", str(tmp_path)]) == 0
    assert module.main(["--check", "--out", str(tmp_path)]) == 0
    target = tmp_path / crd_filename("RayJob")
    target.write_text(target.read_text() + "# edited\n")
    assert module.main(["--check", "--out", str(tmp_path)]) == 1
    (tmp_path / crd_filename("RayCluster")).unlink()
    assert module.main(["--check", "--out", str(tmp_path)]) == 1


def test_file_names_and_sizes() -> None:
    files = generate_crds()
    assert sorted(files) == [
        "ray.io_rayclusters.yaml",
        "ray.io_raycronjobs.yaml",
        "ray.io_rayjobs.yaml",
        "ray.io_rayservices.yaml",
    ]
    for crd in files.values():
        # Stored as JSON: KubeRay's are 0.22-0.42 MB; etcd's request limit is 1.5 MiB.
        assert len(json.dumps(crd, separators=(",", ":")).encode()) < 750_000
        assert yaml.load(render_yaml(crd), Loader=yaml.CSafeLoader) == crd


@pytest.mark.parametrize("kind", KINDS)
def test_crd_identity(kind: str) -> None:
    crd = generate_crd(kind)
    plural = kind.lower() + "s"
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["metadata"]["name"] == f"{plural}.ray.io"
    assert crd["spec"]["group"] == "ray.io"
    assert crd["spec"]["scope"] == "Namespaced"
    assert crd["spec"]["names"] == {
        "categories": ["all"],
        "kind": kind,
        "listKind": f"{kind}List",
        "plural": plural,
        "singular": kind.lower(),
    }
    versions = crd["spec"]["versions"]
    v1 = versions[0]
    assert (v1["name"], v1["served"], v1["storage"]) == ("v1", True, True)
    for version in versions:
        assert version["subresources"] == {"status": {}}  # no scale subresource
    if kind == "RayCronJob":
        assert len(versions) == 1
    else:
        alpha = versions[1]
        assert (alpha["name"], alpha["served"], alpha["storage"], alpha["deprecated"]) == (
            "v1alpha1",
            True,
            False,
            True,
        )
        assert "will be unavailable in KubeRay 1.9" in alpha["deprecationWarning"]


def test_printer_columns() -> None:
    def columns(kind: str) -> list[tuple[str, str, str, int]]:
        version = generate_crd(kind)["spec"]["versions"][0]
        return [
            (c["name"], c["type"], c["jsonPath"], c.get("priority", 0))
            for c in version["additionalPrinterColumns"]
        ]

    assert columns("RayCluster") == [
        ("desired workers", "integer", ".status.desiredWorkerReplicas", 0),
        ("available workers", "integer", ".status.availableWorkerReplicas", 0),
        ("cpus", "string", ".status.desiredCPU", 0),
        ("memory", "string", ".status.desiredMemory", 0),
        ("gpus", "string", ".status.desiredGPU", 0),
        ("tpus", "string", ".status.desiredTPU", 1),
        ("status", "string", ".status.state", 0),
        ("age", "date", ".metadata.creationTimestamp", 0),
        ("head pod IP", "string", ".status.head.podIP", 1),
        ("head service IP", "string", ".status.head.serviceIP", 1),
    ]
    assert [c[0] for c in columns("RayJob")] == [
        "job status",
        "deployment status",
        "ray cluster name",
        "start time",
        "end time",
        "age",
    ]
    assert columns("RayService") == [
        ("service status", "string", ".status.serviceStatus", 0),
        ("num serve endpoints", "string", ".status.numServeEndpoints", 0),
    ]
    assert columns("RayCronJob")[-1] == ("suspend", "boolean", ".spec.suspend", 0)


@pytest.mark.parametrize("kind", KINDS)
def test_schema_is_structural(kind: str) -> None:
    for path, node in _nodes(_schema(kind)):
        if "anyOf" in node:
            assert node.get("x-kubernetes-int-or-string") is True, path
            continue
        assert "type" in node, f"{path} has no type"
        if (
            node["type"] == "object"
            and "properties" not in node
            and "additionalProperties" not in node
        ):
            assert node.get(PRESERVE) is True or path == ".metadata", f"{path} would prune all"
        for key in node.get("required", []):
            assert key in node["properties"], f"{path} requires unknown {key}"


@pytest.mark.parametrize("kind", KINDS)
def test_unknown_fields_are_pruned_everywhere_as_in_kuberay(kind: str) -> None:
    for path, node in _nodes(_schema(kind)):
        assert PRESERVE not in node, path


def test_embedded_kubernetes_types_are_typed() -> None:
    schema = _schema("RayCluster")
    template = _at(schema, "spec.headGroupSpec.template")
    assert set(template["properties"]) == {"metadata", "spec"}
    assert set(_at(template, "metadata")["properties"]) == {
        "annotations",
        "finalizers",
        "labels",
        "name",
        "namespace",
    }
    containers = _at(template, "spec.containers")
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["items"]["required"] == ["name"]
    ports = _at(template, "spec.containers.[].ports")
    assert ports["type"] == "array"
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert ports["items"]["properties"]["protocol"] == {"type": "string", "default": "TCP"}
    assert ports["items"]["properties"]["containerPort"] == {"type": "integer", "format": "int32"}
    cpu = _at(template, "spec.containers.[].resources.limits")["additionalProperties"]
    assert cpu["x-kubernetes-int-or-string"] is True and "pattern" in cpu
    env = _at(template, "spec.containers.[].env")
    assert env["type"] == "array" and env["items"]["required"] == ["name"]
    for dotted in (
        "spec.headGroupSpec.headService",
        "spec.autoscalerOptions.resources",
        "spec.autoscalerOptions.securityContext",
        "spec.gcsFaultToleranceOptions.redisPassword.valueFrom",
        "spec.workerGroupSpecs.[].template",
        "spec.autoscalerOptions.env.[]",
        "spec.networkPolicy.head.ingressRules.[]",
    ):
        node = _at(schema, dotted)
        assert node["type"] == "object" and node["properties"], dotted
    job = _schema("RayJob")
    assert _at(job, "spec.submitterPodTemplate.spec.containers.[].ports.[].containerPort")
    assert _at(job, "spec.rayClusterSpec.headGroupSpec.template.spec.volumes.[].name")


def test_embedded_schemas_come_from_the_apiserver_snapshot() -> None:
    from kuberay.api.v1.k8s_schemas import ROOTS, embedded_schema, kubernetes_version

    assert kubernetes_version().startswith("v1.")
    for name in ROOTS:
        assert embedded_schema(name) == embedded_schema(name)
        assert PRESERVE not in json.dumps(embedded_schema(name))


def test_types_enums_defaults_and_required() -> None:
    cluster = _schema("RayCluster")
    group = _at(cluster, "spec.workerGroupSpecs.[]")
    assert group["required"] == ["groupName", "template"]
    assert group["properties"]["maxReplicas"] == {
        "type": "integer",
        "format": "int32",
        "default": 2147483647,
    }
    assert group["properties"]["numOfHosts"]["default"] == 1
    assert group["properties"]["rayStartParams"] == {
        "type": "object",
        "additionalProperties": {"type": "string"},
    }
    assert _at(cluster, "spec")["required"] == ["headGroupSpec"]
    assert _at(cluster, "spec.authOptions.mode")["enum"] == ["disabled", "token"]
    assert _at(cluster, "spec.networkPolicy.mode")["default"] == "DenyAll"
    assert _at(cluster, "spec.networkPolicy.workerGroups")["x-kubernetes-list-map-keys"] == [
        "groupName"
    ]
    size = _at(cluster, "spec.gcsFaultToleranceOptions.storage.size")
    assert size["x-kubernetes-int-or-string"] is True
    assert _at(cluster, "status.lastUpdateTime") == {
        "type": "string",
        "format": "date-time",
        "nullable": True,
    }
    conditions = _at(cluster, "status.conditions")
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["items"]["required"] == [
        "lastTransitionTime",
        "message",
        "reason",
        "status",
        "type",
    ]
    job = _schema("RayJob")
    assert _at(job, "spec.submissionMode") == {"type": "string", "default": "K8sJobMode"}
    assert _at(job, "spec.preRunningDeadlineSeconds")["minimum"] == 1
    assert _at(job, "spec.entrypointNumCpus") == {"type": "number"}
    rules = _at(job, "spec.deletionStrategy.deletionRules")
    assert (rules["minItems"], rules["x-kubernetes-list-type"]) == (1, "atomic")
    assert _at(job, "spec.deletionStrategy.deletionRules.[].condition.jobStatus")["enum"] == [
        "SUCCEEDED",
        "FAILED",
    ]
    assert _at(job, "status.succeeded")["default"] == 0
    service = _schema("RayService")
    options = _at(service, "spec.upgradeStrategy.clusterUpgradeOptions")
    assert options["required"] == ["gatewayClassName", "intervalSeconds", "stepSizePercent"]
    assert options["properties"]["maxSurgePercent"]["default"] == 100
    assert _at(service, "spec.upgradeStrategy.type") == {"type": "string"}  # open, as KubeRay
    assert _at(service, "spec.rayClusterDeletionDelaySeconds")["minimum"] == 0
    cron = _schema("RayCronJob")
    assert _at(cron, "spec")["required"] == ["jobTemplate", "schedule"]
    assert _at(cron, "spec.timeZone")["minLength"] == 1


def test_cel_rules() -> None:
    def rules(schema: dict[str, Any], dotted: str) -> list[str]:
        return [r["message"] for r in _at(schema, dotted)["x-kubernetes-validations"]]

    managed_by = [
        "the managedBy field is immutable",
        "the managedBy field value must be either 'ray.io/kuberay-operator' or "
        "'kueue.x-k8s.io/multikueue'",
    ]
    assert rules(_schema("RayCluster"), "spec.managedBy") == managed_by
    assert rules(_schema("RayJob"), "spec.managedBy") == managed_by
    assert rules(_schema("RayJob"), "spec.rayClusterSpec.managedBy") == managed_by
    assert rules(_schema("RayService"), "spec.managedBy") == managed_by
    assert rules(_schema("RayCronJob"), "spec.jobTemplate.rayClusterSpec.managedBy") == managed_by
    assert rules(_schema("RayCluster"), "spec.gcsFaultToleranceOptions.backend") == [
        "gcsFaultToleranceOptions.backend is immutable"
    ]
    assert len(rules(_schema("RayJob"), "spec.deletionStrategy")) == 2
    assert len(rules(_schema("RayJob"), "spec.deletionStrategy.deletionRules.[].condition")) == 2
    managed = _at(_schema("RayCluster"), "spec.managedBy")["x-kubernetes-validations"]
    assert managed[0]["rule"] == "self == oldSelf"
