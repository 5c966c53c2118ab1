"""A decoded session's tasks, kept compact: each task as its encoded JSON, plus an index.

A 10,000-task session is about 40 MiB as Python dicts (a dict per task, its transitions,
log info and profile events) but about 18 MB as the JSON ``/api/v0/tasks?detail=1`` answers.
So ``TaskTable`` keeps each ``TaskState`` dict (``tasks``) only as its orjson encoding, all
of a session's in one ``bytes`` with an array of offsets (one allocation, no per-task
objects to fragment the heap), from which the detail answer is spliced without re-encoding;
and, per task, a tuple of the non-detail columns (``INDEX_COLUMNS``: what the non-detail
answer, the usual filters and the func-name summary read). Anything else decodes the task
again: reading the table as a sequence gives a fresh dict per task, equal to the one it
was built from, that the caller may change freely.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any, overload

import orjson

#: The columns kept decoded per task, in ``/api/v0/tasks``' non-detail order (Ray's).
INDEX_COLUMNS = (
    "task_id",
    "attempt_number",
    "name",
    "state",
    "job_id",
    "actor_id",
    "type",
    "func_or_class_name",
    "parent_task_id",
    "node_id",
    "worker_id",
    "worker_pid",
    "error_type",
)
_POSITION = {name: i for i, name in enumerate(INDEX_COLUMNS)}
_TYPE = _POSITION["type"]
_ENCODE_OPTIONS = orjson.OPT_NON_STR_KEYS


class TaskTable(Sequence[dict[str, Any]]):
    """``TaskState`` dicts in the order given (a session's: by task ID, then attempt), each
    stored encoded. Indexing and iteration decode; ``row``/``rows_json`` give the encoding,
    ``brief``/``column`` the indexed columns without decoding."""

    __slots__ = ("_blob", "_ends", "_index", "nbytes")

    def __init__(self, tasks: Iterable[dict[str, Any]] = ()) -> None:
        rows: list[bytes] = []
        self._index: list[tuple[Any, ...]] = []
        for task in tasks:
            rows.append(orjson.dumps(task, option=_ENCODE_OPTIONS))
            self._index.append(tuple(task[c] for c in INDEX_COLUMNS))
        # rows separated by commas, so a run of consecutive tasks is one slice of JSON
        self._blob = b",".join(rows)
        self._ends = array("Q", accumulate(len(r) + 1 for r in rows))
        self.nbytes = len(self._blob)

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [orjson.loads(self.row(j)) for j in range(len(self))[i]]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("task index out of range")
        decoded: dict[str, Any] = orjson.loads(self.row(i))
        return decoded

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for i in range(len(self)):
            yield orjson.loads(self.row(i))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TaskTable):
            return self._blob == other._blob and self._ends == other._ends
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TaskTable({len(self)} tasks, {self.nbytes} bytes)"

    def row(self, i: int) -> bytes:
        """Task ``i`` as its JSON encoding."""
        ends = self._ends
        return self._blob[ends[i - 1] if i else 0 : ends[i] - 1]

    def rows_json(self, positions: Sequence[int]) -> list[bytes | memoryview]:
        """A JSON array of the tasks at ``positions`` (ascending), in pieces to join: each
        run of consecutive tasks is one view of the stored JSON, not copied."""
        ends, blob = self._ends, memoryview(self._blob)
        pieces: list[bytes | memoryview] = [b"["]
        k = 0
        while k < len(positions):
            first = last = positions[k]
            k += 1
            while k < len(positions) and positions[k] == last + 1:
                last = positions[k]
                k += 1
            if len(pieces) > 1:
                pieces.append(b",")
            pieces.append(blob[ends[first - 1] if first else 0 : ends[last] - 1])
        pieces.append(b"]")
        return pieces

    def brief(self, i: int) -> dict[str, Any]:
        """Task ``i``'s indexed columns (``INDEX_COLUMNS``) as a dict, in that order."""
        return dict(zip(INDEX_COLUMNS, self._index[i], strict=True))

    def is_driver(self, i: int) -> bool:
        """Whether task ``i`` is a ``DRIVER_TASK``."""
        return bool(self._index[i][_TYPE] == "DRIVER_TASK")

    def column(self, i: int, name: str) -> Any:
        """Column ``name`` of task ``i`` (``None`` when the task has no such column); read
        from the index when it is an indexed column, else decoded."""
        position = _POSITION.get(name)
        if position is not None:
            return self._index[i][position]
        return self[i].get(name)

    def find(self, task_id: str, attempt: int) -> dict[str, Any] | None:
        """The task with that ID and attempt (the table must be sorted by them, as a
        session's is), or ``None``."""
        index = self._index
        at = bisect_left(index, (task_id, attempt), key=lambda r: (r[0], r[1]))
        if at < len(index) and index[at][0] == task_id and index[at][1] == attempt:
            return self[at]
        return None
