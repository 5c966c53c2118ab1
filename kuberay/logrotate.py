"""A log file rotated by size, as KubeRay's operator rotates its ``--log-file-path`` with
lumberjack (``MaxSize: 500`` MB, ``MaxBackups: 10``, ``MaxAge: 30`` days, not compressed).

When a write would take the file past ``max_bytes`` it is renamed to
``<stem>-<UTC time as 2006-01-02T15-04-05.000><ext>`` beside it (lumberjack's backup name, so
a log shipper's glob matches both operators) and a new file is started; then only the newest
``max_backups`` backups younger than ``max_age_days`` are kept (0 disables either bound).
"""

from __future__ import annotations

import contextlib
import os
import time
from datetime import UTC, datetime
from pathlib import Path

MEGABYTE = 1024 * 1024
DEFAULT_MAX_SIZE_MB = 500
DEFAULT_MAX_BACKUPS = 10
DEFAULT_MAX_AGE_DAYS = 30
BACKUP_TIME_FORMAT = "%Y-%m-%dT%H-%M-%S"


class RotatingFile:
    """A text stream (``write``/``flush``/``close``) over a size-rotated file."""

    def __init__(
        self,
        path: str | Path,
        *,
        max_bytes: int = DEFAULT_MAX_SIZE_MB * MEGABYTE,
        max_backups: int = DEFAULT_MAX_BACKUPS,
        max_age_days: float = DEFAULT_MAX_AGE_DAYS,
    ) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.max_backups = max_backups
        self.max_age_days = max_age_days
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.size = os.fstat(self._fd).st_size

    @property
    def name(self) -> str:
        """The file's path (as a file object's ``name``)."""
        return str(self.path)

    def write(self, text: str) -> int:
        """Append ``text``, rotating first when it would not fit."""
        data = text.encode("utf-8")
        if self.max_bytes > 0 and self.size > 0 and self.size + len(data) > self.max_bytes:
            self.rotate()
        os.write(self._fd, data)
        self.size += len(data)
        return len(text)

    def flush(self) -> None:
        """Writes are unbuffered; nothing to do."""

    def close(self) -> None:
        """Close the file."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def backup_name(self, when: float) -> Path:
        """lumberjack's name of a backup made at ``when`` (UTC, milliseconds)."""
        moment = datetime.fromtimestamp(when, UTC)
        stamp = f"{moment.strftime(BACKUP_TIME_FORMAT)}.{moment.microsecond // 1000:03d}"
        return self.path.with_name(f"{self.path.stem}-{stamp}{self.path.suffix}")

    def backups(self) -> list[Path]:
        """The existing backups, newest first."""
        return [path for _, path in self._backups()]

    def _backups(self) -> list[tuple[datetime, Path]]:
        found: list[tuple[datetime, Path]] = []
        prefix, suffix = f"{self.path.stem}-", self.path.suffix
        for candidate in self.path.parent.iterdir():
            name = candidate.name
            if not (name.startswith(prefix) and name.endswith(suffix)) or candidate == self.path:
                continue
            stamp = name[len(prefix) : len(name) - len(suffix)]
            with contextlib.suppress(ValueError):
                moment = datetime.strptime(stamp, BACKUP_TIME_FORMAT + ".%f")
                found.append((moment.replace(tzinfo=UTC), candidate))
        return sorted(found, reverse=True)

    def rotate(self) -> None:
        """Move the current file to a backup, start a new one, drop old backups."""
        os.close(self._fd)
        when = time.time()
        while self.backup_name(when).exists():  # two rotations within a millisecond
            when += 0.001
        os.replace(self.path, self.backup_name(when))
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.size = 0
        self._prune()

    def _prune(self) -> None:
        backups = self._backups()
        doomed = [p for _, p in backups[self.max_backups :]] if self.max_backups > 0 else []
        if self.max_age_days > 0:
            cutoff = time.time() - self.max_age_days * 86400
            doomed += [p for t, p in backups if p not in doomed and t.timestamp() < cutoff]
        for path in doomed:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
