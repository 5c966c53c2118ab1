"""The pure RayService rules, as tables taken from KubeRay's Go unit tests
(``rayservice_controller_unit_test.go``) and checked against the hashes KubeRay's Go code
produced for every RayService sample (``data/go_spec_hash_vectors.json.gz``)."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from kuberay.api.v1 import constants as C
from kuberay.api.v1.rules import is_zero_downtime_upgrade_enabled
from kuberay.controllers.rayservice.cluster_builder import (
    build_ray_cluster_for_ray_service,
    goal_cluster_hash,
    is_cluster_spec_hash_equal,
    modify_ray_cluster,
    need_serve_submit,
    serve_config_payload,
    should_prepare_new_cluster,
    should_update_cluster,
)

DATA = Path(__file__).parents[1] / "data" / "go_spec_hash_vectors.json.gz"
with gzip.open(DATA) as _f:
    GO_VECTORS = [v for v in json.load(_f) if v["name"].endswith(":RayService")]


def service(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "rayClusterConfig": {
            "workerGroupSpecs": [{"groupName": "worker-group-1", "replicas": 1}],
        }
    }
    body.update(spec)
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": "rs", "namespace": "ns", "uid": "uid-1"},
        "spec": body,
    }


def cluster_for(rs: dict[str, Any], name: str = "rs-abcde") -> dict[str, Any]:
    return build_ray_cluster_for_ray_service(rs, name)


@pytest.mark.parametrize("vector", GO_VECTORS, ids=[v["name"] for v in GO_VECTORS])
def test_cluster_hash_matches_kuberay_for_every_sample(vector: dict[str, Any]) -> None:
    rs = {"metadata": {"name": "x"}, "spec": {"rayClusterConfig": vector["spec"]}}
    assert goal_cluster_hash(rs) == vector["hash"]


def test_built_cluster_carries_kuberays_labels_annotations_and_owner() -> None:
    rs = service()
    rs["metadata"]["labels"] = {"team": "a", C.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: "spoof"}
    rs["metadata"]["annotations"] = {"foo": "bar"}
    rs["spec"]["rayClusterConfig"]["suspend"] = True
    cluster = cluster_for(rs)
    meta = cluster["metadata"]
    assert meta["name"] == "rs-abcde" and meta["namespace"] == "ns"
    assert meta["labels"] == {
        "team": "a",
        C.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY: "rs",
        C.RAY_ORIGINATED_FROM_CRD_LABEL_KEY: "RayService",
    }
    assert meta["annotations"]["foo"] == "bar"
    assert meta["annotations"][C.NUM_WORKER_GROUPS_KEY] == "1"
    assert meta["annotations"][C.KUBERAY_VERSION_ANNOTATION_KEY] == C.KUBERAY_VERSION
    # suspend is not part of the hash (it belongs to Kueue once the cluster exists) ...
    without = service()
    assert meta["annotations"][C.HASH_WITHOUT_REPLICAS_AND_WORKERS_TO_DELETE_KEY] == (
        goal_cluster_hash(without)
    )
    # ... but it is propagated at creation.
    assert cluster["spec"]["suspend"] is True
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayService",
            "name": "rs",
            "uid": "uid-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def test_incremental_pending_cluster_starts_without_worker_replicas() -> None:
    rs = service(upgradeStrategy={"type": "NewClusterWithIncrementalUpgrade"})
    rs["status"] = {"activeServiceStatus": {"rayClusterName": "rs-old"}}
    groups = cluster_for(rs)["spec"]["workerGroupSpecs"]
    assert "replicas" not in groups[0]
    rs["status"] = {}
    assert cluster_for(rs)["spec"]["workerGroupSpecs"][0]["replicas"] == 1


# KubeRay TestIsClusterSpecHashEqual: (partial, diff replicas, new group, other change) -> equal
HASH_TABLE = [
    ("[full] diff replicas", False, True, False, False, True),
    ("[full] completely identical", False, False, False, False, True),
    ("[full] update cluster spec", False, False, False, True, False),
    ("[partial] new worker group", True, False, True, False, True),
    ("[partial] diff replicas + new worker group", True, True, True, False, True),
    ("[partial] diff replicas", True, True, False, False, True),
    ("[partial] update cluster spec", True, False, False, True, False),
]


@pytest.mark.parametrize(
    ("partial", "replicas", "new_group", "changed", "expected"),
    [row[1:] for row in HASH_TABLE],
    ids=[row[0] for row in HASH_TABLE],
)
def test_cluster_spec_hash_equal(
    partial: bool, replicas: bool, new_group: bool, changed: bool, expected: bool
) -> None:
    rs = service()
    cluster = cluster_for(rs)
    groups = rs["spec"]["rayClusterConfig"]["workerGroupSpecs"]
    if replicas:
        groups[0]["replicas"] += 1
    if new_group:
        groups.append({"groupName": "worker-group-2", "replicas": 1})
    if changed:
        rs["spec"]["rayClusterConfig"]["rayVersion"] = "new-version"
    assert is_cluster_spec_hash_equal(rs, cluster, partial=partial) is expected


def test_removing_a_worker_group_is_not_a_partial_match() -> None:
    rs = service()
    rs["spec"]["rayClusterConfig"]["workerGroupSpecs"].append({"groupName": "g2"})
    cluster = cluster_for(rs)
    rs["spec"]["rayClusterConfig"]["workerGroupSpecs"].pop()
    assert not is_cluster_spec_hash_equal(rs, cluster, partial=True)
    assert not is_cluster_spec_hash_equal(rs, cluster, partial=False)


def test_removing_a_worker_group_starts_a_new_cluster_never_edits_one() -> None:
    # The RayCluster controller deletes the pods of a group removed from a cluster's spec;
    # a RayService never removes one in place: the removal is a new cluster (or, with
    # upgradeStrategy None, ignored), as in KubeRay.
    rs = service()
    rs["spec"]["rayClusterConfig"]["workerGroupSpecs"].append({"groupName": "g2"})
    cluster = cluster_for(rs)
    rs["spec"]["rayClusterConfig"]["workerGroupSpecs"].pop()
    for active in (True, False):
        assert not should_update_cluster(rs, cluster, is_active=active)
    kw: dict[str, Any] = {"features": {}, "env": {}, "pending_serving": False}
    assert should_prepare_new_cluster(rs, cluster, None, **kw)
    rs["spec"]["upgradeStrategy"] = {"type": "None"}
    assert not should_prepare_new_cluster(rs, cluster, None, **kw)


def test_fields_that_never_trigger_an_upgrade() -> None:
    rs = service()
    cluster = cluster_for(rs)
    config = rs["spec"]["rayClusterConfig"]
    config["suspend"] = True
    group = config["workerGroupSpecs"][0]
    group.update(replicas=7, minReplicas=1, maxReplicas=9, scaleStrategy={"workersToDelete": ["p"]})
    group["template"] = {
        "spec": {"tolerations": [{"key": "k"}], "schedulingGates": [{"name": "g"}]}
    }
    config["upgradeStrategy"] = {"type": "Recreate"}
    assert is_cluster_spec_hash_equal(rs, cluster, partial=False)


def _with_condition(rs: dict[str, Any], ctype: str, status: str) -> dict[str, Any]:
    rs = copy.deepcopy(rs)
    rs.setdefault("status", {}).setdefault("conditions", []).append(
        {"type": ctype, "status": status, "reason": "x", "message": ""}
    )
    return rs


def test_should_update_cluster_table() -> None:
    rs = service()
    cluster = cluster_for(rs)
    assert not should_update_cluster(rs, None, is_active=True)
    assert not should_update_cluster(rs, cluster, is_active=True)  # identical
    appended = copy.deepcopy(rs)
    appended["spec"]["rayClusterConfig"]["workerGroupSpecs"].append({"groupName": "g2"})
    assert should_update_cluster(appended, cluster, is_active=True)
    assert should_update_cluster(appended, cluster, is_active=False)
    # Never the active cluster during an upgrade.
    assert not should_update_cluster(
        _with_condition(appended, "UpgradeInProgress", "True"), cluster, is_active=True
    )
    changed = copy.deepcopy(rs)
    changed["spec"]["rayClusterConfig"]["rayVersion"] = "2.100.0"
    assert not should_update_cluster(changed, cluster, is_active=True)
    # Another operator version re-stamps the active cluster (not the pending one).
    old = copy.deepcopy(cluster)
    old["metadata"]["annotations"][C.KUBERAY_VERSION_ANNOTATION_KEY] = "nightly"
    assert should_update_cluster(rs, old, is_active=True)
    assert not should_update_cluster(rs, old, is_active=False)


# KubeRay TestIsZeroDowntimeUpgradeEnabled (+ the incremental type with its gate).
ZERO_DOWNTIME = [
    (None, "", True),
    (None, "true", True),
    (None, "false", False),
    (None, "FALSE", False),
    ("NewCluster", "", True),
    ("NewCluster", "false", True),
    ("None", "", False),
    ("None", "true", False),
    ("None", "false", False),
]


@pytest.mark.parametrize(("kind", "env", "expected"), ZERO_DOWNTIME)
def test_zero_downtime_enabled(kind: str | None, env: str, expected: bool) -> None:
    rs = service() if kind is None else service(upgradeStrategy={"type": kind})
    environ = {"ENABLE_ZERO_DOWNTIME": env} if env else {}
    assert is_zero_downtime_upgrade_enabled(rs, {}, environ) is expected


def test_incremental_type_counts_only_with_its_gate() -> None:
    rs = service(upgradeStrategy={"type": "NewClusterWithIncrementalUpgrade"})
    assert is_zero_downtime_upgrade_enabled(rs, {"RayServiceIncrementalUpgrade": True}, {})
    assert not is_zero_downtime_upgrade_enabled(rs, {"RayServiceIncrementalUpgrade": False}, {})


def test_should_prepare_new_cluster_table() -> None:
    rs = service()
    cluster = cluster_for(rs)
    changed = copy.deepcopy(rs)
    changed["spec"]["rayClusterConfig"]["rayVersion"] = "2.100.0"
    appended = copy.deepcopy(rs)
    appended["spec"]["rayClusterConfig"]["workerGroupSpecs"].append({"groupName": "g2"})
    kw: dict[str, Any] = {"features": {}, "env": {}}
    table = [
        ("no cluster at all", rs, None, None, False, True),
        ("active matches", rs, cluster, None, False, False),
        ("active differs", changed, cluster, None, False, True),
        ("appended group: in place", appended, cluster, None, False, False),
        ("pending matches", rs, cluster, cluster, False, False),
        ("pending differs: replaced", changed, None, cluster, False, True),
        ("services already on pending", changed, cluster, cluster, True, False),
    ]
    for name, svc, active, pending, serving, expected in table:
        got = should_prepare_new_cluster(svc, active, pending, pending_serving=serving, **kw)
        assert got is expected, name
    none = copy.deepcopy(changed)
    none["spec"]["upgradeStrategy"] = {"type": "None"}
    assert not should_prepare_new_cluster(none, cluster, None, pending_serving=False, **kw)
    rollback = _with_condition(changed, "RollbackInProgress", "True")
    assert not should_prepare_new_cluster(rollback, cluster, None, pending_serving=False, **kw)


def test_modify_ray_cluster_keeps_suspend_and_server_fields() -> None:
    rs = service()
    rs["spec"]["rayClusterConfig"]["suspend"] = False
    current = cluster_for(rs)
    current["metadata"]["resourceVersion"] = "7"
    current["spec"]["suspend"] = True
    current["status"] = {"state": "ready"}
    rs["metadata"]["labels"] = {"new": "label"}
    rs["spec"]["rayClusterConfig"]["workerGroupSpecs"].append({"groupName": "g2"})
    updated = modify_ray_cluster(current, cluster_for(rs))
    assert updated["spec"]["suspend"] is True
    assert len(updated["spec"]["workerGroupSpecs"]) == 2
    assert updated["metadata"]["resourceVersion"] == "7"
    assert updated["metadata"]["labels"]["new"] == "label"
    assert updated["metadata"]["annotations"][C.NUM_WORKER_GROUPS_KEY] == "2"
    assert updated["status"] == {"state": "ready"}


def test_scale_gates_never_trigger_an_upgrade() -> None:
    rs = service()
    cluster = cluster_for(rs)
    group = rs["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]
    group["scaleStrategy"] = {"scaleGate": [{"type": "kueue.k8s.io/quota-exceeded"}]}
    assert is_cluster_spec_hash_equal(rs, cluster, partial=False)
    assert not should_update_cluster(rs, cluster, is_active=True)


def test_in_place_update_keeps_the_clusters_scale_gates() -> None:
    """Kueue's gates live on the RayCluster; appending a worker group rewrites the cluster's
    spec from the RayService, which must neither drop them nor add the RayService's own."""
    rs = service()
    current = cluster_for(rs)
    gate = [{"type": "kueue.k8s.io/quota-exceeded"}]
    first = current["spec"]["workerGroupSpecs"][0]
    first["scaleStrategy"] = {"workersToDelete": ["w-1"], "scaleGate": gate}
    groups = rs["spec"]["rayClusterConfig"]["workerGroupSpecs"]
    groups[0]["scaleStrategy"] = {"scaleGate": [{"type": "stale.example.com/gate"}]}
    groups.append({"groupName": "g2", "scaleStrategy": {"scaleGate": [{"type": "x.io/y"}]}})
    updated = modify_ray_cluster(current, cluster_for(rs))
    new_groups = updated["spec"]["workerGroupSpecs"]
    assert new_groups[0]["scaleStrategy"]["scaleGate"] == gate
    assert "scaleGate" not in new_groups[1]["scaleStrategy"]


# KubeRay TestCheckIfNeedSubmitServeApplications
@pytest.mark.parametrize(
    ("cached", "apps", "expected"),
    [
        (None, 1, True),
        ("", 1, True),
        ("cfg", 0, True),
        ("other", 1, True),
        ("cfg", 1, False),
    ],
)
def test_need_serve_submit(cached: str | None, apps: int, expected: bool) -> None:
    need, why = need_serve_submit(cached, "cfg", apps)
    assert need is expected and why


def test_serve_payload_is_sorted_json_with_target_capacity() -> None:
    yaml_text = "applications:\n  - name: b\n    route_prefix: /b\n    import_path: m:app\n"
    body = serve_config_payload(yaml_text, 40)
    assert body == (
        b'{"applications":[{"import_path":"m:app","name":"b","route_prefix":"/b"}],'
        b'"target_capacity":40}'
    )
    assert json.loads(serve_config_payload("")) == {}
    with pytest.raises(ValueError):
        serve_config_payload("- just\n- a list\n")
