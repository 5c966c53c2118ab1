"""Jittered exponential backoff with a reset after a healthy period (client-go's
reflector defaults: 0.8 s initial, x2, 30 s cap, jitter 1.0, reset after 2 min)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable


class Backoff:
    """``next()`` returns the next delay; a quiet ``reset_after`` seconds starts over."""

    def __init__(
        self,
        initial: float = 0.8,
        factor: float = 2.0,
        cap: float = 30.0,
        jitter: float = 1.0,
        reset_after: float = 120.0,
        *,
        now: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.initial = initial
        self.factor = factor
        self.cap = cap
        self.jitter = jitter
        self.reset_after = reset_after
        self._now = now
        self._rand = rand
        self._current = 0.0
        self._last = 0.0

    def next(self) -> float:
        """The delay before the next attempt (grows until ``cap``, plus jitter)."""
        now = self._now()
        if self._current == 0.0 or now - self._last > self.reset_after:
            self._current = self.initial
        else:
            self._current = min(self.cap, self._current * self.factor)
        self._last = now
        return self._current * (1.0 + self.jitter * self._rand())

    def reset(self) -> None:
        """Start over at ``initial`` on the next failure."""
        self._current = 0.0
