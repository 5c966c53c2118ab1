"""The dashboard's files, read once into memory and served by exact name.

Only regular files directly in the static directory whose names are plain
(:data:`ASSET_NAME`) and whose suffix has a known content type (:data:`CONTENT_TYPES`) are
loaded; symlinks, directories and anything else are skipped. A request names an entry of
that table or gets a 404, so no request path ever becomes a file system path: ``..``,
``%2e%2e`` or a symlink cannot reach a file outside (the guard refuses dot segments with 400
before this is asked anyway).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

import attrs

#: The package's static directory.
STATIC_DIR = Path(__file__).resolve().parent / "static"
#: A name that may be served: letters, digits, ``-``, ``_``, one dot before the suffix.
ASSET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*\.[a-z0-9]+")
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
#: Largest file loaded (the dashboard's are a few KiB each).
MAX_ASSET = 1 << 20


@attrs.frozen
class Asset:
    """One file: its bytes, content type and entity tag (a strong ETag of the bytes)."""

    body: bytes
    content_type: str
    etag: str


def _read_regular_file(path: Path) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (not a symlink) of at most
    :data:`MAX_ASSET` bytes, else None; checked on the opened file, so no swap between the
    check and the read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:  # ELOOP: a symlink; gone; unreadable
        return None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ASSET:
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as file:
        body = file.read(MAX_ASSET + 1)
    return body if len(body) <= MAX_ASSET else None


def load_assets(directory: Path = STATIC_DIR) -> dict[str, Asset]:
    """Every servable file of ``directory`` by name (see the module doc); empty when the
    directory is missing."""
    assets: dict[str, Asset] = {}
    try:
        entries = sorted(directory.iterdir())
    except FileNotFoundError:
        return assets
    for path in entries:
        content_type = CONTENT_TYPES.get(path.suffix)
        if content_type is None or not ASSET_NAME.fullmatch(path.name):
            continue
        body = _read_regular_file(path)
        if body is None:
            continue
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        assets[path.name] = Asset(body, content_type, etag)
    return assets
