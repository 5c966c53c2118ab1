"""The reconcile runtime on the real apiserver: owners, backoff, requeue, metrics,
probes and leader election."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kuberay.kube import Client
from kuberay.reconcile import Manager, Request, Result
from kuberay.reconcile.options import ManagerOptions
from kuberay.workqueue import ItemExponentialFailureRateLimiter
from tests.helpers import eventually


def cm(name: str, ns: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns},
        **extra,
    }


class Recording:
    """A reconciler that records calls and defers to ``behaviour``."""

    def __init__(self, behaviour: Callable[[Request, int], Result] | None = None) -> None:
        self.calls: list[tuple[Request, float]] = []
        self.behaviour = behaviour

    async def reconcile(self, request: Request) -> Result:
        self.calls.append((request, time.monotonic()))
        n = sum(1 for r, _ in self.calls if r == request)
        if self.behaviour is not None:
            return self.behaviour(request, n)
        return Result()

    def count(self, request: Request) -> int:
        return sum(1 for r, _ in self.calls if r == request)


@contextlib.asynccontextmanager
async def running(mgr: Manager) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(mgr.run())
    try:
        yield task
    finally:
        mgr.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)


def manager(client: Client, namespace: str, **kw: Any) -> Manager:
    kw.setdefault("metrics_bind_address", "0")
    kw.setdefault("health_probe_bind_address", "0")
    return Manager(client, ManagerOptions(namespaces=[namespace], handle_signals=False, **kw))


async def test_owned_child_change_reconciles_owner(kclient: Client, namespace: str) -> None:
    owner = await kclient.create(cm("owner", namespace))
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
        "controller": True,
    }
    await kclient.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "child", "namespace": namespace, "ownerReferences": [ref]},
            "stringData": {"a": "b"},
        }
    )
    mgr = manager(kclient, namespace)
    rec = Recording()
    mgr.controller("owner-test").for_("v1", "ConfigMap").owns("v1", "Secret").complete(rec)
    req = Request(namespace, "owner")
    async with running(mgr):
        await eventually(lambda: rec.count(req) >= 1, message="initial reconcile")
        await asyncio.sleep(0.3)
        before = rec.count(req)
        await kclient.patch(
            "v1", "Secret", "child", {"metadata": {"labels": {"x": "y"}}}, namespace
        )
        await eventually(
            lambda: rec.count(req) > before, message="owner reconciled after child change"
        )
        # The child itself is never a request of this controller.
        assert all(r.name != "child" for r, _ in rec.calls)


async def test_error_backs_off_and_retries(kclient: Client, namespace: str) -> None:
    await kclient.create(cm("flaky", namespace))

    def fail_three_times(req: Request, n: int) -> Result:
        if n <= 3:
            raise RuntimeError(f"attempt {n} fails")
        return Result()

    mgr = manager(kclient, namespace)
    rec = Recording(fail_three_times)
    limiter = ItemExponentialFailureRateLimiter(0.2, 10.0)
    mgr.controller("flaky").for_("v1", "ConfigMap").with_options(rate_limiter=limiter).complete(rec)
    req = Request(namespace, "flaky")
    async with running(mgr):
        await eventually(lambda: rec.count(req) >= 4, timeout=60, message="retried until success")
        await asyncio.sleep(0.5)
        assert rec.count(req) == 4  # success stops the retries
    times = [t for r, t in rec.calls if r == req]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    # 0.2 s, 0.4 s, 0.8 s backoff (scheduling adds a little; on a busy machine, more).
    for gap, want in zip(gaps, [0.2, 0.4, 0.8], strict=True):
        assert want * 0.9 <= gap <= want + 2.0, gaps
    assert limiter.num_requeues(req) == 0  # forgotten after success


async def test_requeue_after_fires(kclient: Client, namespace: str) -> None:
    await kclient.create(cm("periodic", namespace))
    mgr = manager(kclient, namespace)
    rec = Recording(lambda req, n: Result(requeue_after=0.5) if n < 3 else Result())
    mgr.controller("periodic").for_("v1", "ConfigMap").complete(rec)
    req = Request(namespace, "periodic")
    async with running(mgr):
        await eventually(lambda: rec.count(req) >= 3, timeout=60)
    times = [t for r, t in rec.calls if r == req]
    assert 0.45 <= times[1] - times[0] <= 3.0
    assert 0.45 <= times[2] - times[1] <= 3.0


async def test_metrics_and_probes(kclient: Client, namespace: str) -> None:
    await kclient.create(cm("m", namespace))
    mgr = manager(
        kclient,
        namespace,
        metrics_bind_address="127.0.0.1:0",
        health_probe_bind_address="127.0.0.1:0",
    )
    rec = Recording()
    mgr.controller("metrics-test").for_("v1", "ConfigMap").complete(rec)
    async with running(mgr), aiohttp.ClientSession() as http:
        await eventually(lambda: rec.count(Request(namespace, "m")) >= 1)
        metrics_port = mgr.servers["metrics"].port
        probes_port = mgr.servers["probes"].port

        success = 'controller_runtime_reconcile_total{controller="metrics-test",result="success"}'

        async def counted() -> str | None:
            async with http.get(f"http://127.0.0.1:{metrics_port}/metrics") as resp:
                text = await resp.text()
            for line in text.splitlines():
                if line.startswith(success + " ") and float(line.split()[-1]) >= 1:
                    return text
            return None

        # The reconcile counters are bumped after the reconcile returns: poll for them.
        text = await eventually(counted, timeout=30, message="reconcile counted")
        for series in (
            'controller_runtime_reconcile_total{controller="metrics-test",result="success"}',
            'controller_runtime_reconcile_errors_total{controller="metrics-test"}',
            'controller_runtime_reconcile_time_seconds_bucket{controller="metrics-test"',
            'controller_runtime_max_concurrent_reconciles{controller="metrics-test"} 1.0',
            'controller_runtime_active_workers{controller="metrics-test"}',
            'workqueue_adds_total{controller="metrics-test",name="metrics-test"}',
            'workqueue_depth{controller="metrics-test",name="metrics-test",priority="0"}',
            'workqueue_queue_duration_seconds_bucket{controller="metrics-test"',
            'workqueue_work_duration_seconds_bucket{controller="metrics-test"',
            'workqueue_retries_total{controller="metrics-test",name="metrics-test"}',
            'workqueue_unfinished_work_seconds{controller="metrics-test",name="metrics-test"}',
            'workqueue_longest_running_processor_seconds{controller="metrics-test"',
            "rest_client_requests_total{",
        ):
            assert series in text, series
        for path in ("/healthz", "/readyz", "/readyz/informers", "/healthz/ping"):
            async with http.get(f"http://127.0.0.1:{probes_port}{path}") as resp:
                assert resp.status == 200, path
                assert (await resp.text()).strip() == "ok"
        async with http.get(f"http://127.0.0.1:{probes_port}/readyz/nope") as resp:
            assert resp.status == 404


async def test_leader_election_hands_over(kubeconfig_path: Path, namespace: str) -> None:
    clients = [await Client.from_kubeconfig(kubeconfig_path, qps=0) for _ in range(2)]
    await clients[0].create(cm("le", namespace))
    lease_id = "le-test"
    recs = [Recording(), Recording()]
    mgrs = []
    for client, rec in zip(clients, recs, strict=True):
        mgr = manager(
            client,
            namespace,
            leader_election=True,
            leader_election_id=lease_id,
            leader_election_namespace=namespace,
            lease_duration=4.0,
            renew_deadline=3.0,
            retry_period=0.5,
        )
        mgr.controller("le").for_("v1", "ConfigMap").complete(rec)
        mgrs.append(mgr)
    tasks = [asyncio.create_task(m.run()) for m in mgrs]
    try:
        req = Request(namespace, "le")
        await eventually(
            lambda: any(r.count(req) for r in recs), timeout=60, message="someone leads"
        )
        leader = 0 if recs[0].count(req) else 1
        standby = 1 - leader
        await asyncio.sleep(2.0)
        # Only the leader reconciles, even when the object changes.
        await clients[0].patch("v1", "ConfigMap", "le", {"data": {"a": "1"}}, namespace)
        await eventually(lambda: recs[leader].count(req) >= 2, timeout=60)
        assert recs[standby].count(req) == 0
        lease = await clients[0].get("coordination.k8s.io/v1", "Lease", lease_id, namespace)
        assert lease["spec"]["holderIdentity"] == mgrs[leader].elector.identity  # type: ignore[union-attr]

        # The leader stops (releasing the lease): the standby takes over within the lease time.
        stopped_at = time.monotonic()
        mgrs[leader].stop()
        await asyncio.wait_for(tasks[leader], 20)
        await eventually(
            lambda: mgrs[standby].leading.is_set(), timeout=60, message="standby leads"
        )
        # Released, not expired: the standby need not wait out the 4 s lease (the slack is
        # for a busy machine).
        assert time.monotonic() - stopped_at < 4.0 + 3.0
        await eventually(
            lambda: recs[standby].count(req) >= 1, timeout=60, message="standby took over"
        )
        lease = await clients[0].get("coordination.k8s.io/v1", "Lease", lease_id, namespace)
        assert lease["spec"]["holderIdentity"] == mgrs[standby].elector.identity  # type: ignore[union-attr]
        assert lease["spec"]["leaseTransitions"] >= 1
    finally:
        for m in mgrs:
            m.stop()
        for t in tasks:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(t, 20)
        for c in clients:
            await c.close()


async def test_leader_that_cannot_renew_steps_down(kclient: Client, namespace: str) -> None:
    """A leader whose lease is taken over (e.g. it was partitioned) stops its controllers."""
    await kclient.create(cm("steal", namespace))
    mgr = manager(
        kclient,
        namespace,
        leader_election=True,
        leader_election_id="steal",
        leader_election_namespace=namespace,
        lease_duration=3.0,
        renew_deadline=2.0,
        retry_period=0.5,
    )
    rec = Recording()
    mgr.controller("steal").for_("v1", "ConfigMap").complete(rec)
    task = asyncio.create_task(mgr.run())
    try:
        await eventually(lambda: mgr.leading.is_set(), timeout=60)
        # Someone else grabs the lease for a long time.
        lease = await kclient.get("coordination.k8s.io/v1", "Lease", "steal", namespace)
        lease["spec"]["holderIdentity"] = "intruder"
        lease["spec"]["leaseDurationSeconds"] = 3600
        await kclient.update(lease)
        from kuberay.reconcile import LeaderElectionLost

        with pytest.raises(LeaderElectionLost):
            await asyncio.wait_for(task, 60)
        assert not mgr.leading.is_set()
    finally:
        mgr.stop()
        if not task.done():
            task.cancel()


async def test_event_recorder_writes_and_aggregates(kclient: Client, namespace: str) -> None:
    """events.k8s.io/v1 (the default, KubeRay v1.7's API): repeats become a series; the
    core/v1 view the apiserver serves of the same objects is what ``kubectl`` shows."""
    from kuberay.reconcile import EventRecorder

    target = await kclient.create(cm("evt", namespace))
    recorder = EventRecorder(kclient, "test-controller")
    recorder.event(target, "Normal", "Synced", "all good", action="Reconcile")
    recorder.event(target, "Normal", "Synced", "all good", action="Reconcile")
    recorder.event(target, "Warning", "Broken", "spec.foo is wrong")
    await recorder.flush()
    await recorder.close()
    assert recorder.written == 3
    new_api, _ = await kclient.list_all("events.k8s.io/v1", "Event", namespace)
    by_reason = {e["reason"]: e for e in new_api}
    assert by_reason["Synced"]["series"]["count"] == 2  # repeats aggregated into one Event
    assert by_reason["Synced"]["regarding"]["uid"] == target["metadata"]["uid"]
    assert by_reason["Synced"]["reportingController"] == "test-controller"
    assert by_reason["Synced"]["action"] == "Reconcile"
    assert by_reason["Broken"]["type"] == "Warning"
    assert by_reason["Broken"]["note"] == "spec.foo is wrong"
    core, _ = await kclient.list_all("v1", "Event", namespace)
    by_reason = {e["reason"]: e for e in core}
    assert len(core) == 2
    assert by_reason["Broken"]["message"] == "spec.foo is wrong"
    assert by_reason["Synced"]["involvedObject"]["name"] == "evt"


async def test_core_v1_event_recorder_writes_and_aggregates(
    kclient: Client, namespace: str
) -> None:
    from kuberay.reconcile import CORE_V1, EventRecorder

    target = await kclient.create(cm("evt", namespace))
    recorder = EventRecorder(kclient, "test-controller", api=CORE_V1)
    recorder.event(target, "Normal", "Synced", "all good", action="Reconcile")
    recorder.event(target, "Normal", "Synced", "all good", action="Reconcile")
    recorder.event(target, "Warning", "Broken", "spec.foo is wrong")
    await recorder.flush()
    await recorder.close()
    events, _ = await kclient.list_all("v1", "Event", namespace)
    by_reason = {e["reason"]: e for e in events}
    assert by_reason["Synced"]["count"] == 2  # repeats are aggregated into one Event
    assert by_reason["Synced"]["involvedObject"]["uid"] == target["metadata"]["uid"]
    assert by_reason["Synced"]["reportingComponent"] == "test-controller"
    assert by_reason["Synced"]["action"] == "Reconcile"
    assert by_reason["Broken"]["type"] == "Warning"
    assert by_reason["Broken"]["message"] == "spec.foo is wrong"
    assert len(events) == 2


async def test_clean_stop_releases_lease_after_draining(kclient: Client, namespace: str) -> None:
    """A stop while a reconcile is in flight drains it, then clears the lease holder."""
    await kclient.create(cm("slow", namespace))
    started: list[float] = []
    finished: list[float] = []

    class Slow:
        async def reconcile(self, request: Request) -> Result:
            started.append(time.monotonic())
            await asyncio.sleep(3.0)
            finished.append(time.monotonic())
            return Result()

    mgr = manager(
        kclient,
        namespace,
        leader_election=True,
        leader_election_id="release",
        leader_election_namespace=namespace,
        lease_duration=15.0,
        renew_deadline=10.0,
        retry_period=1.0,
    )
    mgr.controller("slow").for_("v1", "ConfigMap").complete(Slow())
    task = asyncio.create_task(mgr.run())
    await eventually(lambda: mgr.leading.is_set(), timeout=60)
    await eventually(lambda: started, timeout=60, message="reconcile in flight")
    mgr.stop()
    await asyncio.wait_for(task, 30)
    assert finished, "the in-flight reconcile was drained, not cut"
    lease = await kclient.get("coordination.k8s.io/v1", "Lease", "release", namespace)
    assert lease["spec"]["holderIdentity"] == ""


async def test_leader_whose_renewals_stall_stops_writing_at_once_and_run_fails(
    kubeconfig_path: Path, namespace: str
) -> None:
    """The apiserver stops answering this leader's lease requests (a stalled or
    partitioned leader) and another identity takes the Lease. The leader steps down
    before its lease could have expired, issues no write from then on (no draining
    of queued keys), and ``run()`` fails with LeaderElectionLost."""
    from kuberay.reconcile import LeaderElectionLost

    client = await Client.from_kubeconfig(kubeconfig_path, qps=0)
    admin = await Client.from_kubeconfig(kubeconfig_path, qps=0)
    names = [f"w{i}" for i in range(10)]
    for name in names:
        await admin.create(cm(name, namespace))
    mgr = manager(
        client,
        namespace,
        leader_election=True,
        leader_election_id="stall",
        leader_election_namespace=namespace,
        lease_duration=4.0,
        renew_deadline=2.0,
        retry_period=0.5,
    )
    elector = mgr.elector
    assert elector is not None
    writes_while_leading = 0
    writes_after_loss = 0

    class Writer:
        """Keeps every ConfigMap busy: each reconcile patches it and requeues."""

        async def reconcile(self, request: Request) -> Result:
            nonlocal writes_while_leading, writes_after_loss
            await asyncio.sleep(0.02)
            leader_before = elector.is_leader and not elector.lease_expired()
            await client.patch(
                "v1",
                "ConfigMap",
                request.name,
                {"metadata": {"annotations": {"n": str(time.monotonic())}}},
                request.namespace,
            )
            if leader_before:
                writes_while_leading += 1
            else:
                writes_after_loss += 1  # the patch went out after the lease was gone
            return Result(requeue_after=0.01)

    mgr.controller("stall").for_("v1", "ConfigMap").complete(Writer())
    # Make the elector's own requests hang on demand; record its last good renewal.
    # Renewals run on their own thread with a detached client: patch that one too.
    lease_client = elector.client
    stalled = threading.Event()
    renewed_at: list[float] = []

    def patched(c: Client) -> Client:
        real_get, real_update = c.get, c.update

        async def get(*args: Any, **kw: Any) -> Any:
            if stalled.is_set():
                await asyncio.Event().wait()
            return await real_get(*args, **kw)

        async def update(*args: Any, **kw: Any) -> Any:
            result = await real_update(*args, **kw)
            renewed_at.append(time.monotonic())
            return result

        c.get = get  # type: ignore[method-assign]
        c.update = update  # type: ignore[method-assign]
        return c

    real_detached = lease_client.detached
    patched(lease_client)
    lease_client.detached = lambda **kw: patched(real_detached(**kw))  # type: ignore[method-assign]
    expired_at: list[float] = []

    async def watch_expiry() -> None:
        while not elector.lease_expired():
            await asyncio.sleep(0.02)
        expired_at.append(time.monotonic())

    task = asyncio.create_task(mgr.run())
    watcher = asyncio.create_task(watch_expiry())
    try:
        await eventually(
            lambda: writes_while_leading >= 20 and renewed_at, timeout=60, message="writing"
        )
        stalled.set()
        lease = await admin.get("coordination.k8s.io/v1", "Lease", "stall", namespace)
        lease["spec"]["holderIdentity"] = "intruder"
        await admin.update(lease)
        with pytest.raises(LeaderElectionLost):
            await asyncio.wait_for(task, 60)
        assert writes_after_loss == 0, "the leader kept writing after losing its lease"
        assert not mgr.leading.is_set()
        # Stepped down within the renew deadline, so before the lease could expire.
        await asyncio.wait_for(watcher, 10)
        last_renewal = max(t for t in renewed_at if t < expired_at[0])
        assert expired_at[0] - last_renewal < 4.0
        # Nothing lingers: no write reaches the apiserver after run() ended.
        writes = client.stats.writes
        before = {n: (await admin.get("v1", "ConfigMap", n, namespace))["metadata"] for n in names}
        await asyncio.sleep(0.5)
        after = {n: (await admin.get("v1", "ConfigMap", n, namespace))["metadata"] for n in names}
        assert {n: m["resourceVersion"] for n, m in before.items()} == {
            n: m["resourceVersion"] for n, m in after.items()
        }
        assert client.stats.writes == writes
        lease = await admin.get("coordination.k8s.io/v1", "Lease", "stall", namespace)
        assert lease["spec"]["holderIdentity"] == "intruder", "a lost lease is not released"
    finally:
        mgr.stop()
        for t in (task, watcher):
            if not t.done():
                t.cancel()
        await asyncio.wait([task, watcher])
        await client.close()
        await admin.close()
