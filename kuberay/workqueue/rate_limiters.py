"""Rate limiters deciding how long a failed item waits before it is retried.

A controller that fails to reconcile an object must retry, but neither hot-loop
on one broken object (per-item exponential backoff) nor stampede the API server
when many objects fail at once (an overall token bucket).  The default controller
limiter combines both by taking the larger delay, exactly like client-go's
``DefaultTypedControllerRateLimiter``.

All delays are float seconds.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Protocol, TypeVar

from .clock import Clock, RealClock

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "default_controller_rate_limiter",
]

T = TypeVar("T", bound=Hashable)
T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)


class RateLimiter(Protocol[T_contra]):
    """Decides retry delays for items."""

    def when(self, item: T_contra) -> float:
        """Record one more failure of ``item`` and return how long to wait (seconds)."""
        ...

    def forget(self, item: T_contra) -> None:
        """Stop tracking ``item`` (it succeeded); its backoff starts over."""
        ...

    def num_requeues(self, item: T_contra) -> int:
        """How many failures of ``item`` are currently being tracked."""
        ...


class ItemExponentialFailureRateLimiter:
    """Per-item exponential backoff: ``base_delay * 2**n`` capped at ``max_delay``.

    ``n`` is the number of failures recorded for the item before this ``when`` call.
    """

    def __init__(self, base_delay: float, max_delay: float) -> None:
        """Create a limiter; both delays are in seconds and must be >= 0."""
        if base_delay < 0 or max_delay < 0:
            raise ValueError("base_delay and max_delay must be >= 0")
        self._base_delay = base_delay
        self._max_delay = max_delay
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        """Return ``min(base * 2**failures, max)`` then count one more failure."""
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        # 2.0**1024 overflows a float; far below that the cap has long applied.
        if exp >= 1000:
            return self._max_delay
        return min(self._base_delay * math.ldexp(1.0, exp), self._max_delay)

    def forget(self, item: Hashable) -> None:
        """Reset the item's failure count."""
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        """Return the item's failure count."""
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """An overall token bucket: ``qps`` tokens per second, holding at most ``burst``.

    Every ``when`` reserves one token (whatever the item) and returns how long until
    that token exists, like ``rate.Limiter.Reserve().Delay()`` in Go: the bucket may
    go into debt, so back-to-back calls get increasing delays.  Keeps no per-item
    state, so ``forget`` does nothing and ``num_requeues`` is always 0.
    """

    def __init__(self, qps: float, burst: int, *, clock: Clock | None = None) -> None:
        """Create a full bucket refilled at ``qps`` (> 0) tokens/s, capacity ``burst`` (>= 1)."""
        if qps <= 0:
            raise ValueError("qps must be > 0")
        if burst < 1:
            # golang.org/x/time/rate would make every reservation wait forever.
            raise ValueError("burst must be >= 1")
        self._qps = qps
        self._burst = burst
        self._clock: Clock = RealClock() if clock is None else clock
        self._tokens = float(burst)
        self._last: float | None = None

    def when(self, item: object) -> float:
        """Take one token and return the wait until it is available (0 if available)."""
        now = self._clock.now()
        if self._last is not None and now > self._last:
            self._tokens = min(float(self._burst), self._tokens + (now - self._last) * self._qps)
        if self._last is None or now > self._last:
            self._last = now
        self._tokens -= 1.0
        if self._tokens >= 0:
            return 0.0
        return -self._tokens / self._qps

    def forget(self, item: object) -> None:
        """Do nothing: the bucket is shared by all items."""

    def num_requeues(self, item: object) -> int:
        """Return 0: no per-item state."""
        return 0


class MaxOfRateLimiter(RateLimiter[T]):
    """Combines limiters: the longest delay, the largest requeue count, forget on all."""

    def __init__(self, *limiters: RateLimiter[T]) -> None:
        """Combine at least one limiter."""
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self._limiters = limiters

    def when(self, item: T) -> float:
        """Ask every limiter (each records the failure) and return the longest delay."""
        return max([limiter.when(item) for limiter in self._limiters])

    def forget(self, item: T) -> None:
        """Forget the item in every limiter."""
        for limiter in self._limiters:
            limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """Return the largest requeue count among the limiters."""
        return max(limiter.num_requeues(item) for limiter in self._limiters)


def default_controller_rate_limiter(*, clock: Clock | None = None) -> MaxOfRateLimiter[Hashable]:
    """The standard controller limiter.

    Per-item exponential backoff from 5 ms to 1000 s, combined with an overall
    bucket of 10 qps and burst 100.
    """
    return MaxOfRateLimiter[Hashable](
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(10.0, 100, clock=clock),
    )
