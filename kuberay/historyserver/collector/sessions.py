"""Ray's session directories on the shared ``/tmp/ray`` volume (KubeRay ``utils.go``).

* ``session_latest`` is a symlink to the active ``session_<date>_<time>_<micro>_<pid>``;
* a session is live while ``sockets/raylet`` accepts a unix connection;
* an earlier session's ``logs/`` is moved to ``prev-logs/<session>/<node>/logs`` so the log
  collector uploads it (and ``persist-complete-logs/`` records what was uploaded).
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import structlog

from kuberay.historyserver.collector.safe_dirs import make_dirs, move
from kuberay.historyserver.collector.safe_open import Refused
from kuberay.historyserver.layout import is_safe_segment

log = structlog.get_logger("historyserver.collector.sessions")

SESSION_LATEST = "session_latest"
PREV_LOGS = "prev-logs"
PERSIST_COMPLETE = "persist-complete-logs"


def resolve_session_latest(tmp_root: Path) -> Path | None:
    """The directory ``session_latest`` points at (absolute, symlink-free), or ``None`` when
    it is missing or is not a ``session_*`` directory directly under ``tmp_root`` (a Ray job
    can point the link anywhere; the collector reads only inside the Ray temp root)."""
    link = tmp_root / SESSION_LATEST
    try:
        root = tmp_root.resolve(strict=True)
        session = link.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if session.parent != root or not session.name.startswith("session_"):
        log.warning(
            "session_latest points outside the Ray temp root, ignored",
            path=str(session),
            root=str(root),
        )
        return None
    return session


def raylet_alive(session_dir: Path, timeout: float = 1.0) -> bool:
    """Whether the session's raylet socket accepts a connection."""
    path = session_dir / "sockets" / "raylet"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except OSError:
        return False
    finally:
        sock.close()
    return True


async def wait_for_session(
    tmp_root: Path, *, attempts: int = 12, interval: float = 5.0, require_raylet: bool = True
) -> Path:
    """The active session dir once its raylet is up (KubeRay ``GetSessionDir``: 12 x 5 s).
    Raises ``TimeoutError`` after the last attempt."""
    for attempt in range(1, attempts + 1):
        session = resolve_session_latest(tmp_root)
        if session is not None and (
            not require_raylet or await asyncio.to_thread(raylet_alive, session)
        ):
            return session
        log.info("waiting for the active Ray session", attempt=attempt, found=str(session or ""))
        if attempt < attempts:
            await asyncio.sleep(interval)
    raise TimeoutError(f"timeout waiting for an active Ray session under {tmp_root}")


def move_session_logs_to_prev(tmp_root: Path, session_dir: Path, node_id: str) -> bool:
    """Move ``<session>/logs`` to ``prev-logs/<session>/<node>/logs``; ``False`` when there was
    nothing to move. An existing destination is merged into, file by file.

    ``session_dir`` is a directory directly under ``tmp_root``. Nothing below ``tmp_root`` is
    followed (``safe_dirs``): a symlink planted in the source or the destination path (say
    ``prev-logs -> /etc``) refuses that move, logged with its reason, and the files stay where
    they were."""
    root = tmp_root.resolve()
    logs = root / session_dir.name / "logs"
    if not logs.is_dir() or logs.is_symlink():
        return False
    if not (is_safe_segment(session_dir.name) and is_safe_segment(node_id)):
        log.warning("not moving logs with an unsafe name", session=session_dir.name, node=node_id)
        return False
    dest = root / PREV_LOGS / session_dir.name / node_id
    target = dest / "logs"
    try:
        make_dirs(root, dest)
        if not target.exists():
            move(root, logs, target)
        else:
            for src in sorted(logs.rglob("*")):
                if src.is_file() and not src.is_symlink():
                    move(root, src, target / src.relative_to(logs))
    except Refused as exc:
        log.warning(
            "skipped a move that is not safe", path=str(exc.path), reason=exc.reason, into=PREV_LOGS
        )
        return False
    log.info("moved session logs to prev-logs", session=session_dir.name, node=node_id)
    return True


def move_leftover_session_logs(tmp_root: Path, active: Path, node_id: str) -> list[str]:
    """KubeRay ``MoveLeftoverSessionLogs``: every ``session_*`` dir other than ``active`` (not
    symlinks) gets its ``logs/`` moved to prev-logs. Returns the sessions moved."""
    moved: list[str] = []
    try:
        entries = sorted(os.scandir(tmp_root), key=lambda e: e.name)
    except OSError as exc:
        log.warning("cannot list the Ray temp root", path=str(tmp_root), error=str(exc))
        return moved
    for entry in entries:
        if entry.is_symlink() or not entry.is_dir() or not entry.name.startswith("session_"):
            continue
        if entry.name in (active.name, SESSION_LATEST):
            continue
        try:
            if move_session_logs_to_prev(tmp_root, Path(entry.path), node_id):
                moved.append(entry.name)
        except OSError as exc:
            log.warning("failed to move leftover session logs", session=entry.name, error=str(exc))
    return moved
