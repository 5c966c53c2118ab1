"""SharedIndexInformer on the real apiserver: ordering, cut watches, 410 relists, restarts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from kuberay.informers import (
    ClientListerWatcher,
    DeletedFinalStateUnknown,
    SharedIndexInformer,
    SharedInformerFactory,
)
from kuberay.kube import Client, WatchEvent
from tests.helpers import eventually


def cm(name: str, ns: str, value: str = "v") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "inf"}},
        "data": {"k": value},
    }


class Recorder:
    """Records handler calls as (event, name[, value]) tuples."""

    def __init__(self) -> None:
        self.events: list[tuple[str, ...]] = []

    def on_add(self, obj: dict[str, Any], is_in_initial_list: bool) -> None:
        self.events.append(("add", obj["metadata"]["name"], obj.get("data", {}).get("k", "")))

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self.events.append(("update", new["metadata"]["name"], new.get("data", {}).get("k", "")))

    def on_delete(self, obj: dict[str, Any] | DeletedFinalStateUnknown) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self.events.append(("tombstone", obj.obj["metadata"]["name"]))
        else:
            self.events.append(("delete", obj["metadata"]["name"]))


class GatedListerWatcher:
    """Wraps a ListerWatcher; while the gate is closed, new watches wait."""

    def __init__(self, inner: ClientListerWatcher) -> None:
        self.inner = inner
        self.description = inner.description
        self.gate = asyncio.Event()
        self.gate.set()
        self.watch_rvs: list[str] = []

    async def list(self, resource_version: str | None) -> tuple[list[dict[str, Any]], str]:
        return await self.inner.list(resource_version)

    async def watch(
        self, resource_version: str, timeout_seconds: int, inactivity_timeout: float
    ) -> AsyncIterator[WatchEvent]:
        await self.gate.wait()
        self.watch_rvs.append(resource_version)
        async for ev in self.inner.watch(resource_version, timeout_seconds, inactivity_timeout):
            yield ev


async def test_sees_add_update_delete_in_order(kclient: Client, namespace: str) -> None:
    await kclient.create(cm("pre", namespace))
    factory = SharedInformerFactory(kclient)
    informer = factory.informer_for("v1", "ConfigMap", namespace=namespace)
    rec = Recorder()
    informer.add_event_handler(rec)
    factory.start()
    try:
        assert await factory.wait_for_cache_sync(30)
        assert rec.events == [("add", "pre", "v")]
        await kclient.create(cm("a", namespace))
        await kclient.patch("v1", "ConfigMap", "a", {"data": {"k": "2"}}, namespace)
        await kclient.delete("v1", "ConfigMap", "a", namespace)
        await eventually(lambda: ("delete", "a") in rec.events, message="delete seen")
        assert rec.events[1:] == [("add", "a", "v"), ("update", "a", "2"), ("delete", "a")]
        # The cache holds what the server holds, managedFields stripped.
        cached = informer.indexer.get(namespace, "pre")
        assert cached is not None and "managedFields" not in cached["metadata"]
        assert informer.indexer.get(namespace, "a") is None
        # A second informer for the same scope is the same shared instance.
        assert factory.informer_for("v1", "ConfigMap", namespace=namespace) is informer
    finally:
        await factory.shutdown()


async def test_late_handler_gets_cached_objects(kclient: Client, namespace: str) -> None:
    await kclient.create(cm("x", namespace))
    informer = SharedIndexInformer(
        ClientListerWatcher(kclient, "v1", "ConfigMap", namespace=namespace)
    )
    informer.start()
    try:
        assert await informer.wait_for_sync(30)
        rec = Recorder()
        reg = informer.add_event_handler(rec)
        assert reg.has_synced()
        assert rec.events == [("add", "x", "v")]
    finally:
        await informer.stop()


async def test_cut_watch_resumes_without_losing_events(kclient: Client, namespace: str) -> None:
    lw = GatedListerWatcher(ClientListerWatcher(kclient, "v1", "ConfigMap", namespace=namespace))
    informer = SharedIndexInformer(lw)
    rec = Recorder()
    informer.add_event_handler(rec)
    informer.start()
    try:
        assert await informer.wait_for_sync(30)
        await kclient.create(cm("a", namespace))
        await eventually(lambda: ("add", "a", "v") in rec.events)
        relists = informer.reflector.relists
        await eventually(lambda: kclient.open_watches == 1, message="watch open")
        lw.gate.clear()
        assert kclient.close_watches() == 1  # cuts the open watch connection
        await kclient.create(cm("b", namespace))
        await kclient.patch("v1", "ConfigMap", "a", {"data": {"k": "changed"}}, namespace)
        lw.gate.set()
        await eventually(lambda: ("update", "a", "changed") in rec.events, timeout=30)
        await eventually(lambda: ("add", "b", "v") in rec.events, timeout=30)
        # Resumed from the last resourceVersion: no relist was needed.
        assert informer.reflector.relists == relists
        assert len(lw.watch_rvs) >= 2
    finally:
        await informer.stop()


async def test_gone_resource_version_relists_with_tombstones(
    kclient: Client, namespace: str, control_plane: Any
) -> None:
    if not hasattr(control_plane, "compact_etcd"):
        import pytest

        pytest.skip("needs the local control plane")
    lw = GatedListerWatcher(ClientListerWatcher(kclient, "v1", "ConfigMap", namespace=namespace))
    informer = SharedIndexInformer(lw)
    rec = Recorder()
    informer.add_event_handler(rec)
    await kclient.create(cm("keep", namespace))
    await kclient.create(cm("doomed", namespace))
    informer.start()
    try:
        assert await informer.wait_for_sync(30)
        relists = informer.reflector.relists
        await eventually(lambda: kclient.open_watches == 1, message="watch open")
        lw.gate.clear()
        assert kclient.close_watches() == 1
        # While the informer cannot watch: delete one, change one, add one, then make
        # its resourceVersion unusable (compaction + a fresh apiserver watch cache).
        await kclient.delete("v1", "ConfigMap", "doomed", namespace)
        await kclient.patch("v1", "ConfigMap", "keep", {"data": {"k": "new"}}, namespace)
        await kclient.create(cm("fresh", namespace))
        control_plane.compact_etcd()
        await asyncio.to_thread(control_plane.restart_apiserver)
        lw.gate.set()
        await eventually(lambda: ("tombstone", "doomed") in rec.events, timeout=60)
        assert ("update", "keep", "new") in rec.events
        assert ("add", "fresh", "v") in rec.events
        assert informer.reflector.relists > relists
        names = sorted(o["metadata"]["name"] for o in informer.indexer.list())
        assert names == ["fresh", "keep"]
        # And it keeps watching afterwards.
        await kclient.create(cm("after", namespace))
        await eventually(lambda: ("add", "after", "v") in rec.events, timeout=30)
    finally:
        await informer.stop()


async def test_indexer_by_label(kclient: Client, namespace: str) -> None:
    factory = SharedInformerFactory(kclient)
    informer = factory.informer_for(
        "v1",
        "ConfigMap",
        namespace=namespace,
        indexers={"app": lambda o: [o["metadata"].get("labels", {}).get("app", "")]},
    )
    await kclient.create(cm("one", namespace))
    factory.start()
    try:
        assert await factory.wait_for_cache_sync(30)
        assert [o["metadata"]["name"] for o in informer.indexer.by_index("app", "inf")] == ["one"]
        assert [
            o["metadata"]["name"] for o in informer.indexer.by_index("namespace", namespace)
        ] == ["one"]
    finally:
        await factory.shutdown()


async def test_metadata_only_cache_holds_secrets_without_their_data(
    kclient: Client, namespace: str
) -> None:
    """``ByObject(metadata_only=True)``: the cache knows names, labels and owners of the
    selected Secrets, follows their changes, and never holds (or fetches) their data."""
    from kuberay.reconcile import ByObject, Cache

    def secret(name: str, app: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": app}},
            "stringData": {"password": "hunter2"},
        }

    await kclient.create(secret("mine", "ray"))
    await kclient.create(secret("other", "not-ray"))
    factory = SharedInformerFactory(kclient)
    cache = Cache(
        kclient,
        factory,
        namespaces=[namespace],
        by_object={("v1", "Secret"): ByObject(label_selector="app=ray", metadata_only=True)},
    )
    assert len(await cache.register("v1", "Secret")) == 1
    factory.start()
    try:
        assert await factory.wait_for_cache_sync(30)
        cached = cache.get("v1", "Secret", namespace, "mine")
        assert cached is not None
        assert cached["kind"] == "Secret" and cached["apiVersion"] == "v1"
        assert cached["metadata"]["labels"] == {"app": "ray"}
        assert "data" not in cached and "stringData" not in cached
        assert cache.get("v1", "Secret", namespace, "other") is None
        # Watch events are metadata-only too.
        await kclient.create(secret("later", "ray"))
        await kclient.patch(
            "v1", "Secret", "mine", {"metadata": {"labels": {"app": "ray", "v": "2"}}}, namespace
        )
        await eventually(
            lambda: (
                cache.get("v1", "Secret", namespace, "later") is not None
                and (cache.get("v1", "Secret", namespace, "mine") or {})["metadata"]["labels"].get(
                    "v"
                )
                == "2"
            ),
            timeout=60,
        )
        for obj in cache.list("v1", "Secret", namespace):
            assert obj["kind"] == "Secret" and "data" not in obj, obj
    finally:
        await factory.shutdown()
