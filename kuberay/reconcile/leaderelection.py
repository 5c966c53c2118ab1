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
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import random
import socket
import time
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

import structlog

from kuberay.kube import ApiError, Client, Conflict, KubeError, NotFound
from kuberay.reconcile import metrics

log = structlog.get_logger("kuberay.leaderelection")


def _micro_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


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
        self._observed: dict[str, Any] | None = None
        self._observed_at = 0.0
        self.is_leader = False
        self.request_timeout = max(renew_deadline / 2, 1.0)

    async def run(
        self,
        on_started_leading: Callable[[], Coroutine[Any, Any, None]],
        on_stopped_leading: Callable[[], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        """Acquire, run ``on_started_leading`` while leading, return when leadership ends.

        Leadership ends when ``on_started_leading`` returns, when renewal fails for
        ``renew_deadline``, or when this task is cancelled. Unless it was lost, the
        lease is then released (``release_on_cancel``) so a successor need not wait.
        """
        await self._acquire()
        self.is_leader = True
        metrics.LEADER_ELECTION_STATUS.labels(name=self.name).set(1)
        log.info("became leader", lease=f"{self.namespace}/{self.name}", identity=self.identity)
        leading = asyncio.get_running_loop().create_task(on_started_leading())
        lost = False
        try:
            lost = not await self._renew_until_lost(leading)
        finally:
            self.is_leader = False
            metrics.LEADER_ELECTION_STATUS.labels(name=self.name).set(0)
            if not leading.done():
                leading.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await leading
            if self.release_on_cancel and not lost:
                await asyncio.shield(self.release())
            if on_stopped_leading is not None:
                await on_stopped_leading()

    async def release(self) -> None:
        """Give the lease up now (holder cleared) if we hold it."""
        try:
            lease = await self._get()
        except KubeError:
            return
        if lease is None or (lease.get("spec") or {}).get("holderIdentity") != self.identity:
            return
        spec = lease.setdefault("spec", {})
        spec["holderIdentity"] = ""
        spec["leaseDurationSeconds"] = 1
        spec["renewTime"] = _micro_now()
        with contextlib.suppress(KubeError):
            async with asyncio.timeout(self.request_timeout):
                await self.client.update(lease)
            log.info("released lease", lease=f"{self.namespace}/{self.name}")

    async def _acquire(self) -> None:
        while True:
            if await self._try_acquire_or_renew():
                return
            await asyncio.sleep(self.retry_period * (1 + 0.2 * random.random()))

    async def _renew_until_lost(self, leading: asyncio.Task[None]) -> bool:
        """Renew until ``leading`` finishes (True) or a renewal deadline passes (False)."""
        while True:
            deadline = time.monotonic() + self.renew_deadline
            renewed = False
            while time.monotonic() < deadline:
                if leading.done():
                    return True
                await asyncio.sleep(self.retry_period)
                if leading.done():
                    return True
                if await self._try_acquire_or_renew():
                    renewed = True
                    break
            if not renewed:
                log.error("leader election lost", lease=f"{self.namespace}/{self.name}")
                return False

    async def _get(self) -> dict[str, Any] | None:
        try:
            async with asyncio.timeout(self.request_timeout):
                return await self.client.get(
                    "coordination.k8s.io/v1", "Lease", self.name, self.namespace
                )
        except NotFound:
            return None

    async def _try_acquire_or_renew(self) -> bool:
        now_s = _micro_now()
        try:
            lease = await self._get()
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
                    created = await self.client.create(body)
                self._see(created)
                return True
            spec = lease.get("spec") or {}
            self._see(lease)
            holder = spec.get("holderIdentity") or ""
            duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
            held_by_other = holder and holder != self.identity
            if held_by_other and time.monotonic() < self._observed_at + duration:
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
                updated = await self.client.update(lease)
            self._see(updated)
            return True
        except (Conflict, TimeoutError) as exc:
            log.debug("lease update lost a race", error=str(exc) or repr(exc))
            return False
        except (ApiError, KubeError) as exc:
            log.warning("lease request failed", error=str(exc))
            return False

    def _see(self, lease: dict[str, Any]) -> None:
        spec = lease.get("spec") or {}
        record = {
            "holder": spec.get("holderIdentity"),
            "renew": spec.get("renewTime"),
            "transitions": spec.get("leaseTransitions"),
        }
        if record != self._observed:
            self._observed = record
            self._observed_at = time.monotonic()
