"""Crash and failover of the operator process: SIGKILL mid scale-up then restart, and two
replicas with leader election where the leader is stopped. Each test runs its own
operators (leader election on, Lease in the operator's namespace)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import Any

from kuberay.kube import Client
from tests.e2e.conftest import E2ECluster, OperatorIdentity, OperatorStarter
from tests.e2e.harness import (
    LEASE_NAME,
    OperatorProcess,
    cluster_pods,
    node_type,
    record_timing,
    sample_raycluster,
    set_replicas,
    workers,
)
from tests.helpers import eventually

RAY = "ray.io/v1"
FAILOVER_BUDGET = 20.0


async def wait_workers(
    client: Client, namespace: str, name: str, n: int, timeout: float
) -> list[dict[str, Any]]:
    async def exact() -> list[dict[str, Any]] | None:
        ws = await workers(client, namespace, name)
        return ws if len(ws) == n else None

    result: list[dict[str, Any]] = await eventually(
        exact, timeout=timeout, interval=0.1, message=f"{n} workers of {name}"
    )
    return result


async def lease_holder(client: Client, namespace: str) -> str:
    lease = await client.get("coordination.k8s.io/v1", "Lease", LEASE_NAME, namespace)
    return str((lease.get("spec") or {}).get("holderIdentity") or "")


async def test_sigkill_mid_scale_up_then_restart(
    e2e_cluster: E2ECluster,
    operator_identity: OperatorIdentity,
    start_operator: OperatorStarter,
    admin: Client,
    ns: str,
) -> None:
    """(d) SIGKILL while scaling 2 -> 30; the restarted operator ends at exactly 30."""
    # a low client-side rate limit stretches the scale-up so the kill lands mid-way
    first = start_operator("crash", extra_args=["--qps=10", "--burst=1"])
    await first.wait_ready(e2e_cluster.timeout(60))
    await first.wait_leading(e2e_cluster.timeout(60))
    await admin.create(sample_raycluster("crash", ns, replicas=2, max_replicas=40))
    await wait_workers(admin, ns, "crash", 2, e2e_cluster.timeout(60))

    await set_replicas(admin, ns, "crash", 30)

    async def some_new_workers() -> bool:
        return len(await workers(admin, ns, "crash")) >= 6

    await eventually(some_new_workers, timeout=e2e_cluster.timeout(30), interval=0.02)
    first.kill()
    killed_at = time.monotonic()
    await asyncio.sleep(1.0)  # anything in flight has landed
    at_kill = {p["metadata"]["name"] for p in await workers(admin, ns, "crash")}
    assert 6 <= len(at_kill) < 30, f"kill did not land mid scale-up: {len(at_kill)} workers"

    second = start_operator("crash-restart")
    await second.wait_ready(e2e_cluster.timeout(60))
    # the dead leader never released its Lease: the new one waits for it to expire
    taken = await second.wait_leading(e2e_cluster.timeout(60))
    record_timing("SIGKILLed leader -> restarted operator leading", time.monotonic() - killed_at)
    final = await wait_workers(admin, ns, "crash", 30, e2e_cluster.timeout(60))
    record_timing("restart -> 30 workers (incl. lease wait)", time.monotonic() - killed_at)
    assert taken > 0

    await asyncio.sleep(2.0)  # settle: nothing more is created or deleted
    pods = await cluster_pods(admin, ns, "crash", include_terminating=True)
    names = [p["metadata"]["name"] for p in pods]
    assert len(names) == len(set(names)) == 31, names
    assert sorted(node_type(p) for p in pods).count("head") == 1
    assert not [p for p in pods if p["metadata"].get("deletionTimestamp")]
    assert at_kill <= {p["metadata"]["name"] for p in final}, "pods made before the kill went"
    rc = await admin.get(RAY, "RayCluster", "crash", ns)
    assert rc["spec"]["workerGroupSpecs"][0]["replicas"] == 30


async def test_leader_failover_on_sigterm(
    e2e_cluster: E2ECluster,
    operator_identity: OperatorIdentity,
    start_operator: OperatorStarter,
    admin: Client,
    ns: str,
) -> None:
    """(e) two replicas: only the leader reconciles; SIGTERM it, the other takes over."""
    ops = [start_operator("replica-a"), start_operator("replica-b")]
    for op in ops:
        await op.wait_ready(e2e_cluster.timeout(60))

    async def one_leader() -> OperatorProcess | None:
        leading = [op for op in ops if await op.is_leader()]
        return leading[0] if len(leading) == 1 else None

    leader: OperatorProcess = await eventually(
        one_leader, timeout=e2e_cluster.timeout(60), message="one leader"
    )
    follower = next(op for op in ops if op is not leader)
    holder = await lease_holder(admin, operator_identity.namespace)
    assert holder

    await admin.create(sample_raycluster("failover", ns, replicas=1))
    await wait_workers(admin, ns, "failover", 1, e2e_cluster.timeout(60))
    await asyncio.sleep(0.5)
    assert await leader.reconciles() > 0
    assert await follower.reconciles() == 0, "the follower reconciled without the lease"
    assert not await follower.is_leader()

    stopped = time.monotonic()
    code = await leader.terminate_async()
    record_timing("leader SIGTERM -> exited", time.monotonic() - stopped)
    assert code == 0, f"the leader exited with {code} on SIGTERM"
    await set_replicas(admin, ns, "failover", 3)
    await wait_workers(admin, ns, "failover", 3, FAILOVER_BUDGET)
    failover = record_timing(
        "failover: leader SIGTERM -> new change reconciled", time.monotonic() - stopped
    )
    assert failover < FAILOVER_BUDGET
    assert await follower.is_leader()
    assert await follower.reconciles() > 0
    assert await lease_holder(admin, operator_identity.namespace) not in ("", holder)


async def test_leader_paused_past_its_lease_steps_down_on_resume(
    e2e_cluster: E2ECluster,
    operator_identity: OperatorIdentity,
    start_operator: OperatorStarter,
    admin: Client,
    ns: str,
) -> None:
    """(f) the leader is frozen (SIGSTOP) past its 15 s lease; the other replica takes
    over and reconciles a new RayCluster. Resumed, the old leader must not act on
    what it missed: it writes nothing, logs "leader election lost" and exits 1."""
    a = start_operator("paused-a")
    await a.wait_ready(e2e_cluster.timeout(60))
    await a.wait_leading(e2e_cluster.timeout(60))
    b = start_operator("paused-b")
    await b.wait_ready(e2e_cluster.timeout(60))
    os.kill(a.pid, signal.SIGSTOP)
    try:
        await b.wait_leading(e2e_cluster.timeout(60))
        await admin.create(sample_raycluster("paused", ns, replicas=1))
        await wait_workers(admin, ns, "paused", 1, e2e_cluster.timeout(60))
    finally:
        os.kill(a.pid, signal.SIGCONT)
    assert a.popen is not None
    code = await asyncio.to_thread(a.popen.wait, 30)
    assert code == 1, f"the paused leader exited with {code}:\n{a.log_tail()}"
    assert "leader election lost" in a.log_tail()
    await asyncio.sleep(1.0)  # anything the old leader might have sent has landed
    pods = await cluster_pods(admin, ns, "paused", include_terminating=True)
    assert sorted(node_type(p) for p in pods) == ["head", "worker"], [
        p["metadata"]["name"] for p in pods
    ]
    assert await b.is_leader()


async def test_watches_recover_after_apiserver_restart(
    needs_local_cluster: Any,
    e2e_cluster: E2ECluster,
    start_operator: OperatorStarter,
    admin: Client,
    ns: str,
) -> None:
    """The apiserver goes away (~10 s: it is SIGKILLed after 10 s of draining) and comes
    back: the operator's informers re-watch and a later change is reconciled.

    Leader election is off here: an outage longer than the renew deadline (10 s) makes a
    leader exit with code 1 (as controller-runtime's do), which a Deployment restarts.
    """
    op = start_operator("apiserver-restart", leader_election=False)
    await op.wait_ready(e2e_cluster.timeout(60))
    await admin.create(sample_raycluster("restart", ns, replicas=1))
    await wait_workers(admin, ns, "restart", 1, e2e_cluster.timeout(60))
    began = time.monotonic()
    await asyncio.to_thread(needs_local_cluster.restart_apiserver)
    record_timing("apiserver restart (stop + start)", time.monotonic() - began)
    await admin.close()  # its pooled connections died with the apiserver

    began = time.monotonic()

    async def patched() -> bool:
        await set_replicas(admin, ns, "restart", 3)
        return True

    await eventually(patched, timeout=60, message="patch after the apiserver restart")
    await wait_workers(admin, ns, "restart", 3, e2e_cluster.timeout(60))
    record_timing("after apiserver restart: scale 1 -> 3", time.monotonic() - began)
    assert op.alive
    assert await op.probe("/readyz") == 200
