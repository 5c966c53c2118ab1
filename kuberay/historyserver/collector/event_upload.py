"""Uploading event files: rotated ones, growing ones ("live flush"), and a crash's leftovers.

One worker takes tasks in order, so two puts of one key never race (a live flush queued
before a rotation is put before the rotated file, and the last put of a key is always the
whole file).

* A rotated file is gzipped first when compression is on (``.jsonl.gz.tmp``, fsync, atomic
  rename, then the ``.jsonl`` is removed), put at its key, and deleted. A failed put is
  retried after 5 s; during shutdown it gets one last attempt and otherwise stays on disk.
* The key comes from the file name alone (``<node>_<unixNano>.jsonl`` ->
  ``<node>-<YYYY-MM-DD-HH>-<unixNano>.jsonl[.gz]`` under the session's node dir), so putting
  the same file again (a retry, a restart) overwrites the same object: never a duplicate.
* A live flush puts the first ``size`` bytes of an active file (whole lines; gzipped on the
  fly when compression is on) at the key the file will have when rotated.
* ``resume`` (startup) queues what a previous run left: ``.tmp`` files are deleted, a
  ``.jsonl.gz`` is preferred over its ``.jsonl``.
* The data dir is on the volume Ray jobs write, so every event file is read through
  ``safe_open``: no symlink in the path, a regular file, and the very file the collector wrote
  (``RotatedFile.file_id``; for leftovers, the file ``resume`` found). A refused file is not
  put, not retried and not deleted; a warning names it and the reason, ``refused`` counts it.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import zlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import attrs
import structlog

from kuberay.historyserver.collector.event_files import EventFiles, RotatedFile
from kuberay.historyserver.collector.safe_open import (
    FileId,
    Refused,
    SafeFile,
    open_regular,
    read_upto,
    real_subdirs,
)
from kuberay.historyserver.layout import (
    JOB_EVENTS_DIR,
    NODE_EVENTS_DIR,
    Layout,
    LayoutError,
    event_file_name,
    is_safe_segment,
)
from kuberay.historyserver.storage.base import ObjectStore
from kuberay.historyserver.storage.errors import StorageError

log = structlog.get_logger("historyserver.collector.events")

CHUNK = 1 << 20
RETRY_BACKOFF = 5.0
MAX_QUEUED_FLUSHES = 64


@attrs.frozen
class LiveFlush:
    """Put the first ``size`` bytes of an active file at its final key."""

    file: RotatedFile
    size: int


Task = RotatedFile | LiveFlush


async def gzip_chunks(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The gzip stream of ``chunks``, compressed as it goes."""
    comp = zlib.compressobj(6, zlib.DEFLATED, 31)
    async for chunk in chunks:
        out = comp.compress(chunk)
        if out:
            yield out
    yield comp.flush()


@attrs.frozen
class Gzipped:
    """What ``gzip_file`` wrote: the ``.gz`` file, its identity, the sizes before and after."""

    path: Path
    file_id: FileId
    src_size: int
    size: int


