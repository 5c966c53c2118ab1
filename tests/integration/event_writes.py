"""Every write of an Event in a namespace, as the apiserver saw it (a watch): what a test
counts to prove how often Events are written."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, NamedTuple

from kuberay.kube import Client


class EventWrite(NamedTuple):
    """One create (``ADDED``) or update/patch (``MODIFIED``) of an Event."""

    type: str
    name: str
    reason: str
    count: int  # series.count, 1 without a series


class EventWrites:
    """The Event writes seen so far (filled by :func:`watch_event_writes`)."""

    def __init__(self) -> None:
        self.seen: list[EventWrite] = []

    def of(self, reason: str) -> list[EventWrite]:
        """The writes of Events with ``reason``, in order."""
        return [w for w in self.seen if w.reason == reason]


@contextlib.asynccontextmanager
async def watch_event_writes(client: Client, namespace: str) -> AsyncIterator[EventWrites]:
    """Watch ``namespace``'s events.k8s.io Events from now on for the ``with`` block."""
    writes = EventWrites()
    start = await client.list("events.k8s.io/v1", "Event", namespace)
    rv = start["metadata"]["resourceVersion"]

    async def run() -> None:
        async for ev in client.watch(
            "events.k8s.io/v1", "Event", namespace, resource_version=rv, timeout_seconds=3600
        ):
            if ev.type not in ("ADDED", "MODIFIED"):
                continue
            obj: dict[str, Any] = ev.object
            count = int((obj.get("series") or {}).get("count") or 1)
            writes.seen.append(EventWrite(ev.type, obj["metadata"]["name"], obj["reason"], count))

    task = asyncio.create_task(run())
    try:
        yield writes
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
