"""Encoded answers kept for reuse: an answer that took decoding every task of a session
(``/api/v0/tasks`` filtered on a column ``TaskTable`` does not index) is kept, since a
decoded session never changes and so neither does the answer. Answers spliced from the
tasks' stored encodings (the usual ones, the 10,000-task detail list among them) are cheap
to make again and are not kept.

``AnswerCache`` is an LRU of bytes bounded by ``max_bytes`` (64 MiB: a few big answers; a
single answer over the budget is not kept). Keys name the session *and* its fingerprint (a
session reloaded with new objects gets new keys) and the request's path and query.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

DEFAULT_MAX_BYTES = 64 << 20


class AnswerCache:
    """Least recently used encoded answers, at most ``max_bytes`` in all."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, bytes] = OrderedDict()
        self._bytes = 0
        self.hits = 0

    def get(self, key: Hashable) -> bytes | None:
        """The answer kept for ``key``, if any."""
        body = self._entries.get(key)
        if body is not None:
            self._entries.move_to_end(key)
            self.hits += 1
        return body

    def put(self, key: Hashable, body: bytes) -> None:
        """Keep ``body`` for ``key``, evicting the least recently used to fit."""
        if len(body) > self.max_bytes:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= len(old)
        self._entries[key] = body
        self._bytes += len(body)
        while self._bytes > self.max_bytes:
            _, evicted = self._entries.popitem(last=False)
            self._bytes -= len(evicted)