def gzip_file(src: Path, expect: FileId | None = None) -> Gzipped:
    """``src`` gzipped to ``src.gz`` through ``src.gz.tmp`` (fsync, rename); ``src`` removed.
    ``src`` is opened by ``safe_open.open_regular`` (``Refused`` when it is a link, not a
    regular file or not ``expect``) and read up to its size at open; ``.gz.tmp`` is created new
    (``O_EXCL | O_NOFOLLOW``: never a file or link someone put there)."""
    dst = src.with_name(src.name + ".gz")
    tmp = src.with_name(src.name + ".gz.tmp")
    fd, st = open_regular(src, expect)
    try:
        tmp.unlink(missing_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(tmp, flags, 0o644), "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
                for chunk in read_upto(fd, st.st_size):
                    gz.write(chunk)
            raw.flush()
            os.fsync(raw.fileno())
            out = os.fstat(raw.fileno())
        os.replace(tmp, dst)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    src.unlink(missing_ok=True)
    return Gzipped(dst, FileId.of(out), st.st_size, out.st_size)


def parse_local_name(name: str) -> tuple[str, int] | None:
    """``(node, unixNano)`` from ``<node>_<unixNano>.jsonl[.gz]``, ``None`` if not that form."""
    base = name.removesuffix(".gz").removesuffix(".jsonl")
    node, sep, ns = base.rpartition("_")
    if not sep or not node or not ns.isdigit():
        return None
    return node, int(ns)


class EventUploader:
    """The single upload worker for one collector's event files."""

    def __init__(
        self,
        store: ObjectStore,
        layout: Layout,
        files: EventFiles,
        *,
        compression: bool,
        retry_backoff: float = RETRY_BACKOFF,
        on_uploaded: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.layout = layout
        self.files = files
        self.compression = compression
        self.retry_backoff = retry_backoff
        self.on_uploaded = on_uploaded
        self.queue: asyncio.Queue[Task] = asyncio.Queue()
        self.final = False
        self._retries: dict[asyncio.TimerHandle, RotatedFile] = {}
        self._waiting: list[RotatedFile] = []
        self.uploaded = 0
        self.failed = 0
        self.refused = 0

    # ----- keys -------------------------------------------------------------------------
    def key_for(self, file: RotatedFile) -> str:
        """The object key of an event file (deterministic from its name)."""
        compressed = self.compression or file.compressed
        name = event_file_name(file.node_id, file.created_ns, compressed=compressed)
        if file.category == NODE_EVENTS_DIR:
            return self.layout.node_events_key(file.session, file.node_id, name)
        job = file.category.removeprefix(JOB_EVENTS_DIR + "/")
        return self.layout.job_events_key(file.session, file.node_id, job, name)

    # ----- queueing ---------------------------------------------------------------------
    def submit(self, files: list[RotatedFile]) -> None:
        """Queue rotated files for upload."""
        for f in files:
            self.queue.put_nowait(f)

    def flush_live(self, min_interval: float, size_step: int = 16 << 20) -> int:
        """Queue a live flush of each active file that grew, at most once per
        ``min_interval * ceil(size / size_step)`` seconds (big files less often). Returns how
        many were queued; none while the queue is backed up."""
        if self.queue.qsize() >= MAX_QUEUED_FLUSHES:
            return 0
        now = self.files.monotonic()
        queued = 0
        for active in self.files.active.values():
            if active.size <= active.flushed_size:
                continue
            steps = max(1, -(-active.size // size_step))
            if now - active.flushed_at < min_interval * steps:
                continue
            active.flushed_size, active.flushed_at = active.size, now
            self.queue.put_nowait(LiveFlush(active.rotated(), active.size))
            queued += 1
        return queued

    def _retry_later(self, file: RotatedFile) -> None:
        if self.final:
            self._waiting.append(file)
            return
        loop = asyncio.get_running_loop()

        def requeue() -> None:
            self._retries.pop(handle, None)
            self.queue.put_nowait(file)

        handle = loop.call_later(self.retry_backoff, requeue)
        self._retries[handle] = file

    # ----- work -------------------------------------------------------------------------
    async def run(self) -> None:
        """Work the queue until cancelled."""
        while True:
            task = await self.queue.get()
            try:
                await self._do(task)
            finally:
                self.queue.task_done()

    async def _do(self, task: Task) -> None:
        if isinstance(task, LiveFlush):
            await self._flush(task)
        else:
            await self._upload(task)

    def _refused(self, exc: Refused, key: str) -> None:
        self.refused += 1
        try:
            rel = exc.path.relative_to(self.files.root).as_posix()
        except ValueError:
            rel = str(exc.path)
        log.warning(
            "skipped an event file that is not safe to read", path=rel, reason=exc.reason, key=key
        )

    async def _flush(self, task: LiveFlush) -> None:
        key = ""
        try:
            key = self.key_for(task.file)
            with await SafeFile.open(task.file.path, task.file.file_id) as f:
                chunks = f.chunks(task.size)
                data = gzip_chunks(chunks) if self.compression else chunks
                await self.store.put(key, data, content_type=_content_type(key))
        except Refused as exc:
            self._refused(exc, key)
        except FileNotFoundError:
            return  # rotated (and uploaded) meanwhile
        except (OSError, StorageError, LayoutError) as exc:
            log.warning("live flush failed", path=str(task.file.path), error=str(exc))

    async def _upload(self, file: RotatedFile) -> bool:
        """One attempt; on failure a retry is scheduled (or the file kept for the next run)."""
        try:
            key = self.key_for(file)
        except LayoutError as exc:
            log.error(
                "event file does not fit the layout, left on disk",
                path=str(file.path),
                error=str(exc),
            )
            return False
        path = file.path
        try:
            if self.compression and not file.compressed:
                gz = await asyncio.to_thread(gzip_file, path, file.file_id)
                self.files.disk_used += gz.size - gz.src_size
                path = gz.path
                file = attrs.evolve(file, path=path, file_id=gz.file_id)
            with await SafeFile.open(path, file.file_id) as f:
                size = f.size
                await self.store.put(key, f.chunks(), content_type=_content_type(key))
        except Refused as exc:
            self._refused(exc, key)
            return False
        except FileNotFoundError:
            log.warning("event file vanished before upload", path=str(path))
            return False
        except (OSError, StorageError) as exc:
            self.failed += 1
            log.error(
                "event upload failed", key=key, path=str(path), error=str(exc), final=self.final
            )
            self._retry_later(file)
            return False
        path.unlink(missing_ok=True)
        self.files.released(size)
        self.uploaded += 1
        if self.on_uploaded is not None:
            self.on_uploaded(key)
        log.info("uploaded event file", key=key, bytes=size)
        return True

    async def drain(self) -> None:
        """Shutdown (with ``run`` still working): retry-waiting files are queued at once,
        every queued task gets one last attempt in order, and a file that still fails stays
        on disk for the next start."""
        self.final = True
        for handle, file in list(self._retries.items()):
            handle.cancel()
            self.queue.put_nowait(file)
        self._retries.clear()
        await self.queue.join()
        for f in self._waiting:
            log.error("event file kept on disk for the next start", path=str(f.path))
        self._waiting.clear()

    # ----- crash recovery ---------------------------------------------------------------
    def resume(self) -> int:
        """Queue every event file a previous run left under this cluster's data dir."""
        root = self.files.root
        if not root.is_dir():
            return 0
        found: list[RotatedFile] = []
        for session_dir in sorted(real_subdirs(root)):
            if not is_safe_segment(session_dir.name):
                continue
            node_dir = session_dir / NODE_EVENTS_DIR
            found += self._resume_dir(node_dir, session_dir.name, NODE_EVENTS_DIR)
            jobs = session_dir / JOB_EVENTS_DIR
            if jobs.is_dir():
                for job_dir in sorted(real_subdirs(jobs)):
                    if is_safe_segment(job_dir.name):
                        category = f"{JOB_EVENTS_DIR}/{job_dir.name}"
                        found += self._resume_dir(job_dir, session_dir.name, category)
        self.submit(found)
        if found:
            log.info("re-queued event files left by a previous run", files=len(found))
        return len(found)

    def _resume_dir(self, directory: Path, session: str, category: str) -> list[RotatedFile]:
        if directory.is_symlink() or not directory.is_dir():
            return []
        names = {
            e.name: (Path(e.path), e.stat(follow_symlinks=False))
            for e in os.scandir(directory)
            if e.is_file(follow_symlinks=False)  # a symlink is never queued
        }
        out: list[RotatedFile] = []
        for name, (path, st) in sorted(names.items()):
            if name.endswith(".tmp"):
                path.unlink(missing_ok=True)
                continue
            if name.endswith(".jsonl") and name + ".gz" in names:
                path.unlink(missing_ok=True)
                continue
            if not (name.endswith(".jsonl") or name.endswith(".jsonl.gz")):
                continue
            parsed = parse_local_name(name)
            if parsed is None or not is_safe_segment(parsed[0]):
                node, created = self.files.node_id, st.st_mtime_ns
            else:
                node, created = parsed
            out.append(RotatedFile(path, category, session, node, created, FileId.of(st)))
        return out


def _content_type(key: str) -> str:
    return "application/gzip" if key.endswith(".gz") else "application/x-ndjson"
