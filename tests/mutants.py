"""Hostile-user mutants of sample RayClusters, and the builders the RayCluster controller runs.

Shared by the property test (``tests/unit/api/test_api_mutants.py``), the offline harness
(``hack/benchmarks/mutants.py``) and the integration test (``tests/integration/raycluster/
test_raycluster_mutants.py``).

A mutant is a sample RayCluster (KubeRay's reference samples; RayJob/RayService cluster specs are
lifted into a RayCluster) with one to three edits at random paths of its ``spec`` or metadata
annotations: a key dropped, a value replaced by a value of the wrong type or by an odd string
(``ports: "x"``, ``env: {a: 1}``, ``limits.cpu: "{}"``, ``replicas: "abc"``), an unknown key
added, a list emptied or an item duplicated.
"""

from __future__ import annotations

import copy
import random
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.kuberay_samples import KUBERAY_SAMPLES

REFERENCE_SAMPLES = KUBERAY_SAMPLES

Obj = dict[str, Any]
PathT = tuple[str | int, ...]

#: Replacement values: wrong types and odd strings.
ODD_VALUES: tuple[Any, ...] = (
    "x",
    "",
    "abc",
    "{}",
    "[]",
    "-1",
    "1e400",
    "0x10",
    " ",
    "null",
    "NaN",
    "9999999999999999999999Pi",
    "1e1000000000",
    "999999999999999999999999e900",
    "1.5.6",
    "\u00e9\u4e2d",
    "a b",
    "'unterminated",
    '{"CPU": "x"}',
    0,
    -1,
    1,
    65536,
    2**40,
    1.5,
    -0.5,
    True,
    False,
    None,
    {},
    [],
    {"a": 1},
    ["x"],
    [1, 2],
    [{}],
    {"name": 1},
)

#: Gates every mutant is validated and built with (all of KubeRay's optional features on).
GATES: dict[str, bool] = {
    "RayClusterStatusConditions": True,
    "RayJobDeletionPolicy": True,
    "RayMultiHostIndexing": True,
    "RayServiceIncrementalUpgrade": True,
    "GCSFaultToleranceEmbeddedStorage": True,
    "RayClusterMTLS": True,
    "RayClusterHistoryServer": True,
    "RayClusterNetworkPolicy": True,
}


def _cluster_spec_of(doc: Obj) -> Any:
    spec = doc.get("spec") or {}
    kind = doc.get("kind")
    if kind == "RayCluster":
        return spec
    if kind == "RayService":
        return spec.get("rayClusterConfig")
    if kind == "RayJob":
        return spec.get("rayClusterSpec")
    return None


#: CRD defaults of a worker group, applied by the apiserver before anyone sees the object.
WORKER_GROUP_DEFAULTS: dict[str, int] = {
    "replicas": 0,
    "minReplicas": 0,
    "maxReplicas": 2147483647,
    "numOfHosts": 1,
}


def _with_crd_defaults(spec: Obj) -> Obj:
    out = copy.deepcopy(spec)
    for group in out.get("workerGroupSpecs") or []:
        if isinstance(group, dict):
            for key, value in WORKER_GROUP_DEFAULTS.items():
                group.setdefault(key, value)
    return out


def sample_clusters(directory: Path = REFERENCE_SAMPLES) -> list[tuple[str, Obj]]:
    """``(id, RayCluster)`` for every cluster spec in the sample manifests (sorted by file), with
    the worker-group CRD defaults applied."""
    found: list[tuple[str, Obj]] = []
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob("*.yaml")):
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if not isinstance(doc, dict) or not str(doc.get("apiVersion", "")).startswith("ray."):
                continue
            spec = _cluster_spec_of(doc)
            if not isinstance(spec, dict) or not spec:
                continue
            meta = doc.get("metadata") or {}
            annotations = {
                k: v for k, v in (meta.get("annotations") or {}).items() if k.startswith("ray.io/")
            }
            cluster: Obj = {
                "apiVersion": "ray.io/v1",
                "kind": "RayCluster",
                "metadata": {"name": "mutant", "namespace": "default", "uid": "0000-1111"},
                "spec": _with_crd_defaults(spec),
            }
            if annotations:
                cluster["metadata"]["annotations"] = annotations
            found.append((f"{path.name}#{index}", cluster))
    return found


