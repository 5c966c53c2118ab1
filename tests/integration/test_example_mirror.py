"""The ConfigMap mirror example controller against the real apiserver.

The Manager runs in-process as a task. Namespaces may never finish deleting (the local
control plane has no kube-controller-manager), so every test makes uniquely named ones;
deleted (Terminating) namespaces are no longer targets, and each manager only handles
sources in its test's namespace, so earlier tests do not leak into later ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
import urllib.request
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from examples.configmap_mirror import (
    COPIED_FROM_ANNOTATION,
    COPY_OF_LABEL,
    ENABLED_LABEL,
    LEADER_ELECTION_ID,
    REASON_FAILED,
    REASON_MIRRORED,
    SOURCE_LABEL,
    SOURCE_RV_ANNOTATION,
    STATUS_ANNOTATION,
    ConfigMapMirror,
    add_to_manager,
)
from kuberay.kube import Client, NotFound
from kuberay.reconcile import Manager, ManagerOptions, Request
from tests.helpers import eventually
from tests.integration.operator_harness import wait_for

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class World:
    """Helpers to drive and inspect the cluster; namespaces made here are deleted after."""

    kclient: Client
    source_ns: str
    namespaces: list[str] = field(default_factory=list)

    async def make_namespace(self, *, enabled: bool = True) -> str:
        name = f"mirror-{uuid.uuid4().hex[:8]}"
        labels = {ENABLED_LABEL: "true"} if enabled else {}
        await self.kclient.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}
        )
        self.namespaces.append(name)
        return name

    async def label_namespace(self, name: str, value: str | None) -> None:
        await self.kclient.patch(
            "v1", "Namespace", name, {"metadata": {"labels": {ENABLED_LABEL: value}}}
        )

    async def make_source(self, name: str, data: dict[str, str]) -> Obj:
        return await self.kclient.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": name,
                    "namespace": self.source_ns,
                    "labels": {SOURCE_LABEL: "true"},
                },
                "data": data,
            }
        )

    async def get(self, namespace: str, name: str) -> Obj | None:
        try:
            return await self.kclient.get("v1", "ConfigMap", name, namespace)
        except NotFound:
            return None

    async def wait_copy(self, namespace: str, name: str, data: dict[str, str]) -> Obj:
        copy: Obj = await wait_for(
            lambda: self.get(namespace, name),
            lambda got: got is not None and got.get("data") == data,
            timeout=30,
            interval=0.1,
            message=f"copy {namespace}/{name} with {data}",
        )
        return copy

    async def wait_gone(self, namespace: str, name: str) -> None:
        await wait_for(
            lambda: self.get(namespace, name),
            lambda got: got is None,
            timeout=30,
            interval=0.1,
            message=f"{namespace}/{name} deleted",
        )

    async def status(self, name: str) -> Obj | None:
        src = await self.get(self.source_ns, name)
        raw = ((src or {}).get("metadata") or {}).get("annotations", {}).get(STATUS_ANNOTATION)
        return json.loads(raw) if raw else None

    async def wait_status(self, name: str, namespaces: list[str]) -> Obj:
        """Wait until the status lists exactly ``namespaces`` among this test's namespaces."""
        ours = set(self.namespaces)

        def lists(st: Obj | None) -> bool:
            return st is not None and sorted(set(st["namespaces"]) & ours) == sorted(namespaces)

        status: Obj = await wait_for(
            lambda: self.status(name),
            lists,
            timeout=30,
            interval=0.1,
            message=f"status of {name} lists {namespaces}",
        )
        return status

    async def events(self, name: str, reason: str) -> list[Obj]:
        page = await self.kclient.list(
            "v1", "Event", self.source_ns, field_selector=f"involvedObject.name={name}"
        )
        return [e for e in page.get("items") or [] if e.get("reason") == reason]


@dataclass(kw_only=True)
class Mirror(World):
    """A World with a running manager and the mirror controller."""

    mgr: Manager
    reconciler: ConfigMapMirror


@pytest.fixture
async def world(kclient: Client, namespace: str) -> AsyncIterator[World]:
    env = World(kclient, namespace)
    try:
        yield env
    finally:
        for ns in env.namespaces:
            with contextlib.suppress(Exception):
                await kclient.delete("v1", "Namespace", ns)


