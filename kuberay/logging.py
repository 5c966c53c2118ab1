"""structlog set-up shared by the operator and library users.

``configure_logging("json")`` or ``("console")``: every line carries the time, level and logger
name, plus whatever is bound in contextvars (controllers bind controller, namespace, name and
reconcile_id around each reconcile). By default (``keys="controller-runtime"``) lines are
shaped as KubeRay's controller-runtime/zap logger writes them (``ts``, ``level``, ``logger``,
``msg``, ``"RayCluster": {"name", "namespace"}``, ``reconcileID``: :mod:`kuberay.logkeys`);
``keys="structlog"`` keeps structlog's (``timestamp``, ``event``, ``reconcile_id``).

Records of the standard library's :mod:`logging` (aiohttp, asyncio, kubernetes-asyncio...)
go through the same processors and renderers. Optionally also writes to ``file_path`` with
its own encoder, rotated by size (:mod:`kuberay.logrotate`, KubeRay's lumberjack defaults).
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

from kuberay.logkeys import KEY_FORMATS, drop_request, zap_console, zap_json
from kuberay.logrotate import (
    DEFAULT_MAX_AGE_DAYS,
    DEFAULT_MAX_BACKUPS,
    DEFAULT_MAX_SIZE_MB,
    MEGABYTE,
    RotatingFile,
)

ENCODERS = ("json", "console")


def _renderer(encoder: str, keys: str) -> Any:
    if keys not in KEY_FORMATS:
        raise ValueError(f"unknown log keys {keys!r}: use one of {', '.join(KEY_FORMATS)}")
    if encoder == "json":
        if keys == "controller-runtime":
            return zap_json
        return drop_request(structlog.processors.JSONRenderer())
    if encoder == "console":
        if keys == "controller-runtime":
            return zap_console
        return drop_request(structlog.dev.ConsoleRenderer(colors=False))
    raise ValueError(f"unknown log encoder {encoder!r}: use one of {', '.join(ENCODERS)}")


class _Tee:
    """Writes each rendered line to several streams (stdout and a log file)."""

    def __init__(self, outputs: list[tuple[TextIO | None, Any]], name: str = "") -> None:
        self.outputs = outputs
        self.name = name

    def msg(self, **event_dict: Any) -> None:
        for stream, renderer in self.outputs:
            out = stream if stream is not None else sys.stdout  # None: stdout as it is now
            try:
                out.write(renderer(None, "", dict(event_dict)) + "\n")
                out.flush()
            except ValueError:  # closed (a library logging at interpreter exit)
                continue

    log = debug = info = warning = warn = error = critical = exception = msg


class StructlogHandler(logging.Handler):
    """Hands every standard-library record to structlog (same keys, renderers, outputs)."""

    def emit(self, record: logging.LogRecord) -> None:
        """Log ``record`` through a structlog logger of the record's name."""
        try:
            fields: dict[str, Any] = {}
            if record.exc_info:
                fields["exc_info"] = record.exc_info
            level = logging.getLevelName(record.levelno).lower()
            logger = structlog.get_logger(record.name)
            getattr(logger, level if level in _LEVEL_METHODS else "info")(
                record.getMessage(), **fields
            )
        except Exception:
            self.handleError(record)


_LEVEL_METHODS = ("debug", "info", "warning", "error", "critical")
_previous_file: RotatingFile | None = None


def configure_logging(
    encoder: str = "json",
    *,
    level: str = "info",
    file_path: str | None = None,
    file_encoder: str = "json",
    stream: TextIO | None = None,
    keys: str = "controller-runtime",
    file_max_size_mb: float = DEFAULT_MAX_SIZE_MB,
    file_max_backups: int = DEFAULT_MAX_BACKUPS,
    file_max_age_days: float = DEFAULT_MAX_AGE_DAYS,
) -> None:
    """Configure structlog and the standard library's logging for the whole process."""
    global _previous_file
    outputs: list[tuple[TextIO | None, Any]] = [(stream, _renderer(encoder, keys))]
    file_renderer = _renderer(file_encoder, keys)
    lvl = logging.getLevelName(level.upper())
    if not isinstance(lvl, int):
        raise ValueError(f"unknown log level {level!r}")
    if _previous_file is not None:
        _previous_file.close()
        _previous_file = None
    if file_path:
        _previous_file = RotatingFile(
            file_path,
            max_bytes=int(file_max_size_mb * MEGABYTE),
            max_backups=file_max_backups,
            max_age_days=file_max_age_days,
        )
        outputs.append((_previous_file, file_renderer))  # type: ignore[arg-type]
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
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, StructlogHandler):
            root.removeHandler(handler)
    root.addHandler(StructlogHandler())
    root.setLevel(lvl)
    logging.captureWarnings(True)  # warnings.warn(...) too, through the "py.warnings" logger
