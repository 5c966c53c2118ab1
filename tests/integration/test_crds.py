"""The ray.io CRDs on a real kube-apiserver.

* all four CRDs install (idempotently) and become Established;
* every sample custom resource -- KubeRay's reference samples (when available) and the
  project's valid ones -- is accepted, comes back with everything we sent, and survives
  ``structure`` -> ``unstructure`` exactly (compared with what the server returned); the
  unstructured object is also accepted back by the server unchanged;
* fields our schema and models do not know (a newer KubeRay's spec fields, a newer
  Kubernetes' container fields) are kept by the server and by our round trip.
"""

from __future__ import annotations

import contextlib
import copy
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from kuberay.api.v1 import MODELS, structure, unstructure
from kuberay.kube import Client
from kuberay.testing.crds import CRD_API_VERSION, crd_established, install_crds, load_crds
from tests.kuberay_samples import AVAILABLE, KUBERAY_SAMPLES, requires_kuberay_samples

ROOT = Path(__file__).resolve().parents[2]
OWN_SAMPLES = ROOT / "tests" / "samples"
REFERENCE_SAMPLES = KUBERAY_SAMPLES
RAY_KINDS = ("RayCluster", "RayJob", "RayService", "RayCronJob")
#: what the server adds to metadata on create (the rest of metadata must come back as sent)
SERVER_METADATA = {"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"}


def _ray_documents(directory: Path) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    if not directory.is_dir():
        return out
    for path in sorted(directory.glob("*.yaml")):
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if (
                isinstance(doc, dict)
                and str(doc.get("apiVersion", "")).startswith("ray.io/")
                and doc.get("kind") in RAY_KINDS
            ):
                out.append((f"{directory.name}/{path.name}#{index}", doc))
    return out


SAMPLES = (_ray_documents(REFERENCE_SAMPLES) if AVAILABLE else []) + _ray_documents(OWN_SAMPLES)
#: every sample, plus (where KubeRay's samples are absent) one case that skips saying so
SAMPLE_CASES = [pytest.param(i, doc, id=i) for i, doc in SAMPLES] + (
    []
    if AVAILABLE
    else [pytest.param("", {}, marks=requires_kuberay_samples, id="kuberay-samples")]
)


@dataclass
class Cluster:
    client: Client
    namespaces: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
async def cluster(kubeconfig_path: Path) -> AsyncIterator[Cluster]:
    """One client for the module, with the CRDs installed once."""
    env = Cluster(await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1))
    try:
        await install_crds(env.client)
        yield env
    finally:
        for name in env.namespaces:  # not awaited to the end: no namespace controller runs
            with contextlib.suppress(Exception):
                await env.client.delete("v1", "Namespace", name)
        await env.client.close()


