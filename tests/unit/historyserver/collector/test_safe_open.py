"""``open_regular``: the one rule for reading under a directory a Ray job can write."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from kuberay.historyserver.collector.safe_open import FileId, Refused, SafeFile, open_regular


def refused(path: Path, expect: FileId | None = None) -> str:
    with pytest.raises(Refused) as info:
        fd, _ = open_regular(path, expect)
        os.close(fd)  # pragma: no cover - only when the rule is broken
    return info.value.reason


def test_a_regular_file_opens_and_reads_to_its_size(tmp_path: Path) -> None:
    path = tmp_path / "d" / "f.log"
    path.parent.mkdir()
    path.write_bytes(b"hello\n")
    fd, st = open_regular(path, FileId.of(os.lstat(path)))
    os.close(fd)
    assert st.st_size == 6


async def test_reads_stop_at_the_size_seen_at_open(tmp_path: Path) -> None:
    path = tmp_path / "f.log"
    path.write_bytes(b"one\n")
    with await SafeFile.open(path) as f:
        with open(path, "ab") as w:
            w.write(b"two\n")
        assert b"".join([c async for c in f.chunks()]) == b"one\n"


def test_links_fifos_and_replacements_are_refused(tmp_path: Path) -> None:
    target = tmp_path / "secret"
    target.write_bytes(b"s")
    (tmp_path / "d").mkdir()
    os.symlink(target, tmp_path / "d" / "link")
    assert refused(tmp_path / "d" / "link") == "symlink"
    os.symlink(tmp_path / "d", tmp_path / "dirlink")
    (tmp_path / "d" / "f").write_bytes(b"f")
    assert refused(tmp_path / "dirlink" / "f") == "symlink"  # a symlinked parent
    os.mkfifo(tmp_path / "d" / "fifo")
    assert refused(tmp_path / "d" / "fifo") == "not a regular file"  # and no block
    assert refused(tmp_path / "d") == "not a regular file"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "d" / "sock"))
        assert refused(tmp_path / "d" / "sock") == "not a regular file"
    scanned = FileId.of(os.lstat(tmp_path / "d" / "f"))
    (tmp_path / "d" / "g").write_bytes(b"g")
    os.replace(tmp_path / "d" / "g", tmp_path / "d" / "f")
    assert refused(tmp_path / "d" / "f", scanned) == "replaced since scan"


def test_a_missing_file_is_an_os_error_and_relative_paths_a_bug(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "nope")
    with pytest.raises(ValueError):
        open_regular(Path("relative.log"))
