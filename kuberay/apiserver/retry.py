"""Upstream's retry policy for requests that are not watches (``apiserversdk/util``).

An answer of 408, 429, 500, 502, 503 or 504 is retried up to :attr:`RetryPolicy.max_retries`
times after ``initial * factor**attempt`` seconds, capped at ``max_backoff``; the whole
exchange has ``overall`` seconds: when the next wait would pass that deadline the request
fails (the proxy answers 502, as upstream's reverse proxy does on its transport's error).
The request body is replayed on each attempt; any other answer is returned at once.
"""

from __future__ import annotations

import attrs

RETRYABLE = frozenset({408, 429, 500, 502, 503, 504})


@attrs.frozen
class RetryPolicy:
    """The numbers of upstream's retry transport (defaults are upstream's)."""

    max_retries: int = 3
    initial: float = 0.5
    factor: float = 2.0
    max_backoff: float = 10.0
    overall: float = 30.0

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based)."""
        return float(min(self.initial * self.factor**attempt, self.max_backoff))

    def retry_after(self, status: int, attempt: int, remaining: float) -> float | None:
        """Seconds to wait before another attempt after answer ``status`` of attempt
        ``attempt`` with ``remaining`` seconds of the overall bound, or None to return the
        answer as it is. Raises :class:`RetryDeadline` when a retry is due but its wait would
        pass the deadline."""
        if status not in RETRYABLE or attempt >= self.max_retries:
            return None
        wait = self.backoff(attempt)
        if wait > remaining:
            raise RetryDeadline("retry timeout exceeded context deadline")
        return wait


class RetryDeadline(Exception):
    """A retry was due but would pass the overall deadline."""