def _paths(value: Any, prefix: PathT) -> Iterator[PathT]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, str(key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*prefix, i))


def mutable_paths(cluster: Obj) -> list[PathT]:
    """Every path under ``spec`` and ``metadata.annotations`` (not the roots themselves)."""
    out = [p for p in _paths(cluster.get("spec"), ("spec",)) if len(p) > 1]
    annotations = (cluster.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        out.extend(p for p in _paths(annotations, ("metadata", "annotations")) if len(p) > 2)
    return out


def _get(root: Any, path: PathT) -> Any:
    for part in path:
        root = root[part]
    return root


def format_path(path: PathT) -> str:
    """``spec.workerGroupSpecs[0].replicas`` style."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def mutate_once(cluster: Obj, rng: random.Random) -> str:
    """Apply one random edit in place; a description of it."""
    paths = mutable_paths(cluster)
    if not paths:
        return "nothing to mutate"
    path = rng.choice(paths)
    parent = _get(cluster, path[:-1])
    key = path[-1]
    current = parent[key]
    op = rng.random()
    where = format_path(path)
    if op < 0.2 and isinstance(parent, dict):
        del parent[key]
        return f"drop {where}"
    if op < 0.25 and isinstance(current, dict):
        current[rng.choice(("x", "unknownField", "ports", "name"))] = rng.choice(ODD_VALUES)
        return f"add key under {where}"
    if op < 0.3 and isinstance(current, list):
        if current and rng.random() < 0.5:
            current.append(copy.deepcopy(current[0]))
            return f"duplicate {where}[0]"
        current.clear()
        return f"empty {where}"
    value = copy.deepcopy(rng.choice(ODD_VALUES))
    parent[key] = value
    return f"{where} = {value!r}"


def mutate(cluster: Obj, rng: random.Random, edits: int | None = None) -> tuple[Obj, list[str]]:
    """A mutated copy of ``cluster`` (1-3 edits unless ``edits``) and what was done."""
    out = copy.deepcopy(cluster)
    count = edits if edits is not None else rng.randint(1, 3)
    return out, [mutate_once(out, rng) for _ in range(count)]


# ----- the builders the RayCluster controller runs ------------------------------------------
@dataclass(frozen=True)
class Crash:
    """A builder that raised on an object validation accepted."""

    builder: str
    error: str
    where: str

    def __str__(self) -> str:
        return f"{self.builder}: {self.error} (at {self.where})"


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "?"
    last = frames[-1]
    return f"{Path(last.filename).name}:{last.lineno}"


def run_builders(cluster: Obj, gates: dict[str, bool] | None = None) -> list[Crash]:
    """Run every builder the RayCluster reconciler calls on ``cluster``; the ones that raised.

    Errors the reconciler turns into a visible answer itself (``ValueError`` of the serve
    Service, as ``ReconcileError``) are not crashes.
    """
    from kuberay.api.v1.rules import (
        calculate_desired_replicas,
        calculate_max_replicas,
        calculate_min_replicas,
        is_gcs_fault_tolerance_embedded,
        is_gcs_fault_tolerance_enabled,
        is_serve_service_enabled,
        num_of_hosts,
        worker_group_desired_replicas,
        workers_to_delete,
    )
    from kuberay.controllers.builders.auth import build_auth_secret, needs_auth_secret
    from kuberay.controllers.builders.gcs_ft import build_gcs_storage_pvc
    from kuberay.controllers.builders.hashing import ray_cluster_recreate_hash
    from kuberay.controllers.builders.ingress import build_head_ingress, ingress_enabled
    from kuberay.controllers.builders.pod import build_head_pod, build_worker_pod
    from kuberay.controllers.builders.rbac import (
        build_autoscaler_role,
        build_autoscaler_role_binding,
        build_autoscaler_service_account,
    )
    from kuberay.controllers.builders.resources import desired_resource_status
    from kuberay.controllers.builders.service import (
        build_head_service,
        build_headless_service,
        build_serve_service,
        needs_headless_service,
    )
    from kuberay.controllers.common.options import BuildOptions
    from kuberay.controllers.raycluster.redis_cleanup_job import build_redis_cleanup_job

    features = GATES if gates is None else gates
    options = BuildOptions()
    crashes: list[Crash] = []

    def attempt(
        name: str, fn: Callable[[], object], tolerated: tuple[type[Exception], ...] = ()
    ) -> None:
        try:
            fn()
        except tolerated:
            pass
        except Exception as exc:
            crashes.append(Crash(name, f"{type(exc).__name__}: {exc}"[:300], _where(exc)))

    attempt("ray_cluster_recreate_hash", lambda: ray_cluster_recreate_hash(cluster))
    attempt("build_head_pod", lambda: build_head_pod(cluster, options, features))
    groups = (cluster.get("spec") or {}).get("workerGroupSpecs") or []
    for i, group in enumerate(groups if isinstance(groups, list) else []):
        attempt(
            f"build_worker_pod[{i}]",
            lambda g=group: build_worker_pod(
                cluster, g, options, features, replica_group_name="r", replica_index=0
            ),
        )
        attempt(
            f"worker_group_desired_replicas[{i}]", lambda g=group: worker_group_desired_replicas(g)
        )
        attempt(f"num_of_hosts[{i}]", lambda g=group: num_of_hosts(g))
        attempt(f"workers_to_delete[{i}]", lambda g=group: workers_to_delete(g))
    attempt("build_head_service", lambda: build_head_service(cluster, options))
    if needs_headless_service(cluster):
        attempt("build_headless_service", lambda: build_headless_service(cluster))
    if ingress_enabled(cluster):
        attempt("build_head_ingress", lambda: build_head_ingress(cluster))
    if is_serve_service_enabled(cluster):
        attempt("build_serve_service", lambda: build_serve_service(cluster), (ValueError,))
    attempt("build_autoscaler_service_account", lambda: build_autoscaler_service_account(cluster))
    attempt("build_autoscaler_role", lambda: build_autoscaler_role(cluster))
    attempt("build_autoscaler_role_binding", lambda: build_autoscaler_role_binding(cluster))
    if needs_auth_secret(cluster):
        attempt("build_auth_secret", lambda: build_auth_secret(cluster, "token"))
    if is_gcs_fault_tolerance_enabled(cluster):
        if is_gcs_fault_tolerance_embedded(cluster):
            attempt("build_gcs_storage_pvc", lambda: build_gcs_storage_pvc(cluster))
        else:
            attempt(
                "build_redis_cleanup_job",
                lambda: build_redis_cleanup_job(cluster, options, features),
            )
    attempt("desired_resource_status", lambda: desired_resource_status(cluster))
    attempt("calculate_desired_replicas", lambda: calculate_desired_replicas(cluster))
    attempt("calculate_min_replicas", lambda: calculate_min_replicas(cluster))
    attempt("calculate_max_replicas", lambda: calculate_max_replicas(cluster))
    return crashes


def accepted(cluster: Obj, gates: dict[str, bool] | None = None) -> bool:
    """Whether the controller would go on to build children (no fatal validation error)."""
    from kuberay.api.v1.validation import validate_raycluster

    errors = validate_raycluster(cluster, gates=GATES if gates is None else gates)
    return not [e for e in errors if e.source != "webhook"]


def sample_documents(
    kinds: tuple[str, ...], directory: Path = REFERENCE_SAMPLES
) -> list[tuple[str, Obj]]:
    """``(id, object)`` for every sample of ``kinds`` (RayJob, RayService ...)."""
    found: list[tuple[str, Obj]] = []
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob("*.yaml")):
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if (
                isinstance(doc, dict)
                and doc.get("kind") in kinds
                and isinstance(doc.get("spec"), dict)
            ):
                doc = copy.deepcopy(doc)
                doc.setdefault("metadata", {}).setdefault("name", "mutant")
                doc["metadata"].setdefault("namespace", "default")
                found.append((f"{path.name}#{index}", doc))
    return found


def lifted_cluster(doc: Obj) -> Obj | None:
    """The RayCluster a RayJob/RayService would create from its embedded cluster spec."""
    spec = _cluster_spec_of(doc)
    if not isinstance(spec, dict):
        return None
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "lifted", "namespace": "default", "uid": "0000-1111"},
        "spec": copy.deepcopy(spec),
    }
