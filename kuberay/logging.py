"""structlog set-up shared by the operator and library users.

``configure_logging("json")`` or ``("console")``: every line carries timestamp,
level and logger name, plus whatever is bound in contextvars (controllers bind
controller, namespace, name and reconcile_id around each reconcile). Optionally
also writes to ``file_path`` with its own encoder.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

ENCODERS = ("json", "console")


def _renderer(encoder: str) -> Any:
    if encoder == "json":
        return structlog.processors.JSONRenderer()
    if encoder == "console":
        return structlog.dev.ConsoleRenderer(colors=False)
    raise ValueError(f"unknown log encoder {encoder!r}: use one of {', '.join(ENCODERS)}")


class _Tee:
    """Writes each rendered line to several streams (stdout and a log file)."""

    def __init__(self, outputs: list[tuple[TextIO, Any]], name: str = "") -> None:
        self.outputs = outputs
        self.name = name

    def msg(self, **event_dict: Any) -> None:
        for stream, renderer in self.outputs:
            stream.write(renderer(None, "", event_dict) + "\n")
            stream.flush()

    log = debug = info = warning = warn = error = critical = exception = msg


def configure_logging(
    encoder: str = "json",
    *,
    level: str = "info",
    file_path: str | None = None,
    file_encoder: str = "json",
    stream: TextIO | None = None,
) -> None:
    """Configure structlog (and stdlib logging) for the whole process."""
    outputs: list[tuple[TextIO, Any]] = [(stream or sys.stdout, _renderer(encoder))]
    if file_path:
        outputs.append((open(file_path, "a", encoding="utf-8"), _renderer(file_encoder)))  # noqa: SIM115
    lvl = logging.getLevelName(level.upper())
    if not isinstance(lvl, int):
        raise ValueError(f"unknown log level {level!r}")
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.stdlib.add_logger_name,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=lambda *args: _Tee(outputs, str(args[0]) if args else ""),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(
        level=lvl, stream=stream or sys.stderr, format="%(name)s %(levelname)s %(message)s"
    )