@pytest.fixture
async def ns(cluster: Cluster) -> str:
    """A fresh namespace (deleted at the end of the module)."""
    name = f"t-crd-{uuid.uuid4().hex[:8]}"
    await cluster.client.create(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    cluster.namespaces.append(name)
    return name


def _assert_kept(sent: Any, got: Any, path: str = "") -> None:
    """Everything in ``sent`` is in ``got`` (which may hold more: defaults, server metadata).
    A ``null`` sent may be dropped (the apiserver prunes nulls of non-nullable fields)."""
    if sent is None:
        return
    if isinstance(sent, dict):
        assert isinstance(got, dict), f"{path}: sent an object, got {got!r}"
        for key, value in sent.items():
            if value is None:
                continue
            assert key in got, f"{path}.{key}: dropped by the server"
            _assert_kept(value, got[key], f"{path}.{key}")
    elif isinstance(sent, list):
        assert isinstance(got, list) and len(got) == len(sent), f"{path}: {sent!r} -> {got!r}"
        for i, (a, b) in enumerate(zip(sent, got, strict=True)):
            _assert_kept(a, b, f"{path}[{i}]")
    else:
        assert sent == got, f"{path}: sent {sent!r}, got {got!r}"


def _for_namespace(doc: dict[str, Any], namespace: str) -> dict[str, Any]:
    obj = copy.deepcopy(doc)
    obj.setdefault("metadata", {})["namespace"] = namespace
    return obj


def _round_trip(server_obj: dict[str, Any]) -> dict[str, Any]:
    before = copy.deepcopy(server_obj)
    model = structure(MODELS[server_obj["kind"]], server_obj)
    again = unstructure(model)
    assert server_obj == before, "structure must not modify its input"
    assert again == server_obj
    return again


async def test_crds_install_and_are_established(kclient: Client) -> None:
    await install_crds(kclient)
    await install_crds(kclient)  # idempotent: a second install is a no-op
    expected = {crd["metadata"]["name"]: crd for crd in load_crds()}
    assert set(expected) == {
        "rayclusters.ray.io",
        "rayjobs.ray.io",
        "rayservices.ray.io",
        "raycronjobs.ray.io",
    }
    for name, crd in expected.items():
        live = await kclient.get(CRD_API_VERSION, "CustomResourceDefinition", name)
        assert crd_established(live), live.get("status")
        assert live["spec"]["names"]["kind"] == crd["spec"]["names"]["kind"]
        served = {v["name"]: (v["served"], v["storage"]) for v in live["spec"]["versions"]}
        assert served["v1"] == (True, True)
        assert live["status"]["acceptedNames"]["plural"] == crd["spec"]["names"]["plural"]


@pytest.mark.parametrize(("sample_id", "doc"), SAMPLE_CASES)
async def test_sample_is_kept_and_round_trips(
    cluster: Cluster, ns: str, sample_id: str, doc: dict[str, Any]
) -> None:
    kclient, namespace = cluster.client, ns
    sent = _for_namespace(doc, namespace)
    created = await kclient.create(sent, field_manager="kuberay-tests")
    name = created["metadata"]["name"]
    got = await kclient.get(sent["apiVersion"], sent["kind"], name, namespace)
    _assert_kept(sent["spec"], got["spec"], "spec")
    for key, value in sent["metadata"].items():
        if key == "generateName":
            assert name.startswith(value)
        else:
            _assert_kept(value, got["metadata"][key], f"metadata.{key}")
    assert set(got["metadata"]) >= SERVER_METADATA
    again = _round_trip(got)
    # what we unstructure is accepted back as is: an update with it changes nothing
    updated = await kclient.update(again, field_manager="kuberay-tests")
    assert updated["spec"] == got["spec"]
    assert updated["metadata"]["generation"] == got["metadata"]["generation"]


def _minimal_cluster_spec() -> dict[str, Any]:
    return {
        "rayVersion": "2.52.0",
        "headGroupSpec": {
            "rayStartParams": {},
            "template": {
                "spec": {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}
            },
        },
        "workerGroupSpecs": [
            {
                "groupName": "workers",
                "replicas": 1,
                "minReplicas": 0,
                "maxReplicas": 2,
                "rayStartParams": {},
                "template": {
                    "spec": {
                        "containers": [{"name": "ray-worker", "image": "rayproject/ray:2.52.0"}]
                    }
                },
            }
        ],
    }


def _with_future_fields(spec: dict[str, Any]) -> dict[str, Any]:
    spec = copy.deepcopy(spec)
    spec["someFutureField"] = {"a": 1, "nested": ["x", {"b": True}]}
    head = spec["headGroupSpec"]
    head["someFutureHeadField"] = "kept"
    head["template"]["spec"]["containers"][0]["someNewK8sField"] = {"enabled": True}
    head["template"]["spec"]["someNewPodField"] = [1, 2, 3]
    spec["workerGroupSpecs"][0]["someFutureGroupField"] = 7
    return spec


FUTURE_PATHS = [
    ("someFutureField",),
    ("headGroupSpec", "someFutureHeadField"),
    ("headGroupSpec", "template", "spec", "containers", 0, "someNewK8sField"),
    ("headGroupSpec", "template", "spec", "someNewPodField"),
    ("workerGroupSpecs", 0, "someFutureGroupField"),
]


def _at(obj: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def _missing(obj: Any, path: tuple[str | int, ...]) -> bool:
    try:
        _at(obj, path)
    except (KeyError, IndexError):
        return True
    return False


@pytest.mark.parametrize("kind", ["RayCluster", "RayJob", "RayService"])
async def test_unknown_fields_are_pruned_as_in_kuberay(
    cluster: Cluster, ns: str, kind: str
) -> None:
    """KubeRay's CRDs carry no preserve-unknown-fields: unknown fields, in Ray's own types and
    in embedded Kubernetes types alike, are dropped by the apiserver; known ones stay."""
    kclient, namespace = cluster.client, ns
    cluster_spec = _with_future_fields(_minimal_cluster_spec())
    spec: dict[str, Any]
    if kind == "RayCluster":
        spec, base = cluster_spec, ()
    elif kind == "RayJob":
        spec = {"entrypoint": "python -c 'print(1)'", "rayClusterSpec": cluster_spec}
        base = ("rayClusterSpec",)
    else:
        spec = {"rayClusterConfig": cluster_spec}
        base = ("rayClusterConfig",)
    spec["someFutureTopLevelField"] = {"k": "v"}
    obj = {
        "apiVersion": "ray.io/v1",
        "kind": kind,
        "metadata": {"name": f"future-{uuid.uuid4().hex[:6]}", "namespace": namespace},
        "spec": spec,
    }
    await kclient.create(obj)
    got = await kclient.get("ray.io/v1", kind, obj["metadata"]["name"], namespace)
    assert "someFutureTopLevelField" not in got["spec"]
    for path in FUTURE_PATHS:
        full = (*base, *path)
        assert _missing(got["spec"], full), full
    head = _at(got["spec"], (*base, "headGroupSpec"))
    assert head["template"]["spec"]["containers"][0]["name"]
    model = structure(MODELS[kind], got)
    assert model.spec is not None and not model.spec.extra


async def test_embedded_schema_snapshot_matches_the_running_apiserver(cluster: Cluster) -> None:
    """The committed OpenAPI snapshot the CRD schemas are generated from is what the test
    apiserver serves (re-run hack/build/fetch_k8s_openapi.py and hack/docs/gen_crds.py when it
    is not)."""
    from hack.build import fetch_k8s_openapi as fetch
    from kuberay.api.v1.k8s_schemas import SNAPSHOT

    client = cluster.client
    version = (await client.request("GET", "/version", verb="get"))["gitVersion"]
    documents = [
        await client.request("GET", f"/openapi/v3/{group}", verb="get")
        for group in fetch.GROUP_PATHS
    ]
    assert fetch.render(fetch.build_snapshot(version, documents)) == SNAPSHOT.read_text()
