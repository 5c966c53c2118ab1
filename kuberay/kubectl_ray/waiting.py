"""Bounded waits with progress lines (for ``create --wait`` and ``job submit``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from kuberay.gocompat.goutil import go_duration_seconds
from kuberay.kubectl_ray.context import CLIError, Env
from kuberay.kubectl_ray.progress import Progress

T = TypeVar("T")


def parse_duration(text: str) -> float:
    """A Go duration (``5m``, ``1h30m``, ``90s``, as ``time.ParseDuration`` reads it) or plain
    seconds, in seconds; ``ValueError`` when it is neither or is negative."""
    text = text.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            seconds = go_duration_seconds(text)
        except ValueError:
            raise ValueError(f"invalid duration {text!r}") from None
    else:
        return seconds
    if seconds < 0:
        raise ValueError(f"invalid duration {text!r}")
    return seconds


async def poll(
    env: Env,
    probe: Callable[[], Awaitable[tuple[T | None, str]]],
    *,
    timeout: float,
    interval: float = 2.0,
    what: str,
) -> T:
    """Call ``probe`` until it returns a value, showing its progress text on stderr
    (:class:`~.progress.Progress`: a live line on a terminal). CLIError after ``timeout``
    seconds."""
    deadline = time.monotonic() + timeout
    shown = Progress(env.stderr)
    try:
        while True:
            value, progress = await probe()
            if value is not None:
                return value
            shown.update(progress)
            if time.monotonic() >= deadline:
                last = shown.last
                raise CLIError(f"timed out waiting for {what}" + (f" ({last})" if last else ""))
            await asyncio.sleep(min(interval, max(deadline - time.monotonic(), 0.05)))
    finally:
        shown.done()


__all__ = ["parse_duration", "poll"]
