"""A delaying queue driven by a rate limiter (client-go ``RateLimitingInterface``).

This is the queue controllers use: a failed reconcile calls
:meth:`RateLimitingQueue.add_rate_limited` and the limiter decides how long to back
off; a successful one calls :meth:`RateLimitingQueue.forget` so the next failure
starts from the shortest delay again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry

from .clock import Clock
from .delaying_queue import DelayingQueue
from .rate_limiters import RateLimiter, default_controller_rate_limiter

__all__ = ["RateLimitingQueue"]

T = TypeVar("T", bound=Hashable)


class RateLimitingQueue(DelayingQueue[T]):
    """A :class:`DelayingQueue` whose retry delays come from a :class:`RateLimiter`."""

    def __init__(
        self,
        rate_limiter: RateLimiter[T] | None = None,
        *,
        name: str | None = None,
        clock: Clock | None = None,
        registry: CollectorRegistry | None = None,
        on_task: Callable[[asyncio.Task[Any]], None] | None = None,
    ) -> None:
        """Create a queue; ``rate_limiter`` defaults to
        :func:`default_controller_rate_limiter` on the same clock; other arguments
        as for :class:`DelayingQueue`."""
        super().__init__(name=name, clock=clock, registry=registry, on_task=on_task)
        self.rate_limiter: RateLimiter[T] = (
            default_controller_rate_limiter(clock=self._clock)
            if rate_limiter is None
            else rate_limiter
        )

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the delay the rate limiter assigns to this failure."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Tell the rate limiter ``item`` succeeded.

        Only resets its backoff; an already scheduled delayed add still happens.
        """
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """Return how many failures the rate limiter tracks for ``item``."""
        return self.rate_limiter.num_requeues(item)
