"""Events on local disk first (KubeRay's disk-first event collector).

One append-only file per category (``node_events`` or ``job_events/<job>``):
``<data dir>/<cluster>_<ns>/<session>/<category>/<nodeID>_<unixNano>.jsonl``, written through a
64 KiB buffer flushed after each request. A file is rotated (closed and handed to the
uploader) when it is older than the rotation interval or bigger than the size limit, when the
events' session changes, when the node ID changes, and at shutdown; an empty file is dropped.
``disk_used`` counts the bytes under the data dir (re-measured every minute) for the 503
backpressure check. The data dir is operator-configured (canonicalised once); below it
no symlink is followed (``safe_dirs``): a link a Ray job planted at a session or category
directory refuses the write (a warning, and an ``OSError`` for the caller) instead of
creating files where it points.

Everything here is synchronous and runs on the event loop thread; each call is short (one
request's writes), so no lock is needed.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import attrs
import orjson
import structlog

from kuberay.historyserver.collector.safe_dirs import open_dir
from kuberay.historyserver.collector.safe_open import FileId, Refused
from kuberay.historyserver.layout import check_segment

log = structlog.get_logger("historyserver.collector.events")

BUFFER_SIZE = 64 * 1024
DISK_PRESSURE_WATERMARK = 0.8


@attrs.frozen
class RotatedFile:
    """A closed event file waiting for upload (``path`` ends ``.jsonl`` or ``.jsonl.gz``).
    ``file_id`` is the file the collector wrote (or found at start-up): the uploader reads
    ``path`` only while it is still that file (``safe_open``)."""

    path: Path
    category: str
    session: str
    node_id: str
    created_ns: int
    file_id: FileId | None = None

    @property
    def compressed(self) -> bool:
        """Whether the file on disk is already gzipped."""
        return self.path.name.endswith(".gz")


@attrs.define
class ActiveFile:
    """The file a category is appending to."""

    path: Path
    category: str
    session: str
    node_id: str
    created_ns: int
    opened_at: float
    handle: IO[bytes]
    file_id: FileId | None = None
    size: int = 0
    flushed_size: int = 0
    flushed_at: float = 0.0

    def rotated(self) -> RotatedFile:
        """This file as a ``RotatedFile``."""
        return RotatedFile(
            self.path, self.category, self.session, self.node_id, self.created_ns, self.file_id
        )


def dir_size(root: Path) -> int:
    """Bytes in the regular files under ``root`` (0 when it does not exist)."""
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
    return total


class EventFiles:
    """The active files of one collector, keyed by category."""

    def __init__(
        self,
        data_dir: Path,
        cluster_key: str,
        *,
        node_id: str,
        max_file_size: int,
        rotation_interval: float,
        max_disk: int,
        wall_ns: Callable[[], int] = time.time_ns,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        data_dir = data_dir.resolve()  # canonical once; below it nothing is followed
        self.root = data_dir / cluster_key
        self.data_dir = data_dir
        self.node_id = node_id
        self.max_file_size = max_file_size
        self.rotation_interval = rotation_interval
        self.max_disk = max_disk
        self.wall_ns = wall_ns
        self.monotonic = monotonic
        self.active: dict[str, ActiveFile] = {}
        self.session: str | None = None
        self.disk_used = dir_size(data_dir)
        self._last_ns = 0

    # ----- backpressure -----------------------------------------------------------------
    def under_disk_pressure(self) -> bool:
        """Disk use at or above 80 % of the limit (KubeRay ``underDiskPressure``)."""
        return self.max_disk > 0 and self.disk_used >= int(self.max_disk * DISK_PRESSURE_WATERMARK)

    def reconcile_disk(self) -> None:
        """Re-measure ``disk_used`` from the files (corrects drift)."""
        self.disk_used = dir_size(self.data_dir)

    # ----- writing ----------------------------------------------------------------------
    def write(self, events: list[tuple[str, str, dict[str, Any]]]) -> list[RotatedFile]:
        """Append ``(session, category, event)`` triples; returns files rotated on the way
        (a session change rotates every open file first)."""
        rotated: list[RotatedFile] = []
        touched: set[str] = set()
        try:
            for session, category, event in events:
                if self.session is not None and session != self.session:
                    log.info("session changed, rotating event files", old=self.session, new=session)
                    self._flush(touched)
                    touched.clear()
                    rotated.extend(self.rotate_all())
                self.session = session
                active = self.active.get(category) or self._open(category, session)
                line = orjson.dumps(event) + b"\n"
                active.handle.write(line)
                active.size += len(line)
                self.disk_used += len(line)
                touched.add(category)
        finally:
            self._flush(touched)
        return rotated

    def _flush(self, categories: set[str]) -> None:
        for category in categories:
            active = self.active.get(category)
            if active is not None:
                active.handle.flush()

    def _next_ns(self) -> int:
        ns = max(self.wall_ns(), self._last_ns + 1)
        self._last_ns = ns
        return ns

    def _open(self, category: str, session: str) -> ActiveFile:
        check_segment(session, "session name")
        for part in category.split("/"):
            check_segment(part, "event category")
        directory = self.root / session / category
        self.data_dir.mkdir(parents=True, exist_ok=True)  # operator-configured: trusted
        try:  # below the data dir nothing is followed (a planted link refuses the write)
            dir_fd = open_dir(self.data_dir, directory, create=True)
        except Refused as exc:
            log.warning(
                "skipped a directory that is not safe to write",
                path=str(exc.path),
                reason=exc.reason,
            )
            raise OSError(errno.ELOOP, f"{exc.path}: {exc.reason}") from None
        created = self._next_ns()
        path = directory / f"{self.node_id}_{created}.jsonl"
        # a new name, never an existing file or a link planted there (O_EXCL | O_NOFOLLOW)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(path.name, flags, 0o644, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
        handle = os.fdopen(fd, "ab", buffering=BUFFER_SIZE)  # kept open until rotation
        file_id = FileId.of(os.fstat(fd))
        now = self.monotonic()
        active = ActiveFile(
            path=path,
            category=category,
            session=session,
            node_id=self.node_id,
            created_ns=created,
            opened_at=now,
            handle=handle,
            file_id=file_id,
            flushed_at=now,
        )
        self.active[category] = active
        return active

    # ----- rotation ---------------------------------------------------------------------
    def _close(self, category: str) -> RotatedFile | None:
        active = self.active.pop(category)
        size = 0
        try:
            try:
                active.handle.flush()
                os.fsync(active.handle.fileno())
            except OSError as exc:
                log.warning("flush before rotation failed", path=str(active.path), error=str(exc))
            size = os.fstat(active.handle.fileno()).st_size  # the file written, not the path
        except (OSError, ValueError):
            size = 0
        finally:
            active.handle.close()
        if size == 0:
            active.path.unlink(missing_ok=True)
            return None
        return active.rotated()

    def rotate_due(self) -> list[RotatedFile]:
        """Rotate the files older than the interval or bigger than the size limit."""
        now = self.monotonic()
        due = [
            c
            for c, a in self.active.items()
            if now - a.opened_at >= self.rotation_interval or a.size >= self.max_file_size
        ]
        return [r for c in due if (r := self._close(c)) is not None]

    def rotate_all(self) -> list[RotatedFile]:
        """Rotate every open file."""
        return [r for c in list(self.active) if (r := self._close(c)) is not None]

    def set_node_id(self, node_id: str) -> list[RotatedFile]:
        """Switch to a new node ID (a raylet restart); open files are rotated first so their
        events keep the old ID."""
        if node_id == self.node_id:
            return []
        log.info("node id changed, rotating event files", old=self.node_id, new=node_id)
        rotated = self.rotate_all()
        self.node_id = node_id
        return rotated

    def released(self, nbytes: int) -> None:
        """``nbytes`` left the disk (uploaded and deleted)."""
        self.disk_used = max(0, self.disk_used - nbytes)
