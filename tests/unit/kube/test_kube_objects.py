"""kuberay.kube.objects: null-safe accessors, keys, owner references, finalizers."""

from __future__ import annotations

from typing import Any

from kuberay.kube import objects as o


def test_accessors_read_missing_and_null_fields_as_empty() -> None:
    for obj in ({}, {"metadata": None, "spec": None, "status": None}, {"metadata": "x"}):
        assert o.meta(obj) == {}
        assert o.spec(obj) == {}
        assert o.status(obj) == {}
        assert o.labels(obj) == {}
        assert o.annotations(obj) == {}
    assert o.labels({"metadata": {"labels": None}}) == {}


def test_accessors_return_the_objects_own_mappings() -> None:
    obj: dict[str, Any] = {
        "metadata": {"labels": {"a": "1"}, "annotations": {"b": "2"}},
        "spec": {"replicas": 3},
        "status": {"phase": "Ready"},
    }
    assert o.meta(obj) is obj["metadata"]
    assert o.labels(obj) == {"a": "1"}
    assert o.annotations(obj) == {"b": "2"}
    assert o.spec(obj)["replicas"] == 3
    assert o.status(obj)["phase"] == "Ready"


def test_writing_to_an_empty_accessor_result_leaves_the_object_alone() -> None:
    for obj in ({}, {"metadata": {}}, {"metadata": {"labels": {}}}):
        before = repr(obj)
        o.labels(obj)["a"] = "1"
        assert repr(obj) == before  # as with ``obj.get(key) or {}``


def test_key_of_namespaced_and_cluster_scoped() -> None:
    key = o.key_of({"metadata": {"namespace": "ns", "name": "a"}})
    assert key == ("ns", "a")
    assert (key.namespace, key.name) == ("ns", "a")
    assert str(key) == "ns/a"
    assert str(o.key_of({"metadata": {"name": "node-1"}})) == "node-1"
    assert o.key_of({}) == ("", "")


def test_is_deleting() -> None:
    assert not o.is_deleting({"metadata": {}})
    assert o.is_deleting({"metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z"}})


def _owner() -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "uid": "u1"},
    }


def test_owner_reference_and_controller_of() -> None:
    ref = o.owner_reference(_owner())
    assert ref == {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "name": "rc",
        "uid": "u1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    plain = o.owner_reference(_owner(), controller=False, block_owner_deletion=False)
    assert "controller" not in plain and "blockOwnerDeletion" not in plain
    child: dict[str, Any] = {"metadata": {"ownerReferences": [plain, None]}}
    assert o.controller_of(child) is None
    assert o.owner_references(child) == [plain]


def test_set_owner_reference_adds_replaces_and_reports_change() -> None:
    child: dict[str, Any] = {}
    ref = o.owner_reference(_owner())
    assert o.set_owner_reference(child, ref)
    assert child["metadata"]["ownerReferences"] == [ref]
    assert not o.set_owner_reference(child, ref)  # same reference: no change
    # same group/kind/name, other version and uid: replaced, not appended
    newer = {**ref, "apiVersion": "ray.io/v2", "uid": "u2"}
    assert o.set_owner_reference(child, newer)
    assert child["metadata"]["ownerReferences"] == [newer]
    assert o.controller_of(child) == newer
    other = o.owner_reference(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "uid": "u3"}},
        controller=False,
    )
    assert o.set_owner_reference(child, other)
    assert len(child["metadata"]["ownerReferences"]) == 2


def test_finalizers_add_has_remove() -> None:
    obj: dict[str, Any] = {"metadata": {"finalizers": None}}
    assert not o.has_finalizer(obj, "ray.io/f")
    assert o.add_finalizer(obj, "ray.io/f")
    assert not o.add_finalizer(obj, "ray.io/f")
    assert obj["metadata"]["finalizers"] == ["ray.io/f"]
    assert o.has_finalizer(obj, "ray.io/f")
    assert o.add_finalizer(obj, "other")
    assert o.remove_finalizer(obj, "ray.io/f")
    assert not o.remove_finalizer(obj, "ray.io/f")
    assert obj["metadata"]["finalizers"] == ["other"]
    bare: dict[str, Any] = {}
    assert o.add_finalizer(bare, "x") and bare == {"metadata": {"finalizers": ["x"]}}
