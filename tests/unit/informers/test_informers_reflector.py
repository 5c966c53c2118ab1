"""Reflector + SharedIndexInformer logic against a scripted ListerWatcher (no cluster)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from kuberay.informers import DeletedFinalStateUnknown, SharedIndexInformer
from kuberay.informers.backoff import Backoff
from kuberay.kube import Gone, TransportError, WatchEvent


def cm(name: str, rv: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "resourceVersion": rv,
            "managedFields": [{"manager": "x"}],
        }
    }


class ScriptedLW:
    """Lists return ``lists`` in turn; each watch plays the next script entry."""

    description = "scripted"

    def __init__(self, lists: list[Any], watches: list[Any]) -> None:
        self.lists = lists
        self.watches = watches
        self.list_rvs: list[str | None] = []
        self.watch_rvs: list[str] = []

    async def list(self, resource_version: str | None) -> tuple[list[dict[str, Any]], str]:
        self.list_rvs.append(resource_version)
        item = self.lists.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    async def watch(
        self, resource_version: str, timeout_seconds: int, inactivity_timeout: float
    ) -> AsyncIterator[WatchEvent]:
        self.watch_rvs.append(resource_version)
        assert 300 <= timeout_seconds < 600
        if not self.watches:
            await asyncio.Event().wait()  # block forever
        script = self.watches.pop(0)
        for step in script:
            if isinstance(step, Exception):
                raise step
            await asyncio.sleep(0.01)
            yield step


class Rec:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def on_add(self, obj: dict[str, Any], initial: bool) -> None:
        self.events.append(("add-initial" if initial else "add", obj["metadata"]["name"]))

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self.events.append(("update", new["metadata"]["name"]))

    def on_delete(self, obj: Any) -> None:
        kind = "tombstone" if isinstance(obj, DeletedFinalStateUnknown) else "delete"
        name = obj.obj["metadata"]["name"] if kind == "tombstone" else obj["metadata"]["name"]
        self.events.append((kind, name))


async def run_until(informer: SharedIndexInformer, cond: Any, timeout: float = 5.0) -> None:
    informer.start()
    try:
        async with asyncio.timeout(timeout):
            while not cond():
                await asyncio.sleep(0.01)
    finally:
        await informer.stop()


def fast(informer: SharedIndexInformer) -> SharedIndexInformer:
    informer.reflector.backoff = Backoff(initial=0.01, cap=0.05, jitter=0.0)
    return informer


async def test_initial_list_then_watch_events() -> None:
    lw = ScriptedLW(
        [([cm("a", "1")], "10")],
        [
            [
                WatchEvent("ADDED", cm("b", "11")),
                WatchEvent("MODIFIED", cm("a", "12")),
                WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": "15"}}),
                WatchEvent("DELETED", cm("b", "16")),
            ]
        ],
    )
    inf = fast(SharedIndexInformer(lw))
    rec = Rec()
    inf.add_event_handler(rec)
    await run_until(inf, lambda: ("delete", "b") in rec.events)
    assert rec.events == [("add-initial", "a"), ("add", "b"), ("update", "a"), ("delete", "b")]
    assert lw.list_rvs == ["0"]  # first list may be served from the watch cache
    assert lw.watch_rvs[0] == "10"
    assert inf.last_sync_resource_version == "16"
    assert "managedFields" not in inf.indexer.get("ns", "a")["metadata"]  # type: ignore[index]


async def test_closed_watch_rewatches_from_last_rv_without_relist() -> None:
    lw = ScriptedLW(
        [([], "5")],
        [[WatchEvent("ADDED", cm("a", "6"))], [WatchEvent("ADDED", cm("b", "7"))]],
    )
    inf = fast(SharedIndexInformer(lw))
    rec = Rec()
    inf.add_event_handler(rec)
    await run_until(inf, lambda: ("add", "b") in rec.events)
    assert lw.watch_rvs[:2] == ["5", "6"]
    assert len(lw.list_rvs) == 1


async def test_gone_relists_consistently_and_emits_tombstones() -> None:
    lw = ScriptedLW(
        [([cm("a", "1"), cm("b", "2")], "10"), ([cm("b", "20"), cm("c", "21")], "22")],
        [[Gone(410, "Expired", "too old")]],
    )
    inf = fast(SharedIndexInformer(lw))
    rec = Rec()
    inf.add_event_handler(rec)
    await run_until(inf, lambda: ("tombstone", "a") in rec.events)
    assert lw.list_rvs == ["0", ""]  # after 410: a consistent read
    assert rec.events[2:] == [("tombstone", "a"), ("update", "b"), ("add", "c")]
    assert sorted(inf.indexer.list_keys()) == ["ns/b", "ns/c"]


async def test_relist_of_unchanged_objects_is_quiet() -> None:
    lw = ScriptedLW(
        [([cm("a", "1")], "10"), ([cm("a", "1")], "10")],
        [[Gone(410, "Expired", "too old")]],
    )
    inf = fast(SharedIndexInformer(lw))
    rec = Rec()
    inf.add_event_handler(rec)
    await run_until(inf, lambda: len(lw.list_rvs) == 2)
    assert rec.events == [("add-initial", "a")]


async def test_list_errors_back_off_and_retry() -> None:
    lw = ScriptedLW(
        [TransportError("refused"), TransportError("refused"), ([cm("a", "1")], "3")], []
    )
    inf = fast(SharedIndexInformer(lw))
    await run_until(inf, inf.has_synced)
    assert len(lw.list_rvs) == 3


def test_backoff_grows_caps_and_resets() -> None:
    now = [0.0]
    b = Backoff(initial=0.8, factor=2, cap=30, jitter=0.0, reset_after=120, now=lambda: now[0])
    delays = [b.next() for _ in range(8)]
    assert delays == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30]
    now[0] = 500.0
    assert b.next() == 0.8
    j = Backoff(initial=1, jitter=1.0, rand=lambda: 0.5)
    assert j.next() == 1.5
