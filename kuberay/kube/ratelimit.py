"""Client-side request throttling (client-go's ``--qps`` / ``--burst``).

A token bucket that holds at most ``burst`` tokens and refills at ``qps`` per
second. ``await acquire()`` returns when a token is available; requests are
served in arrival order, so a burst of reconciles cannot starve a watch restart.
"""

from __future__ import annotations

import asyncio
import time


class TokenBucket:
    """Async token bucket: ``qps`` tokens per second, up to ``burst`` at once.

    ``qps <= 0`` disables throttling.
    """

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = qps
        self.burst = max(1, burst)
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        """Wait until one token is available, then take it."""
        if self.qps <= 0:
            return
        async with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            if self._tokens >= 1:
                self._tokens -= 1
                return
            wait = (1 - self._tokens) / self.qps
            self._tokens -= 1
            await asyncio.sleep(wait)
