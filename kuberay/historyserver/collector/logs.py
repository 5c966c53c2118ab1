"""Ray's log files into storage, while the cluster runs and at the end.

* **Live session** (``session_latest/logs/**``): every scan interval, each regular file that is
  new or changed (size, mtime or inode differ from what was last put) is put whole at
  ``<node>/logs/<relative path>``: object stores have no append. Re-puts are bounded: a file
  is put at most once per ``interval * ceil(size / 16 MiB)`` (big files less often) and a scan
  puts at most ``budget`` bytes; what is left waits for the next scan. At shutdown everything
  that changed is put, without limits. Files are streamed in 1 MiB chunks, never read whole.
* **Rotation**: Ray renames ``x.log`` to ``x.log.1`` (and so on) when it rotates; each name is
  its own key, so a rotated file is simply a new file to put at the next scan, and the
  scan interval (10 s) is far shorter than the time Ray takes to fill a file.
* **prev-logs** (KubeRay): ``prev-logs/<session>/<node>/logs/**`` (earlier sessions, a Ray
  container restart) is put as soon as it is seen; each put file moves to
  ``persist-complete-logs/...`` so it is not put twice, and the node dir is removed at the
  end. A file already put from the live session unchanged (same size and mtime) is not put
  again. The move never follows a symlink below the Ray temp root (``safe_dirs``): one planted
  in ``persist-complete-logs/...`` or ``prev-logs/...`` refuses it (a warning with the reason)
  and the file stays where it was.
* **Trust boundary**: Ray jobs can write these directories, so every file is read through
  ``safe_open`` (no symlink anywhere in the path, a regular file only, the very file the scan
  recorded: same ``st_dev``/``st_ino``). A refused file is skipped with a warning (its path
  relative to the logs dir and the reason) and counted in ``refused``; it is looked at afresh
  at the next scan, where a symlink or a FIFO is not listed and a regular file that replaced
  the scanned one is a new file to put.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import attrs
import structlog

from kuberay.historyserver.collector.safe_dirs import is_regular_file, move
from kuberay.historyserver.collector.safe_open import FileId, Refused, SafeFile, real_subdirs
from kuberay.historyserver.collector.sessions import PERSIST_COMPLETE, PREV_LOGS
from kuberay.historyserver.layout import Layout, LayoutError, check_relative_path, is_safe_segment
from kuberay.historyserver.storage.base import ObjectStore
from kuberay.historyserver.storage.errors import StorageError

log = structlog.get_logger("historyserver.collector.logs")

SIZE_STEP = 16 << 20


@attrs.frozen
class FileSig:
    """What a put captured of a file."""

    size: int
    mtime_ns: int
    inode: int


@attrs.define
class _Put:
    sig: FileSig
    at: float


def walk_files(root: Path) -> list[tuple[str, os.stat_result]]:
    """``(relative path, lstat)`` of every regular file under ``root`` (symlinks skipped,
    never followed, ``root`` itself included), sorted by path."""
    out: list[tuple[str, os.stat_result]] = []
    if root.is_symlink() or not root.is_dir():
        return out
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    rel = Path(entry.path).relative_to(root).as_posix()
                    out.append((rel, entry.stat(follow_symlinks=False)))
            except OSError:
                continue
    out.sort()
    return out


def _sig(st: os.stat_result) -> FileSig:
    return FileSig(st.st_size, st.st_mtime_ns, st.st_ino)


class LogUploader:
    """Puts one node's log files; ``put_at`` remembers what each key holds."""

    def __init__(
        self,
        store: ObjectStore,
        layout: Layout,
        tmp_root: Path,
        *,
        interval: float,
        budget: int,
    ) -> None:
        self.store = store
        self.layout = layout
        self.tmp_root = tmp_root.resolve()  # canonical once; below it nothing is followed
        self.interval = interval
        self.budget = budget
        self.put_at: dict[str, _Put] = {}
        self.bytes_put = 0
        self.files_put = 0
        self.refused = 0

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    async def _put_file(self, key: str, path: Path, st: os.stat_result) -> None:
        """Put the first ``st.st_size`` bytes of ``path``, the file the scan saw (``st``);
        ``Refused`` (nothing put) when it is not that regular file any more."""
        with await SafeFile.open(path, FileId.of(st)) as f:
            await self.store.put(key, f.chunks(st.st_size), content_type="text/plain")
        self.bytes_put += st.st_size
        self.files_put += 1

    def _refused(self, exc: Refused, rel: str, key: str) -> None:
        self.refused += 1
        log.warning(
            "skipped a log file that is not safe to read", path=rel, reason=exc.reason, key=key
        )

    # ----- live session -----------------------------------------------------------------
    async def scan_session(self, session_dir: Path, node_id: str, *, final: bool = False) -> int:
        """Put what is new or changed in ``<session_dir>/logs``; returns files put.
        ``session_dir`` has no symlink in it (``resolve_session_latest`` gives such a path)."""
        session_dir = Path(os.path.abspath(session_dir))
        session = session_dir.name
        if not (is_safe_segment(session) and is_safe_segment(node_id)):
            log.warning(
                "session or node name does not fit the layout", session=session, node=node_id
            )
            return 0
        files = await asyncio.to_thread(walk_files, session_dir / "logs")
        now = self._now()
        due: list[tuple[float, str, str, os.stat_result]] = []
        for rel, st in files:
            try:
                key = self.layout.log_key(session, node_id, rel)
            except LayoutError:
                continue
            sig = _sig(st)
            last = self.put_at.get(key)
            if last is not None and last.sig == sig:
                continue
            if not final and last is not None:
                steps = max(1, -(-st.st_size // SIZE_STEP))
                if now - last.at < self.interval * steps:
                    continue
            due.append((last.at if last else float("-inf"), rel, key, st))
        due.sort(key=lambda d: d[0])  # never-put files first, then the longest-waiting
        spent = put = 0
        for _, rel, key, st in due:
            if not final and spent > 0 and spent + st.st_size > self.budget:
                break
            try:
                await self._put_file(key, session_dir / "logs" / rel, st)
            except Refused as exc:
                self._refused(exc, rel, key)
                continue
            except FileNotFoundError:
                continue  # rotated away or removed between the scan and the put
            except (OSError, StorageError) as exc:
                log.warning("log upload failed", key=key, error=str(exc))
                continue
            self.put_at[key] = _Put(_sig(st), now)
            spent += st.st_size
            put += 1
        return put

    # ----- prev-logs --------------------------------------------------------------------
    async def process_prev_logs(self) -> list[str]:
        """Put every ``prev-logs/<session>/<node>/logs`` file; returns the sessions seen."""
        root = self.tmp_root / PREV_LOGS
        sessions: list[str] = []
        if not root.is_dir():
            return sessions
        for session_dir in sorted(real_subdirs(root)):
            if not is_safe_segment(session_dir.name):
                log.warning("skipping prev-logs session with an unsafe name", name=session_dir.name)
                continue
            sessions.append(session_dir.name)
            for node_dir in sorted(real_subdirs(session_dir)):
                if not is_safe_segment(node_dir.name):
                    log.warning("skipping prev-logs node with an unsafe name", name=node_dir.name)
                    continue
                await self._process_prev_node(session_dir.name, node_dir)
        return sessions

    async def _process_prev_node(self, session: str, node_dir: Path) -> None:
        node = node_dir.name
        logs = node_dir / "logs"
        done_root = self.tmp_root / PERSIST_COMPLETE / session / node / "logs"
        ok = True
        for rel, st in await asyncio.to_thread(walk_files, logs):
            try:
                key = self.layout.log_key(session, node, check_relative_path(rel))
            except LayoutError:
                continue
            target = done_root / rel
            last = self.put_at.get(key)
            unchanged = last is not None and (last.sig.size, last.sig.mtime_ns) == (
                st.st_size,
                st.st_mtime_ns,
            )
            if not unchanged and not is_regular_file(self.tmp_root, target):
                try:
                    await self._put_file(key, logs / rel, st)
                except Refused as exc:
                    self._refused(exc, rel, key)
                    ok = False  # looked at afresh next time: a replacement is put then
                    continue
                except (OSError, StorageError) as exc:
                    log.warning("prev-logs upload failed", key=key, error=str(exc))
                    ok = False
                    continue
            self.put_at[key] = _Put(_sig(st), self._now())
            try:
                await asyncio.to_thread(move, self.tmp_root, logs / rel, target)
            except Refused as exc:
                ok = False  # the file stays in prev-logs (already put: not put again)
                log.warning(
                    "skipped a move that is not safe",
                    path=str(exc.path),
                    reason=exc.reason,
                    into=PERSIST_COMPLETE,
                )
            except OSError as exc:
                log.warning(
                    "failed to mark a prev-logs file done", path=str(logs / rel), error=str(exc)
                )
        if ok:
            await asyncio.to_thread(shutil.rmtree, node_dir, True)
            log.info("uploaded prev-logs", session=session, node=node)
