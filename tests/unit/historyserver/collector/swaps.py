"""What a Ray job can do to a file between the collector's scan and its read (test helpers)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

SECRET = b"AWS_SECRET_ACCESS_KEY=do-not-upload-me\x00S3_BUCKET=b\x00"

Swap = Callable[[Path], None]


def secret_file(tmp_path: Path) -> Path:
    """A stand-in for ``/proc/self/environ``: the collector's own secrets."""
    path = tmp_path / "environ"
    path.write_bytes(SECRET)
    return path


def to_symlink(target: Path) -> Swap:
    """Replace the file with a symlink to ``target``."""

    def swap(path: Path) -> None:
        path.unlink()
        os.symlink(target, path)

    return swap


def to_fifo(path: Path) -> None:
    """Replace the file with a FIFO nobody writes to (an open for reading blocks)."""
    path.unlink()
    os.mkfifo(path)


def to_new_file(path: Path) -> None:
    """Replace the file with another regular file renamed over it (a new inode)."""
    tmp = path.with_name(path.name + ".swap")
    tmp.write_bytes(b"a different file\n")
    os.replace(tmp, path)


def parent_to_symlink(target_dir: Path) -> Swap:
    """Replace the file's parent directory with a symlink to ``target_dir`` (where a file of
    the same name holds the secret)."""

    def swap(path: Path) -> None:
        parent = path.parent
        parent.rename(parent.with_name(parent.name + ".moved"))
        os.symlink(target_dir, parent)

    return swap


@contextlib.contextmanager
def unblocking(*fifos: Path) -> Iterator[None]:
    """On the way out, open each FIFO for writing once, so a reader stuck in ``open`` (the
    code under test before the fix) gets EOF and the test process can exit."""
    try:
        yield
    finally:
        for fifo in fifos:
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue  # no reader waiting (or not a FIFO any more)
            os.close(fd)


def stored(objects: dict[str, bytes]) -> bytes:
    """Every stored byte, for a "the secret is nowhere" check."""
    return b"\n".join(objects.values())
