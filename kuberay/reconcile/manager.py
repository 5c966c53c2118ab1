"""Manager: owns the client, the shared cache, controllers, leader election and the
metrics/probe servers, and runs them in controller-runtime's order.

Start: HTTP servers (or earlier: :meth:`Manager.start_servers`) -> caches of
every controller (warmed even before leadership, so a new leader starts with a
full cache) -> leader election (if
enabled) -> controller workers and leader-only runnables. Stop (SIGTERM/SIGINT
or :meth:`stop`): in-flight reconciles finish for up to
``graceful_shutdown_timeout`` s (queued requests are not started) -> informers
stop -> pending Events are written -> the Lease is released -> HTTP servers stop.

Losing the lease is not a graceful stop (controller-runtime forces the shutdown
timeout to 0): at once, in-flight reconciles and leader-only runnables are
cancelled, nothing queued is started and pending Events are dropped, so this
process makes no more writes (the client's write guard already refuses them
from the instant the renew deadline passes, even before the elector's task
runs); then everything stops and :meth:`run` raises
:class:`LeaderElectionLost` (the process should exit non-zero). Any other
failure of leader election or of starting the controllers is raised as itself.

Supervision: every long-lived task the manager's parts start (controller workers,
work queues' delayed-add loops, informers' reflector and resync loops, runnables)
is watched by :attr:`Manager.supervisor` (a
:class:`~kuberay.reconcile.supervisor.TaskSupervisor`). One that raises, or returns
before shutdown began (runnables may return), is logged with its name and
traceback, and the built-in ``tasks`` health check then fails: ``/healthz``
answers 500 naming the dead task, so a liveness probe restarts the operator
instead of leaving it up but idle. Health checks are named, as in
controller-runtime: built in are ``ping`` and ``tasks`` on ``/healthz`` and
``informers`` on ``/readyz``; add more with :meth:`Manager.add_healthz_check` /
:meth:`Manager.add_readyz_check`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import prometheus_client
import structlog

from kuberay.informers import SharedInformerFactory
from kuberay.kube import Client
from kuberay.reconcile.builder import Builder
from kuberay.reconcile.cache import Cache
from kuberay.reconcile.controller import Controller
from kuberay.reconcile.events import EVENTS_V1, EventRecorder
from kuberay.reconcile.httpserver import (
    Check,
    ProbeChecks,
    Server,
    metrics_app,
    parse_bind_address,
    probes_app,
)
from kuberay.reconcile.leaderelection import LeaderElectionLost, LeaderElector
from kuberay.reconcile.options import ControllerOptions, ManagerOptions
from kuberay.reconcile.supervisor import TaskSupervisor

log = structlog.get_logger("kuberay.manager")

Runnable = Callable[[], Coroutine[Any, Any, None]]

_SA_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")

__all__ = ["LeaderElectionLost", "Manager", "Runnable"]


class Manager:
    """Runs controllers over one shared cache. Construct, add controllers, ``await run()``.

    ``options`` (a :class:`~kuberay.reconcile.options.ManagerOptions`, whose docstring states
    every default: no leader election, metrics on ``:8080``, probes on ``:8081``, one
    reconcile at a time per controller, ...) say what it watches and serves; ``registry``
    (default: prometheus_client's global one) receives the controller metrics.
    """

    def __init__(
        self,
        client: Client,
        options: ManagerOptions | None = None,
        *,
        registry: prometheus_client.CollectorRegistry | None = None,
    ) -> None:
        options = options or ManagerOptions()
        self.options = options
        self.client = client
        self.supervisor = TaskSupervisor()
        self.factory = SharedInformerFactory(
            client, resync_period=options.resync_period, on_task=self.supervisor.watch
        )
        self.cache = Cache(
            client,
            self.factory,
            namespaces=list(options.namespaces) if options.namespaces is not None else None,
            by_object=options.by_object,
        )
        self.controllers: list[Controller] = []
        self.graceful_shutdown_timeout = options.graceful_shutdown_timeout
        self.registry = registry or prometheus_client.REGISTRY
        self.handle_signals = options.handle_signals
        self.healthz = ProbeChecks()
        self.readyz = ProbeChecks()
        self.healthz.add("ping", lambda: None)
        self.healthz.add("tasks", self.supervisor.check)
        self.readyz.add("informers", self._check_synced)
        self._metrics_bind = options.metrics_bind_address
        self._probe_bind = options.health_probe_bind_address
        self.servers: dict[str, Server] = {}
        self._runnables: list[tuple[Runnable, bool]] = []
        self._recorders: list[EventRecorder] = []
        self._stop = asyncio.Event()
        self._caches_started = False
        self.elector: LeaderElector | None = None
        if options.leader_election:
            if not options.leader_election_id:
                raise ValueError("leader_election_id is required when leader election is on")
            ns = options.leader_election_namespace or _pod_namespace()
            if not ns:
                raise ValueError(
                    "leader election namespace unknown: set leader_election_namespace "
                    "when running outside a cluster"
                )
            self.elector = LeaderElector(
                # Its own (unthrottled) limiter: renewals never wait behind reconciles.
                client.view(),
                ns,
                options.leader_election_id,
                lease_duration=options.lease_duration,
                renew_deadline=options.renew_deadline,
                retry_period=options.retry_period,
            )
            # From the instant the renew deadline passes, this client writes nothing,
            # whichever task gets to run first after, say, the process was paused.
            elector = self.elector
            client.set_write_guard(lambda: not elector.lease_expired())
        self.leading = asyncio.Event()
        self._leader_tasks: list[asyncio.Task[None]] = []
        # Events have a client (token bucket) of their own, as client-go's broadcaster
        # has its own clientset: they never wait behind, or delay, reconcile writes.
        # Same qps/burst and the same write guard as the main client.
        self.event_client = client.view(
            qps=client.throttle.qps, burst=client.throttle.burst, guarded=True
        )

    @classmethod
    async def from_kubeconfig(
        cls,
        path: str | None = None,
        options: ManagerOptions | None = None,
        *,
        qps: float = 100.0,
        burst: int = 200,
        registry: prometheus_client.CollectorRegistry | None = None,
    ) -> Manager:
        """A manager for the cluster of ``path`` / ``$KUBECONFIG`` / in-cluster config."""
        client = await Client.from_env(path, qps=qps, burst=burst)
        return cls(client, options, registry=registry)

    # ----- building -------------------------------------------------------
    @property
    def controller_options(self) -> ControllerOptions:
        """The options of every controller built with :meth:`controller` unless it sets its
        own (``options.controller``)."""
        return self.options.controller

    def controller(self, name: str) -> Builder:
        """Start a builder chain for a controller named ``name`` (unique per manager)."""
        return Builder(self, name)

    def add_controller(self, controller: Controller) -> None:
        """Run ``controller`` as part of this manager; its tasks are supervised
        (unless it already has an ``on_task`` hook of its own)."""
        if any(c.name == controller.name for c in self.controllers):
            raise ValueError(f"controller name {controller.name!r} is already used")
        if controller.on_task is None:
            controller.on_task = self.supervisor.watch
        self.controllers.append(controller)

    def add_runnable(self, fn: Runnable, *, needs_leader: bool = True) -> None:
        """Run ``fn()`` as a task (while leading, if ``needs_leader``) until stop.

        It is supervised: returning early is fine, raising is logged and fails the
        ``tasks`` health check."""
        self._runnables.append((fn, needs_leader))

    def add_healthz_check(self, name: str, check: Check) -> None:
        """Add a named liveness check (``/healthz``, ``/healthz/<name>``): it passes
        by returning and fails by raising. Names are unique per endpoint."""
        _add_check(self.healthz, name, check)

    def add_readyz_check(self, name: str, check: Check) -> None:
        """Add a named readiness check (``/readyz``, ``/readyz/<name>``); as
        :meth:`add_healthz_check`."""
        _add_check(self.readyz, name, check)

    def event_recorder(self, component: str, *, api: str = EVENTS_V1) -> EventRecorder:
        """An EventRecorder flushed when the manager stops (``api``: see
        :class:`EventRecorder`; events.k8s.io/v1 by default). It writes through
        :attr:`event_client`, whose rate limit is apart from the reconcilers'."""
        recorder = EventRecorder(self.event_client, component, api=api)
        self._recorders.append(recorder)
        return recorder

    def _check_synced(self) -> None:
        if not self._caches_started or not self.cache.has_synced():
            raise RuntimeError("informers not synced")

    # ----- running --------------------------------------------------------
    def stop(self) -> None:
        """Ask :meth:`run` to shut down gracefully (supervised tasks may end now)."""
        self.supervisor.close()
        self._stop.set()

    async def run(self) -> None:
        """Run until :meth:`stop` or SIGTERM/SIGINT; then shut down in order."""
        loop = asyncio.get_running_loop()
        installed: list[signal.Signals] = []
        if self.handle_signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.add_signal_handler(sig, self.stop)
                    installed.append(sig)
        tasks: list[asyncio.Task[None]] = []
        failure: BaseException | None = None
        try:
            await self.start_servers()
            for ctrl in self.controllers:
                await ctrl.prepare(self.cache)
            self._caches_started = True
            for fn, needs_leader in self._runnables:
                if not needs_leader:
                    tasks.append(self._start_runnable(fn))
            if self.elector is None:
                await self._lead()
                await self._stop.wait()
            else:
                failure = await self._run_elected(self.elector)
        finally:
            self.supervisor.close()
            lost = isinstance(failure, LeaderElectionLost)
            await self._stop_controllers(drain=not lost)
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            await self.factory.shutdown()
            for recorder in self._recorders:
                await recorder.close(flush=not lost)
            await self.stop_servers()
            for sig in installed:
                loop.remove_signal_handler(sig)
            log.info("manager stopped")
        if failure is not None:
            raise failure

    async def _run_elected(self, elector: LeaderElector) -> BaseException | None:
        """Campaign and lead until stop or loss; the election's failure, if any."""
        loop = asyncio.get_running_loop()
        election = loop.create_task(elector.run(self._lead_until_stopped), name="leader-election")
        stop_wait = loop.create_task(self._stop.wait())
        try:
            await asyncio.wait({election, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
            if not election.done() and elector.is_leader:
                # Leading ends by itself once stop is set: in-flight reconciles finish
                # first, then the elector releases the lease.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.graceful_shutdown_timeout + 10):
                        await asyncio.shield(election)
        finally:
            stop_wait.cancel()
            if not election.done():
                election.cancel()
            await asyncio.wait({election})
        if election.cancelled():
            return None
        return election.exception()

    async def _lead(self) -> None:
        self.leading.set()
        for ctrl in self.controllers:
            await ctrl.start(self.cache)
        self._leader_tasks = [self._start_runnable(fn) for fn, needs in self._runnables if needs]

    def _start_runnable(self, fn: Runnable) -> asyncio.Task[None]:
        """Start ``fn()`` as a supervised task: raising is a failure, returning is not."""
        name = getattr(fn, "__qualname__", None) or repr(fn)
        task = asyncio.get_running_loop().create_task(fn(), name=f"runnable {name}")
        self.supervisor.watch(task, may_return=True)
        return task

    async def _lead_until_stopped(self) -> None:
        """Leader-only work. Cancelled (lease lost): stop everything at once, no drain."""
        try:
            await self._lead()
            await self._stop.wait()
            await self._stop_controllers()
        except asyncio.CancelledError:
            self._abort()
            await self._stop_controllers(drain=False)
            raise

    def _abort(self) -> None:
        """Stop every write path now, synchronously: no reconcile is started or goes
        on, leader-only runnables are cancelled, pending Events are dropped."""
        self.supervisor.close()
        self.leading.clear()
        for ctrl in self.controllers:
            ctrl.abort()
        for task in self._leader_tasks:
            task.cancel()
        for recorder in self._recorders:
            recorder.abort()

    async def _stop_controllers(self, *, drain: bool = True) -> None:
        """Stop the controllers: with ``drain`` in-flight reconciles finish (up to the
        graceful shutdown timeout), else they are cancelled. Queued ones never start."""
        self.leading.clear()
        await asyncio.gather(
            *(c.stop(drain=drain, timeout=self.graceful_shutdown_timeout) for c in self.controllers)
        )
        for task in self._leader_tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._leader_tasks = []

    async def start_servers(self) -> None:
        """Serve /metrics and the probes now (before :meth:`run`, e.g. while the
        process still sets up its controllers); :meth:`run` starts them if not yet
        started and stops them at the end. ``/readyz`` fails until the caches synced.
        Idempotent."""
        if self.servers:
            return
        metrics_addr = parse_bind_address(self._metrics_bind)
        if metrics_addr is not None:
            self.servers["metrics"] = Server(metrics_app(self.registry), *metrics_addr)
        probe_addr = parse_bind_address(self._probe_bind)
        if probe_addr is not None:
            self.servers["probes"] = Server(probes_app(self.healthz, self.readyz), *probe_addr)
        try:
            for server in self.servers.values():
                await server.start()
        except BaseException:
            await self.stop_servers()
            raise

    async def stop_servers(self) -> None:
        """Stop the metrics and probe servers (:meth:`run` does it when it ends)."""
        for server in self.servers.values():
            await server.stop()
        self.servers = {}


def _add_check(checks: ProbeChecks, name: str, check: Check) -> None:
    if not name or "/" in name:
        raise ValueError(f"invalid health check name {name!r}")
    if name in checks.checks:
        raise ValueError(f"a health check named {name!r} already exists")
    checks.add(name, check)


def _pod_namespace() -> str | None:
    env = os.environ.get("POD_NAMESPACE")
    if env:
        return env
    try:
        return _SA_NAMESPACE_FILE.read_text().strip() or None
    except OSError:
        return None
