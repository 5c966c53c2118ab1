"""Creating directories and moving files under a directory a Ray job can write.

``safe_open`` guards the collector's reads; this module guards its writes. The collector
creates ``prev-logs/<session>/<node>/logs/...``, ``persist-complete-logs/...`` and the event
data directories under the Ray temp root, and moves files into them. A Ray job can plant a
symlink at any of those components (``persist-complete-logs -> /etc``); ``mkdir(parents=True)``
and ``os.replace`` by path would follow it and create or move files wherever it points.

So, under a trusted ``root`` (operator-configured, canonicalised at start-up, opened as it is):

* every component below ``root`` is opened with ``openat(O_DIRECTORY | O_NOFOLLOW)`` relative
  to the previous one's descriptor, and created with ``mkdirat`` when missing (``create``);
  a symlinked component raises ``Refused(SYMLINK)`` instead of being followed;
* a move is one ``renameat`` between two such descriptors, so neither parent can be swapped
  for a link between the check and the rename; ``renameat`` never follows the last component
  (a link planted at the target name is replaced, not written through), and a source that is
  itself a symlink is refused.

The caller skips what is refused, logs ``reason`` and carries on (as for ``safe_open``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kuberay.historyserver.collector.safe_open import SYMLINK, Refused, walk_dirs

DIR_MODE = 0o755
#: the trusted root itself: opened as configured (it may be reached through a link)
_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def _parts(root: Path, path: Path) -> tuple[str, ...]:
    """``path``'s components below ``root``; ``ValueError`` when it is not under ``root`` or
    has a ``.``/``..`` component."""
    parts = path.relative_to(root).parts
    if any(p in (".", "..") for p in parts):
        raise ValueError(f"not a normalised path: {path}")
    return parts


def open_dir(root: Path, path: Path, *, create: bool = False) -> int:
    """A descriptor of the directory ``path`` (``root`` itself or below it), each component
    below ``root`` opened without following a symlink and (with ``create``) made when missing.

    The caller owns the descriptor and must close it. Raises ``Refused(SYMLINK)`` for a
    symlinked component, ``ValueError`` when ``path`` is not under ``root``, ``OSError``
    otherwise (``FileNotFoundError`` for a missing component without ``create``)."""
    parts = _parts(root, path)
    return walk_dirs(os.open(root, _ROOT_FLAGS), parts, path, create=create, mode=DIR_MODE)


def is_regular_file(root: Path, path: Path) -> bool:
    """Whether ``path`` (below ``root``) is a regular file reached without following any
    symlink: a link planted at ``path`` or at a directory above it is not one."""
    try:
        fd = open_dir(root, path.parent)
    except (Refused, OSError, ValueError):
        return False
    try:
        st = os.stat(path.name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return False
    finally:
        os.close(fd)
    return stat.S_ISREG(st.st_mode)


def make_dirs(root: Path, path: Path) -> None:
    """``path.mkdir(parents=True, exist_ok=True)`` below ``root`` without following a
    symlink (``open_dir`` with ``create``; same errors)."""
    os.close(open_dir(root, path, create=True))


def move(root: Path, src: Path, dst: Path) -> None:
    """``os.replace(src, dst)``, both below ``root``, creating ``dst``'s missing parents, with
    no symlink followed: ``Refused(SYMLINK)`` when a component of either parent below
    ``root``, or ``src`` itself, is a symlink. A symlink at ``dst`` is replaced, not
    followed. Other failures raise ``OSError`` (``FileNotFoundError`` for a missing source,
    nothing created then)."""
    src_dir = open_dir(root, src.parent)
    try:
        st = os.stat(src.name, dir_fd=src_dir, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise Refused(src, SYMLINK)
        dst_dir = open_dir(root, dst.parent, create=True)
        try:
            os.replace(src.name, dst.name, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
        finally:
            os.close(dst_dir)
    finally:
        os.close(src_dir)


def _is_symlink(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False
