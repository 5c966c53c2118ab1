"""Bounded waits with progress lines (for ``create --wait`` and ``job submit``)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from kuberay.kubectl_ray.context import CLIError, Env
from kuberay.kubectl_ray.progress import Progress

T = TypeVar("T")

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """A Go duration (``5m``, ``1h30m``, ``90s``) or plain seconds, in seconds."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    pos, total = 0, 0.0
    for match in _DURATION.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos != len(text) or not text:
        raise ValueError(f"invalid duration {text!r}")
    return total


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