@pytest.fixture
async def mirror(kubeconfig_path: Path, world: World) -> AsyncIterator[Mirror]:
    mgr = await Manager.from_kubeconfig(
        str(kubeconfig_path),
        ManagerOptions(
            handle_signals=False, metrics_bind_address="0", health_probe_bind_address="0"
        ),
    )
    reconciler = add_to_manager(mgr, source_namespace=world.source_ns)
    task = asyncio.get_running_loop().create_task(mgr.run())
    try:
        leading = asyncio.ensure_future(mgr.leading.wait())
        await asyncio.wait({task, leading}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        leading.cancel()
        if task.done():
            task.result()  # raises what stopped the manager
        assert mgr.leading.is_set(), "manager did not start its controllers in 60s"
        yield Mirror(
            world.kclient, world.source_ns, world.namespaces, mgr=mgr, reconciler=reconciler
        )
    finally:
        mgr.stop()
        await asyncio.wait_for(task, timeout=60)
        await mgr.client.close()


async def test_mirrors_into_labelled_namespaces_with_status_and_event(mirror: Mirror) -> None:
    a = await mirror.make_namespace()
    b = await mirror.make_namespace()
    off = await mirror.make_namespace(enabled=False)
    src = await mirror.make_source("settings", {"color": "blue"})

    for ns in (a, b):
        copy = await mirror.wait_copy(ns, "settings", {"color": "blue"})
        meta = copy["metadata"]
        assert meta["labels"][COPY_OF_LABEL] == f"{mirror.source_ns}.settings"
        assert meta["annotations"][COPIED_FROM_ANNOTATION] == f"{mirror.source_ns}/settings"
        assert meta["annotations"][SOURCE_RV_ANNOTATION] == src["metadata"]["resourceVersion"]
        assert SOURCE_LABEL not in meta["labels"]
        assert not meta.get("ownerReferences")

    status = await mirror.wait_status("settings", sorted([a, b]))
    assert status["copies"] == len(status["namespaces"])
    assert "failed" not in status
    assert await mirror.get(off, "settings") is None
    # The source's own status write did not make it a copy of itself.
    source = await mirror.get(mirror.source_ns, "settings")
    assert source is not None and COPY_OF_LABEL not in source["metadata"]["labels"]

    events: list[Obj] = await eventually(
        lambda: mirror.events("settings", REASON_MIRRORED), message="Mirrored event"
    )
    assert events[0]["type"] == "Normal"
    assert events[0]["involvedObject"]["kind"] == "ConfigMap"
    # events.k8s.io/v1 (the default) fills reportingController/reportingComponent, core/v1
    # recorders source.component: either names the mirror.
    event = events[0]
    reporter = event.get("reportingComponent") or (event.get("source") or {}).get("component")
    assert reporter == "configmap-mirror", event


async def test_copies_follow_source_and_namespace_labels(mirror: Mirror) -> None:
    a = await mirror.make_namespace()
    b = await mirror.make_namespace()
    await mirror.make_source("app", {"k": "1"})
    await mirror.wait_copy(a, "app", {"k": "1"})
    await mirror.wait_copy(b, "app", {"k": "1"})

    # An update of the source reaches every copy, with the new resourceVersion.
    updated = await mirror.kclient.patch(
        "v1", "ConfigMap", "app", {"data": {"k": "2", "extra": "x"}}, mirror.source_ns
    )
    for ns in (a, b):
        copy = await mirror.wait_copy(ns, "app", {"k": "2", "extra": "x"})
        rv = copy["metadata"]["annotations"][SOURCE_RV_ANNOTATION]
        assert rv == updated["metadata"]["resourceVersion"]
    # A key removed from the source is removed from the copies.
    await mirror.kclient.patch(
        "v1", "ConfigMap", "app", {"data": {"extra": None}}, mirror.source_ns
    )
    await mirror.wait_copy(a, "app", {"k": "2"})

    # A namespace labelled later gets a copy.
    c = await mirror.make_namespace(enabled=False)
    await asyncio.sleep(0.5)
    assert await mirror.get(c, "app") is None
    await mirror.label_namespace(c, "true")
    await mirror.wait_copy(c, "app", {"k": "2"})
    await mirror.wait_status("app", sorted([a, b, c]))

    # A namespace losing its label loses its copy.
    await mirror.label_namespace(b, None)
    await mirror.wait_gone(b, "app")
    await mirror.wait_status("app", sorted([a, c]))

    # A copy deleted by hand comes back; one edited by hand is restored.
    await mirror.kclient.delete("v1", "ConfigMap", "app", a)
    await mirror.wait_copy(a, "app", {"k": "2"})
    await mirror.kclient.patch("v1", "ConfigMap", "app", {"data": {"k": "hacked"}}, c)
    await mirror.wait_copy(c, "app", {"k": "2"})


async def test_deleting_source_or_removing_its_label_deletes_copies(mirror: Mirror) -> None:
    a = await mirror.make_namespace()
    b = await mirror.make_namespace()
    await mirror.make_source("gone", {"x": "1"})
    await mirror.make_source("unlabelled", {"y": "1"})
    for ns in (a, b):
        await mirror.wait_copy(ns, "gone", {"x": "1"})
        await mirror.wait_copy(ns, "unlabelled", {"y": "1"})
    await mirror.wait_status("unlabelled", sorted([a, b]))

    await mirror.kclient.delete("v1", "ConfigMap", "gone", mirror.source_ns)
    for ns in (a, b):
        await mirror.wait_gone(ns, "gone")

    await mirror.kclient.patch(
        "v1",
        "ConfigMap",
        "unlabelled",
        {"metadata": {"labels": {SOURCE_LABEL: None}}},
        mirror.source_ns,
    )
    for ns in (a, b):
        await mirror.wait_gone(ns, "unlabelled")
    # The former source keeps its data but loses the status annotation.

    async def status_cleared() -> bool:
        return await mirror.status("unlabelled") is None

    await eventually(status_cleared, message="status annotation removed")
    former = await mirror.get(mirror.source_ns, "unlabelled")
    assert former is not None and former["data"] == {"y": "1"}


async def test_second_reconcile_over_unchanged_world_writes_nothing(mirror: Mirror) -> None:
    a = await mirror.make_namespace()
    b = await mirror.make_namespace()
    await mirror.make_source("steady", {"k": "v"})
    await mirror.wait_copy(a, "steady", {"k": "v"})
    await mirror.wait_copy(b, "steady", {"k": "v"})
    await mirror.wait_status("steady", sorted([a, b]))
    await eventually(lambda: mirror.events("steady", REASON_MIRRORED), message="Mirrored event")
    req = Request(mirror.source_ns, "steady")
    await eventually(
        lambda: mirror.reconciler.expectations.satisfied(str(req)), message="cache caught up"
    )
    await mirror.reconciler.recorder.flush()

    stats = mirror.mgr.client.stats
    writes, requests = stats.writes, stats.total
    assert writes > 0  # the controller did the mirroring with this client
    for _ in range(2):
        result = await mirror.reconciler.reconcile(req)
        assert not result.requeue and not result.requeue_after
    await mirror.reconciler.recorder.flush()
    assert stats.writes == writes, stats.snapshot()
    # Reads come from the cache: no request at all, not even a GET.
    assert stats.total == requests, stats.snapshot()


async def test_foreign_configmap_is_not_overwritten(mirror: Mirror) -> None:
    a = await mirror.make_namespace()
    taken = await mirror.make_namespace()
    await mirror.kclient.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "shared", "namespace": taken},
            "data": {"mine": "yes"},
        }
    )
    await mirror.make_source("shared", {"k": "v"})
    await mirror.wait_copy(a, "shared", {"k": "v"})

    async def failed_listed() -> Obj | None:
        st = await mirror.status("shared")
        return st if st is not None and taken in st.get("failed", []) else None

    status: Obj = await eventually(failed_listed, message="status lists the failed namespace")
    assert taken not in status["namespaces"]
    foreign = await mirror.get(taken, "shared")
    assert foreign is not None and foreign["data"] == {"mine": "yes"}
    events: list[Obj] = await eventually(
        lambda: mirror.events("shared", REASON_FAILED), message="MirrorFailed event"
    )
    assert events[0]["type"] == "Warning"
    assert taken in events[0]["message"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _http_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return int(resp.status)
    except OSError:
        return 0


async def test_command_line_with_leader_election_stops_cleanly(
    kubeconfig_path: Path, world: World
) -> None:
    namespace, kclient = world.source_ns, world.kclient
    target = await world.make_namespace()
    probe = _free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "examples.configmap_mirror",
        "--kubeconfig",
        str(kubeconfig_path),
        "--source-namespace",
        namespace,
        "--metrics-bind-address",
        "0",
        "--health-probe-bind-address",
        f"127.0.0.1:{probe}",
        "--leader-elect",
        "--leader-election-namespace",
        namespace,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:

        async def ready() -> bool:
            url = f"http://127.0.0.1:{probe}/readyz"
            return await asyncio.to_thread(_http_status, url) == 200

        await eventually(ready, timeout=60, message="/readyz answers 200")
        lease: Obj = await eventually(
            lambda: kclient.get("coordination.k8s.io/v1", "Lease", LEADER_ELECTION_ID, namespace),
            message="Lease created",
        )
        assert lease["spec"]["holderIdentity"]
        await world.make_source("cli", {"k": "v"})
        await world.wait_copy(target, "cli", {"k": "v"})
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, err.decode()[-2000:]
