"""Asyncio work queues with client-go semantics, for controllers.

* :class:`Queue` -- deduplicating FIFO; an item is processed by one worker at a
  time and a change during processing is not lost.
* :class:`DelayingQueue` -- adds :meth:`~DelayingQueue.add_after`.
* :class:`RateLimitingQueue` -- adds per-item backoff via a :class:`RateLimiter`.

Time is injected through a :class:`Clock` (use :class:`FakeClock` in tests), and
named queues export the standard ``workqueue_*`` Prometheus metrics.
"""

from .clock import Clock, FakeClock, RealClock
from .delaying_queue import DelayingQueue
from .metrics import register_metrics
from .queue import Queue
from .rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)
from .rate_limiting_queue import RateLimitingQueue

__all__ = [
    "BucketRateLimiter",
    "Clock",
    "DelayingQueue",
    "FakeClock",
    "ItemExponentialFailureRateLimiter",
    "MaxOfRateLimiter",
    "Queue",
    "RateLimiter",
    "RateLimitingQueue",
    "RealClock",
    "default_controller_rate_limiter",
    "register_metrics",
]
