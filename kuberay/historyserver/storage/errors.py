"""Errors every backend raises, in place of its client library's own types."""

from __future__ import annotations


class StorageError(Exception):
    """An object-store call failed (network, permission, server error). ``key`` names the
    object or prefix involved, when there is one."""

    def __init__(self, message: str, *, key: str = "") -> None:
        super().__init__(message)
        self.key = key


class NotFound(StorageError):
    """The object (or bucket/container) does not exist. Raised by ``get`` and ``open``;
    ``delete`` of a missing key is not an error."""
