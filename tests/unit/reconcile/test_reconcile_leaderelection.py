"""LeaderElector timing on an injected clock: the renew deadline is a hard bound, and
failures are reported as what they are."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
import structlog

from kuberay.kube import NotFound
from kuberay.reconcile import LeaderElectionLost, LeaderElector
from kuberay.workqueue import FakeClock


async def settle(rounds: int = 50) -> None:
    """Let every runnable task run until it blocks again."""
    for _ in range(rounds):
        await asyncio.sleep(0)


class FakeLeases:
    """Just enough of Client for one Lease: get/create/update, with a switch to make
    GETs hang (a stalled apiserver) or raise."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.hang = False
        self.raise_once: Exception | None = None
        self.hung_cancelled = 0
        self.updates = 0
        self.gets = 0

    async def get(self, api_version: str, kind: str, name: str, namespace: str) -> Any:
        self.gets += 1
        if self.raise_once is not None:
            exc, self.raise_once = self.raise_once, None
            raise exc
        if self.hang:
            try:
                await asyncio.get_running_loop().create_future()
            except asyncio.CancelledError:
                self.hung_cancelled += 1
                raise
        if self.lease is None:
            raise NotFound(404, "NotFound", "no lease")
        return copy.deepcopy(self.lease)

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        self.lease = copy.deepcopy(body)
        return copy.deepcopy(body)

    async def update(self, body: dict[str, Any]) -> dict[str, Any]:
        self.updates += 1
        self.lease = copy.deepcopy(body)
        return copy.deepcopy(body)


class Leading:
    """An on_started_leading that runs until cancelled, recording what happened."""

    def __init__(self) -> None:
        self.started = False
        self.cancelled = False

    async def __call__(self) -> None:
        self.started = True
        try:
            await asyncio.get_running_loop().create_future()
        except asyncio.CancelledError:
            self.cancelled = True
            raise


def elector(leases: FakeLeases, clock: FakeClock) -> LeaderElector:
    return LeaderElector(
        leases,  # type: ignore[arg-type]
        "ns",
        "lease",
        identity="me",
        lease_duration=15.0,
        renew_deadline=10.0,
        retry_period=2.0,
        clock=clock,
    )


async def test_a_renew_stalled_in_flight_is_cut_at_the_renew_deadline() -> None:
    """A GET that never answers does not keep the leader leading past the deadline
    (and so past the lease): the in-flight request is cancelled at 10 s."""
    clock, leases, leading = FakeClock(), FakeLeases(), Leading()
    le = elector(leases, clock)
    with structlog.testing.capture_logs() as logs:
        run = asyncio.create_task(le.run(leading))
        await settle()
        assert leading.started and le.is_leader
        leases.hang = True
        clock.advance(2.0)  # the next renew round starts and its GET hangs
        await settle()
        clock.advance(7.9)
        await settle()
        assert not run.done() and le.is_leader, "still within the renew deadline"
        assert not le.lease_expired()
        updates_before = leases.updates
        clock.advance(0.1)  # renew_deadline after the last successful renewal (t=0)
        assert le.lease_expired(), "known from the clock before the elector task runs"
        await settle()
        assert run.done(), "the leader stepped down at the deadline"
        with pytest.raises(LeaderElectionLost):
            run.result()
    assert leases.hung_cancelled == 1, "the in-flight renew was cancelled"
    assert leading.cancelled, "leader-only work was cancelled"
    assert not le.is_leader
    assert leases.updates == updates_before, "a lost lease is not written (not released)"
    assert [e for e in logs if e["event"] == "leader election lost"]


async def test_a_process_paused_past_its_deadline_steps_down_without_a_request() -> None:
    """After a pause (SIGSTOP) longer than the renew deadline, the leader gives up as
    soon as it runs again: it does not start a renew round with a fresh deadline."""
    clock, leases, leading = FakeClock(), FakeLeases(), Leading()
    le = elector(leases, clock)
    run = asyncio.create_task(le.run(leading))
    await settle()
    assert le.is_leader
    gets = leases.gets
    clock.advance(30.0)  # nothing ran meanwhile: the loop was stopped
    assert le.lease_expired()
    await settle()
    with pytest.raises(LeaderElectionLost):
        run.result()
    assert leading.cancelled
    assert leases.gets == gets, "no lease request after the deadline passed"


async def test_an_unexpected_error_is_logged_as_itself_and_does_not_lose_the_lease() -> None:
    fake_clock, leases, leading = FakeClock(), FakeLeases(), Leading()
    le = elector(leases, fake_clock)
    with structlog.testing.capture_logs() as logs:
        run = asyncio.create_task(le.run(leading))
        await settle()
        leases.raise_once = KeyError("spec")
        fake_clock.advance(2.0)  # renew attempt fails with the KeyError...
        await settle()
        fake_clock.advance(2.0)  # ...the retry in the same round succeeds
        await settle()
        assert le.is_leader and not run.done()
        run.cancel()
        await asyncio.wait([run])
    unexpected = [e for e in logs if e["event"] == "unexpected error in leader election"]
    assert unexpected and "KeyError" in unexpected[0]["error"]
    assert not [e for e in logs if e["event"] == "leader election lost"]


async def test_a_failure_of_leader_work_is_raised_as_itself_not_as_a_lost_lease() -> None:
    clock, leases = FakeClock(), FakeLeases()
    le = elector(leases, clock)

    async def broken() -> None:
        raise ValueError("cache did not sync")

    with pytest.raises(ValueError, match="cache did not sync"):
        await asyncio.wait_for(le.run(broken), timeout=5)
    assert leases.lease is not None
    assert leases.lease["spec"]["holderIdentity"] == "", "a clean end releases the lease"
