"""Lease-based leader election (coordination.k8s.io/v1), with client-go's timing.

Defaults: lease 15 s, renew deadline 10 s, retry period 2 s. A candidate tries
to take the Lease every retry period (jittered up to x1.2); a lease is free when
its holder is empty or when its record has not changed for
``leaseDurationSeconds`` *as measured by our own clock since we last saw it
change* (so clock skew between nodes does not matter). The leader renews every
retry period and steps down if it could not renew within the renew deadline.
``release_on_cancel`` clears the holder on a clean stop so a successor need not
wait out the lease. Each request has a 5 s timeout so one hung call cannot cost
the lease.

The renew deadline is a hard bound, counted from the start of the last
successful renewal (slightly stricter than client-go, which counts from the
start of each renew round): a renew round (GET + PUT, retried every retry
period) still in flight when the deadline passes is *cancelled*, so a stalled
apiserver -- or a process paused past its lease -- makes the leader step down
at the deadline (10 s), before its 15 s lease can be taken by someone else.
Losing the lease raises :class:`LeaderElectionLost` from
:meth:`LeaderElector.run`. :meth:`LeaderElector.lease_expired` answers the same
question synchronously from the clock, so a write path can refuse to write the
instant the deadline passes, before the elector's task even gets to run (see
:meth:`kuberay.kube.Client.set_write_guard`).

Time (expiry, retry sleeps, the deadline) is read from an injected
:class:`~kuberay.workqueue.Clock`, so tests drive it with a ``FakeClock``.
Give the elector a client with its own rate limiter (see
:meth:`kuberay.kube.Client.view`): renewals must not queue behind reconcilers'
requests in a shared token bucket.

Renewal runs off the main event loop by default (``renew_in_thread``): on a
:class:`~kuberay.reconcile.loopthread.LoopThread` with its own HTTP session
(:meth:`kuberay.kube.Client.detached`), so a starved or blocked main loop -- a
loaded node, a burst of reconciles, a long synchronous step -- delays
reconciles but not renewals, and the leader keeps its lease while it is alive.
Only a process that truly stops (frozen, partitioned, apiserver down) misses the
deadline. Acquiring, releasing and the leader's work stay on the main loop.
With an injected clock (tests), renewal stays on the caller's loop unless
``renew_in_thread=True`` is passed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import random
import socket
import uuid
from collections.abc import Callable, Coroutine
from typing import Any, cast

import structlog

from kuberay.gocompat.gotime import format_rfc3339_micro
from kuberay.kube import ApiError, Client, Conflict, KubeError, NotFound
from kuberay.kube import objects as k8s
from kuberay.reconcile import metrics
from kuberay.reconcile.loopthread import LoopThread
from kuberay.workqueue import Clock, RealClock

log = structlog.get_logger("kuberay.leaderelection")


class LeaderElectionLost(RuntimeError):
    """This process held the lease and could not renew it; it must stop working."""


def _micro_now() -> str:
    return format_rfc3339_micro(dt.datetime.now(dt.UTC))


def default_identity() -> str:
    """``hostname_<uuid>``, as controller-runtime names candidates."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    """Campaigns for the Lease ``namespace/name`` and reports leadership changes."""

    def __init__(
        self,
        client: Client,
        namespace: str,
        name: str,
        *,
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = True,
        clock: Clock | None = None,
        renew_in_thread: bool | None = None,
    ) -> None:
        if not lease_duration > renew_deadline > 1.2 * retry_period:
            raise ValueError("need lease_duration > renew_deadline > 1.2 * retry_period")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity or default_identity()
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self.clock: Clock = clock or RealClock()
        # Default: off the main loop with the real clock; on it with a fake one.
        self.renew_in_thread = clock is None if renew_in_thread is None else renew_in_thread
        self._observed: dict[str, Any] | None = None
        self._observed_at = 0.0
        self.is_leader = False
        # Clock time at which the last successful acquire/renew attempt started.
        self._renewed_at = 0.0
        self._lost = False
        self.request_timeout = max(renew_deadline / 2, 1.0)
        # client-go's NewLeaderElector reports "not leader" at once: a standby exports 0.
        metrics.LEADER_ELECTION_STATUS.labels(name=self.name).set(0)

    async def run(
        self,
        on_started_leading: Callable[[], Coroutine[Any, Any, None]],
        on_stopped_leading: Callable[[], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        """Acquire, run ``on_started_leading`` while leading, return when leadership ends.

        Returns when ``on_started_leading`` returns (the lease is then released if
        ``release_on_cancel``), or is cancelled like any task. Raises
        :class:`LeaderElectionLost` when the lease could not be renewed within
        ``renew_deadline``: the ``on_started_leading`` task is cancelled at once
        (it must stop all work when cancelled) and the lease is not touched again.
        Any other exception out of ``on_started_leading`` propagates as itself.
        """
        await self._acquire()
        self.is_leader = True
        metrics.LEADER_ELECTION_STATUS.labels(name=self.name).set(1)
        log.info("became leader", lease=self.lease_ref, identity=self.identity)
        leading = asyncio.get_running_loop().create_task(
            on_started_leading(), name=f"leading {self.lease_ref}"
        )
        lost = False
        try:
            if self.renew_in_thread:
                lost = not await self._renew_off_loop(leading)
            else:
                lost = not await self._renew_until_lost(leading, self.client)
            # Before is_leader drops: lease_expired() must never flicker to False.
            self._lost = lost
        finally:
            self.is_leader = False
            metrics.LEADER_ELECTION_STATUS.labels(name=self.name).set(0)
            if not leading.done():
                leading.cancel()
                await asyncio.wait([leading])
            if self.release_on_cancel and not lost:
                await asyncio.shield(self.release())
            if on_stopped_leading is not None:
                await on_stopped_leading()
        if lost:
            raise LeaderElectionLost(
                f"could not renew lease {self.lease_ref} within {self.renew_deadline:g}s"
            )
        failure = None if leading.cancelled() else leading.exception()
        if failure is not None:
            raise failure

    def lease_expired(self) -> bool:
        """True once this process led and then could not renew within the renew
        deadline (by its own clock), even if :meth:`run` has not noticed yet; stays
        True after the loss. False for a candidate that never led, and after a clean
        release."""
        if self._lost:
            return True
        return self.is_leader and self.clock.now() >= self._renewed_at + self.renew_deadline

    @property
    def lease_ref(self) -> str:
        """``namespace/name`` of the Lease."""
        return f"{self.namespace}/{self.name}"

    async def release(self) -> None:
        """Give the lease up now (holder cleared) if we hold it."""
        try:
            lease = await self._get(self.client)
        except KubeError:
            return
        if lease is None or k8s.spec(lease).get("holderIdentity") != self.identity:
            return
        spec = lease.setdefault("spec", {})
        spec["holderIdentity"] = ""
        spec["leaseDurationSeconds"] = 1
        spec["renewTime"] = _micro_now()
        with contextlib.suppress(KubeError):
            async with asyncio.timeout(self.request_timeout):
                await self.client.update(lease)
            log.info("released lease", lease=self.lease_ref)

    async def _acquire(self) -> None:
        while True:
            if await self._try_acquire_or_renew(self.client):
                return
            await self.clock.sleep(self.retry_period * (1 + 0.2 * random.random()))

    async def _renew_off_loop(self, leading: asyncio.Task[None]) -> bool:
        """:meth:`_renew_until_lost` on a LoopThread with a detached client, until
        ``leading`` (on this loop) finishes (True) or the lease is lost (False)."""
        stopped = asyncio.Event()  # bound to the thread's loop on first wait
        client = self.client.detached()

        async def wait_stopped() -> None:
            await stopped.wait()

        async def renew() -> bool:
            stop = asyncio.get_running_loop().create_task(wait_stopped())
            try:
                return await self._renew_until_lost(stop, client)
            finally:
                stop.cancel()
                await client.close()

        thread = LoopThread(f"lease-renewal {self.lease_ref}")
        thread.start()
        try:
            renewal = asyncio.wrap_future(thread.submit(renew()))
            try:
                await asyncio.wait(
                    [renewal, cast("asyncio.Future[Any]", leading)],
                    return_when=asyncio.FIRST_COMPLETED,
                )
            finally:
                thread.call(stopped.set)
                # The round ends as soon as it sees `stopped`: wait for it even if
                # we are being cancelled, so the lease is never renewed after we return.
                await asyncio.wait({renewal})
            return renewal.result()
        finally:
            thread.stop()

    async def _renew_until_lost(self, leading: asyncio.Task[None], client: Client) -> bool:
        """Renew until ``leading`` finishes (True) or a renew deadline passes (False).

        Every retry period a renew round starts; it retries every retry period and
        is cancelled, request in flight included, once ``renew_deadline`` has passed
        since the last successful renewal (at once if it already has, e.g. after the
        process was paused).
        """
        loop = asyncio.get_running_loop()
        while True:
            if await self._wait_or_done(self.retry_period, leading):
                return True
            remaining = self._renewed_at + self.renew_deadline - self.clock.now()
            round_ = loop.create_task(self._renew_round(client))
            if remaining <= 0:
                round_.cancel()
            deadline = loop.create_task(self.clock.sleep(remaining))
            try:
                await asyncio.wait({round_, deadline, leading}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (round_, deadline):
                    task.cancel()
                await asyncio.wait({round_, deadline})
            if round_.done() and not round_.cancelled():
                round_.result()  # a bug in the round surfaces as itself
                continue
            if leading.done():
                return True
            log.error(
                "leader election lost",
                lease=self.lease_ref,
                identity=self.identity,
                reason=f"could not renew within the renew deadline ({self.renew_deadline:g}s)",
            )
            return False

    async def _renew_round(self, client: Client) -> None:
        """Try to renew now and then every retry period until it works."""
        while not await self._try_acquire_or_renew(client):
            await self.clock.sleep(self.retry_period)

    async def _wait_or_done(self, seconds: float, task: asyncio.Task[None]) -> bool:
        """Sleep ``seconds`` on the clock; True at once if ``task`` finishes first."""
        sleeper = asyncio.get_running_loop().create_task(self.clock.sleep(seconds))
        try:
            await asyncio.wait({sleeper, task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            await asyncio.wait({sleeper})
        return task.done()

    async def _get(self, client: Client) -> dict[str, Any] | None:
        try:
            async with asyncio.timeout(self.request_timeout):
                return await client.get(
                    "coordination.k8s.io/v1", "Lease", self.name, self.namespace
                )
        except NotFound:
            return None

    async def _try_acquire_or_renew(self, client: Client) -> bool:
        started = self.clock.now()
        if await self._attempt(client):
            self._renewed_at = started
            return True
        return False

    async def _attempt(self, client: Client) -> bool:
        now_s = _micro_now()
        try:
            lease = await self._get(client)
            if lease is None:
                body = {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                    "spec": {
                        "holderIdentity": self.identity,
                        "leaseDurationSeconds": int(self.lease_duration),
                        "acquireTime": now_s,
                        "renewTime": now_s,
                        "leaseTransitions": 0,
                    },
                }
                async with asyncio.timeout(self.request_timeout):
                    created = await client.create(body)
                self._see(created)
                return True
            spec = k8s.spec(lease)
            self._see(lease)
            holder = spec.get("holderIdentity") or ""
            duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
            held_by_other = holder and holder != self.identity
            if held_by_other and self.clock.now() < self._observed_at + duration:
                return False
            new_spec = dict(spec)
            new_spec["holderIdentity"] = self.identity
            new_spec["leaseDurationSeconds"] = int(self.lease_duration)
            new_spec["renewTime"] = now_s
            if holder != self.identity:
                new_spec["acquireTime"] = now_s
                new_spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
            lease = {**lease, "spec": new_spec}
            async with asyncio.timeout(self.request_timeout):
                updated = await client.update(lease)
            self._see(updated)
            return True
        except Conflict as exc:
            log.debug("lease update lost a race", lease=self.lease_ref, error=str(exc))
            return False
        except TimeoutError:
            log.warning(
                "lease request timed out", lease=self.lease_ref, timeout=self.request_timeout
            )
            return False
        except (ApiError, KubeError) as exc:
            log.warning("lease request failed", lease=self.lease_ref, error=str(exc))
            return False
        except Exception as exc:
            # Not an apiserver answer: a bug or a malformed Lease. Say so (with the
            # traceback); the attempt counts as failed, so the deadline still applies.
            log.error(
                "unexpected error in leader election",
                lease=self.lease_ref,
                error=repr(exc),
                exc_info=True,
            )
            return False

    def _see(self, lease: dict[str, Any]) -> None:
        spec = k8s.spec(lease)
        record = {
            "holder": spec.get("holderIdentity"),
            "renew": spec.get("renewTime"),
            "transitions": spec.get("leaseTransitions"),
        }
        if record != self._observed:
            self._observed = record
            self._observed_at = self.clock.now()
