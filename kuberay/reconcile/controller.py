"""Controller: N workers pulling requests from a rate-limited queue into a Reconciler.

A request is never processed by two workers at once (the queue's processing set),
and events that arrive while it is processed collapse into one more run. See
:class:`~kuberay.reconcile.types.Reconciler` for what each outcome does.
Every log line of a reconcile carries controller, namespace, name and
reconcile_id (bound with structlog's contextvars).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable
from typing import Any

import attrs
import structlog

from kuberay.informers import ResourceEventHandler
from kuberay.reconcile import metrics
from kuberay.reconcile.cache import Cache, KindNotServed
from kuberay.reconcile.supervisor import TaskHook
from kuberay.reconcile.types import Reconciler, Request, RequeueError, Result, TerminalError
from kuberay.workqueue import RateLimitingQueue, default_controller_rate_limiter

log = structlog.get_logger("kuberay.controller")

HandlerFactory = Callable[[Any], ResourceEventHandler]


@attrs.define
class WatchSource:
    """One kind the controller watches and how its events become requests."""

    api_version: str
    kind: str
    make_handler: HandlerFactory


class CacheSyncTimeout(RuntimeError):
    """The caches a controller needs did not sync within ``cache_sync_timeout`` (or a
    kind it watches was not served that long); the message is one line."""


class Controller:
    """Runs ``reconciler`` for requests produced by its watch sources.

    Defaults: ``max_concurrent_reconciles=1``, the default controller rate limiter
    (per-item 5 ms..1000 s exponential, max'ed with 10 qps / burst 100),
    ``cache_sync_timeout=120`` s.

    ``on_task`` (a :data:`~kuberay.reconcile.supervisor.TaskHook`; the Manager sets
    its supervisor's when the controller is added) is called with every worker task
    and the queue's delayed-add task: they run until :meth:`stop` / :meth:`abort`,
    and ending otherwise leaves requests unprocessed.
    """

    def __init__(
        self,
        name: str,
        reconciler: Reconciler,
        *,
        max_concurrent_reconciles: int = 1,
        rate_limiter: Any = None,
        cache_sync_timeout: float = 120.0,
        on_task: TaskHook | None = None,
    ) -> None:
        self.name = name
        self.on_task = on_task
        self.reconciler = reconciler
        self.max_concurrent_reconciles = max(1, max_concurrent_reconciles)
        self.cache_sync_timeout = cache_sync_timeout
        self._rate_limiter = rate_limiter
        self.sources: list[WatchSource] = []
        self.queue: RateLimitingQueue[Request] | None = None
        self._workers: list[asyncio.Task[None]] = []
        self.started = False

    def enqueue(self, request: Request, after: float = 0.0) -> bool:
        """Ask for ``request`` to be reconciled (after ``after`` s) from outside the
        watch sources, e.g. when a background call for that object has finished.

        Same dedup as events: a request already queued is not queued twice, one being
        processed runs once more afterwards. Dropped (False) before :meth:`prepare`
        created the queue or once it is shutting down. Call from the event loop."""
        queue = self.queue
        if queue is None or queue.shutting_down():
            return False
        if after > 0:
            queue.add_after(request, after)
        else:
            queue.add(request)
        return True

    def watch(self, source: WatchSource) -> None:
        """Add a watch source (before :meth:`start`)."""
        self.sources.append(source)

    def _make_queue(self) -> RateLimitingQueue[Request]:
        limiter = self._rate_limiter or default_controller_rate_limiter()
        return RateLimitingQueue(limiter, name=self.name, on_task=self.on_task)

    async def prepare(self, cache: Cache) -> None:
        """Create the queue, hook sources to the cache and wait for it to sync.

        Within ``cache_sync_timeout`` (one deadline for both), each watched kind must
        be served by the apiserver (waited for, as controller-runtime does when a CRD
        is not installed yet) and every informer must sync; else
        :class:`CacheSyncTimeout`, whose message is one line naming what was missing.
        Events are queued from now on; workers only start with :meth:`start`
        (a standby replica keeps a warm cache and queue while another leads).
        """
        if self.queue is not None:
            return
        self.queue = self._make_queue()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.cache_sync_timeout
        informers = []
        for source in self.sources:
            try:
                registered = await cache.register(
                    source.api_version, source.kind, timeout=max(0.0, deadline - loop.time())
                )
            except KindNotServed as exc:
                raise CacheSyncTimeout(
                    f"controller {self.name}: {exc}; gave up after {self.cache_sync_timeout:g}s"
                ) from None
            for informer in registered:
                informer.add_event_handler(source.make_handler(self.queue))
                informers.append(informer)
        for informer in informers:
            informer.start()
        remaining = max(0.0, deadline - loop.time())
        synced = await asyncio.gather(*(i.wait_for_sync(remaining) for i in informers))
        if not all(synced):
            raise CacheSyncTimeout(
                f"controller {self.name}: caches did not sync in {self.cache_sync_timeout}s"
            )

    async def start(self, cache: Cache) -> None:
        """:meth:`prepare` if needed, then start the workers."""
        await self.prepare(cache)
        if self.started:
            return
        metrics.init_controller_metrics(self.name, self.max_concurrent_reconciles)
        loop = asyncio.get_running_loop()
        self._workers = [
            loop.create_task(self._worker(), name=f"{self.name}-worker-{i}")
            for i in range(self.max_concurrent_reconciles)
        ]
        if self.on_task is not None:
            for task in self._workers:
                self.on_task(task)
        self.started = True
        log.info("controller started", controller=self.name, workers=self.max_concurrent_reconciles)

    def abort(self) -> None:
        """Stop at once, synchronously: nothing queued is handed out any more and the
        in-flight reconciles are cancelled. Await :meth:`stop` afterwards to reap the
        workers."""
        if self.queue is not None:
            self.queue.shutdown()
        for task in self._workers:
            task.cancel()

    async def stop(self, *, drain: bool = True, timeout: float = 30.0) -> None:
        """Stop taking work (queued requests are not started); with ``drain`` wait (up
        to ``timeout``) for in-flight reconciles to finish, else cancel them. Never
        raises a worker's own earlier failure."""
        if self.queue is None or not self.started:
            if self.queue is not None:
                self.queue.shutdown()
            return
        if drain:
            self.queue.shutdown()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self.queue.shutdown_with_drain()
        else:
            self.queue.shutdown()
        for task in self._workers:
            task.cancel()
        if self._workers:
            # Reap without re-raising: a worker that already died was reported
            # through on_task and must not break the shutdown of everything else.
            await asyncio.wait(self._workers)
        self._workers = []
        self.started = False
        log.info("controller stopped", controller=self.name)

    async def _worker(self) -> None:
        assert self.queue is not None
        queue = self.queue
        while True:
            item, shutdown = await queue.get()
            if shutdown:
                return
            assert isinstance(item, Request)
            try:
                await self.process(item)
            finally:
                queue.done(item)

    async def process(self, req: Request) -> None:
        """Reconcile one request and act on the outcome (requeue, backoff, forget)."""
        assert self.queue is not None
        queue = self.queue
        rid = str(uuid.uuid4())  # controller-runtime's reconcileID is a UUID
        metrics.ACTIVE_WORKERS.labels(controller=self.name).inc()
        start = time.perf_counter()
        with structlog.contextvars.bound_contextvars(
            controller=self.name,
            namespace=req.namespace,
            name=req.name,
            reconcile_id=rid,
            _request=(req.namespace, req.name),  # the reconciled object, whatever a line says
        ):
            try:
                result = await self.reconciler.reconcile(req)
            except asyncio.CancelledError:
                raise
            except TerminalError as exc:
                self._count("error")
                metrics.RECONCILE_ERRORS.labels(controller=self.name).inc()
                metrics.TERMINAL_RECONCILE_ERRORS.labels(controller=self.name).inc()
                log.error("reconcile failed (terminal, not requeued)", error=str(exc))
            except Exception as exc:
                # An exception no reconciler raises on purpose (a bug: KeyError,
                # TypeError...) is what a Go panic is: counted as a panic too, and,
                # as controller-runtime recovers it into an error, retried like one.
                panicked = not _expected(exc)
                self._count("error")
                metrics.RECONCILE_ERRORS.labels(controller=self.name).inc()
                if panicked:
                    metrics.RECONCILE_PANICS.labels(controller=self.name).inc()
                queue.add_rate_limited(req)
                log.error(
                    "reconcile failed with an unexpected exception (panic); requeued with backoff"
                    if panicked
                    else "reconcile failed; requeued with backoff",
                    error=str(exc) or repr(exc),
                    error_type=type(exc).__name__,
                    requeues=queue.num_requeues(req),
                    exc_info=panicked,
                )
            else:
                if result is None:
                    result = Result()
                if result.requeue_after and result.requeue_after > 0:
                    queue.forget(req)
                    queue.add_after(req, result.requeue_after)
                    self._count("requeue_after")
                elif result.requeue:
                    queue.add_rate_limited(req)
                    self._count("requeue")
                else:
                    queue.forget(req)
                    self._count("success")
            finally:
                metrics.RECONCILE_TIME.labels(controller=self.name).observe(
                    time.perf_counter() - start
                )
                metrics.ACTIVE_WORKERS.labels(controller=self.name).dec()

    def _count(self, result: str) -> None:
        metrics.RECONCILE_TOTAL.labels(controller=self.name, result=result).inc()


def _expected(exc: Exception) -> bool:
    from kuberay.kube import ApiError, TransportError, WriteRefused

    return isinstance(exc, ApiError | TransportError | WriteRefused | RequeueError)
