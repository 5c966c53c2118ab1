"""Leader election on the real apiserver when the leader's event loop is starved.

The leader's main loop is blocked (a synchronous stall far longer than the
lease) while a second candidate -- another process, so the stall does not freeze
it too -- campaigns for the same Lease: the leader must keep its lease and go on
working. A leader that truly stops (its process frozen with SIGSTOP) must be
replaced, but only once its lease has expired.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kuberay.kube import Client
from kuberay.reconcile import LeaderElector, Manager, Request, Result
from kuberay.reconcile.options import ManagerOptions
from tests.helpers import eventually

REPO = Path(__file__).resolve().parents[3]
LEASE, RENEW, RETRY = 4.0, 3.0, 0.5


class Candidate:
    """The lease_candidate module in a subprocess; its stdout lines are collected."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self.lines.append(line.decode().strip())

    async def said(self, line: str, timeout: float = 60) -> None:
        """Wait (bounded) until the candidate has printed ``line``."""
        await eventually(lambda: line in self.lines, timeout=timeout, message=f"said {line!r}")


@contextlib.asynccontextmanager
async def candidate(
    kubeconfig: Path, namespace: str, name: str, identity: str
) -> AsyncIterator[Candidate]:
    """Run a candidate process for Lease ``namespace/name``; killed on exit."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.integration.leaderelection.lease_candidate",
        str(kubeconfig),
        namespace,
        name,
        identity,
        str(LEASE),
        str(RENEW),
        str(RETRY),
        cwd=REPO,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    cand = Candidate(proc)
    try:
        await cand.said("campaigning")
        yield cand
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGCONT)
            proc.kill()
        await proc.wait()
        await asyncio.wait({cand._reader}, timeout=10)


def micro(ts: str) -> dt.datetime:
    """A Lease MicroTime."""
    return dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC)


class Counting:
    """Reconciler that counts reconciles per key."""

    def __init__(self) -> None:
        self.seen: dict[Request, int] = {}

    async def reconcile(self, request: Request) -> Result:
        self.seen[request] = self.seen.get(request, 0) + 1
        return Result()


async def lease_spec(client: Client, namespace: str, name: str) -> dict[str, Any]:
    lease = await client.get("coordination.k8s.io/v1", "Lease", name, namespace)
    spec: dict[str, Any] = lease["spec"]
    return spec


async def test_a_leader_whose_loop_stalls_past_its_lease_keeps_leading(
    kubeconfig_path: Path, namespace: str, kclient: Client
) -> None:
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0)
    await kclient.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": namespace},
        }
    )
    mgr = Manager(
        client,
        ManagerOptions(
            namespaces=[namespace],
            handle_signals=False,
            metrics_bind_address="0",
            health_probe_bind_address="0",
            leader_election=True,
            leader_election_id="stall",
            leader_election_namespace=namespace,
            lease_duration=LEASE,
            renew_deadline=RENEW,
            retry_period=RETRY,
        ),
    )
    rec = Counting()
    mgr.controller("stall").for_("v1", "ConfigMap").complete(rec)
    req = Request(namespace, "cm")
    task = asyncio.create_task(mgr.run())
    try:
        await eventually(lambda: rec.seen.get(req, 0) >= 1, timeout=60, message="leading")
        assert mgr.elector is not None
        me = mgr.elector.identity
        async with candidate(kubeconfig_path, namespace, "stall", "other") as other:
            before = await lease_spec(kclient, namespace, "stall")
            assert before["holderIdentity"] == me
            # The whole main loop stalls for twice the lease duration: nothing on it
            # runs, reconciles included. Only the renewal thread can keep the lease.
            stalled_from = dt.datetime.now(dt.UTC)
            time.sleep(2 * LEASE)
            after = await lease_spec(kclient, namespace, "stall")
            assert after["holderIdentity"] == me, "the other candidate took the lease"
            assert after["leaseTransitions"] == before["leaseTransitions"]
            # It was renewed while the loop stood still, after the point where the
            # lease would have run out.
            assert micro(after["renewTime"]) > stalled_from + dt.timedelta(seconds=LEASE)
            assert not mgr.elector.lease_expired()
            assert not task.done()
            # Still the leader a lease duration later, and still working.
            await kclient.patch("v1", "ConfigMap", "cm", {"data": {"a": "1"}}, namespace)
            await eventually(lambda: rec.seen.get(req, 0) >= 2, timeout=60, message="reconciled")
            deadline = time.monotonic() + LEASE
            while time.monotonic() < deadline:
                assert "leading" not in other.lines, "a second leader while the first is alive"
                assert (await lease_spec(kclient, namespace, "stall"))["holderIdentity"] == me
                await asyncio.sleep(RETRY)
            assert not task.done()
    finally:
        mgr.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)
        await client.close()


async def test_a_frozen_leader_is_replaced_once_its_lease_expired(
    kubeconfig_path: Path, namespace: str, kclient: Client
) -> None:
    async with candidate(kubeconfig_path, namespace, "frozen", "first") as first:
        await first.said("leading")
        client = await Client.from_kubeconfig(kubeconfig_path, qps=0)
        second = LeaderElector(
            client,
            namespace,
            "frozen",
            identity="second",
            lease_duration=LEASE,
            renew_deadline=RENEW,
            retry_period=RETRY,
        )
        leading = asyncio.Event()

        async def lead() -> None:
            leading.set()
            await asyncio.Event().wait()

        election = asyncio.create_task(second.run(lead))
        try:
            # While the first renews, the second only waits, however long.
            deadline = time.monotonic() + 2 * LEASE
            while time.monotonic() < deadline:
                assert not leading.is_set(), "took the lease of a live leader"
                await asyncio.sleep(RETRY)
            assert (await lease_spec(kclient, namespace, "frozen"))["holderIdentity"] == "first"
            first.proc.send_signal(signal.SIGSTOP)
            # Its last renewal is what the Lease says once it is frozen.
            last = micro((await lease_spec(kclient, namespace, "frozen"))["renewTime"])
            await eventually(leading.is_set, timeout=60, message="the second took over")
            spec = await lease_spec(kclient, namespace, "frozen")
            assert spec["holderIdentity"] == "second"
            assert spec["leaseTransitions"] >= 1
            # Not before the frozen leader's lease had run out.
            assert micro(spec["acquireTime"]) - last >= dt.timedelta(seconds=LEASE)
        finally:
            election.cancel()
            await asyncio.wait({election})
            await client.close()


@pytest.fixture(autouse=True)
def _no_leftover_threads() -> Any:
    """Renewal threads end with their elector."""
    yield
    import threading

    assert not [t for t in threading.enumerate() if t.name.startswith("lease-renewal")]
