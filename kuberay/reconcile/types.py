"""Request, Result and the Reconciler protocol: the contract between a controller
and the code it drives."""

from __future__ import annotations

from typing import Protocol

import attrs


@attrs.frozen(order=True)
class Request:
    """Which object to reconcile: ``namespace`` ("" for cluster scope) and ``name``.

    It carries no event type and no object: reconcilers are level-based and read
    the current state from the cache; a deleted object is simply missing.
    """

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@attrs.frozen
class Result:
    """What to do with the request after a successful reconcile.

    ``requeue_after`` (seconds) > 0: reconcile again after that delay, with the
    failure backoff reset. ``requeue=True`` (without ``requeue_after``): requeue
    with rate-limited backoff, as after an error but without counting one.
    Neither: done until the next event.
    """

    requeue: bool = False
    requeue_after: float | None = None


class TerminalError(Exception):
    """Raise from ``reconcile`` for an error retrying cannot fix: it is counted and
    logged, but the request is not requeued (the next change to the object will
    trigger a reconcile again)."""


class RequeueError(Exception):
    """An expected, retryable failure (a create the apiserver refused, a missing
    dependency): logged as an error without a traceback and requeued with
    backoff, like any other exception."""


class Reconciler(Protocol):
    """Drives the world toward the desired state of one object.

    ``reconcile`` must be idempotent: a second call on an unchanged world makes no
    writes. Outcomes, in precedence order:

    * raises ``TerminalError``: counted as an error, not requeued;
    * raises anything else: requeued with per-item exponential backoff
      (``add_rate_limited``); any Result is ignored. Unless it is an API or transport
      error, ``WriteRefused`` or ``RequeueError`` (failures a reconciler expects), it
      is also counted as a panic (``controller_runtime_reconcile_panics_total``) and
      logged with its traceback;
    * ``Result(requeue_after=t)``: backoff forgotten, requeued after ``t`` s;
    * ``Result(requeue=True)``: requeued with backoff;
    * ``Result()``: backoff forgotten; runs again on the next event.

    The same request is never reconciled by two workers at once; events that
    arrive meanwhile collapse into one more run after this one.
    """

    async def reconcile(self, request: Request) -> Result: ...
