"""Store / Indexer semantics."""

from __future__ import annotations

from typing import Any

import pytest

from kuberay.informers import DeletedFinalStateUnknown, Indexer, meta_namespace_key, split_key


def obj(name: str, ns: str | None = "ns", **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if ns:
        meta["namespace"] = ns
    return {"metadata": meta}


def by_app(o: dict[str, Any]) -> list[str]:
    app = o["metadata"].get("labels", {}).get("app")
    return [app] if app else []


def test_keys() -> None:
    assert meta_namespace_key(obj("a")) == "ns/a"
    assert meta_namespace_key(obj("node-1", None)) == "node-1"
    assert meta_namespace_key(DeletedFinalStateUnknown("x/y", obj("y", "x"))) == "x/y"
    assert split_key("ns/a") == ("ns", "a")
    assert split_key("node-1") == (None, "node-1")


def test_index_follows_updates_and_deletes() -> None:
    idx = Indexer({"app": by_app})
    idx.add(obj("a", app="web"))
    idx.add(obj("b", app="web"))
    idx.add(obj("c", "other", app="db"))
    assert sorted(o["metadata"]["name"] for o in idx.by_index("app", "web")) == ["a", "b"]
    assert [o["metadata"]["name"] for o in idx.by_index("namespace", "other")] == ["c"]
    idx.update(obj("a", app="db"))
    assert [o["metadata"]["name"] for o in idx.by_index("app", "web")] == ["b"]
    assert sorted(idx.index_keys("app", "db")) == ["ns/a", "other/c"]
    idx.delete(obj("b"))
    assert idx.by_index("app", "web") == []
    # Emptied values are dropped, so the index does not grow without bound.
    assert "web" not in idx.list_index_values("app")
    assert len(idx) == 2


def test_replace_and_late_indexer() -> None:
    idx = Indexer()
    idx.add(obj("old", app="x"))
    idx.replace([obj("n1", app="y"), obj("n2", app="y")])
    assert sorted(idx.list_keys()) == ["ns/n1", "ns/n2"]
    idx.add_indexers({"app": by_app})
    assert len(idx.by_index("app", "y")) == 2
    with pytest.raises(ValueError):
        idx.add_indexers({"app": by_app})
    with pytest.raises(KeyError):
        idx.by_index("nope", "y")


def test_get_by_namespace_and_name() -> None:
    idx = Indexer()
    idx.add(obj("a"))
    idx.add(obj("n", None))
    assert idx.get("ns", "a") is not None
    assert idx.get(None, "n") is not None
    assert idx.get("ns", "missing") is None
