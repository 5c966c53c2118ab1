"""``TaskTable``: a session's tasks kept encoded read back as the dicts they were built from."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kuberay.historyserver.server.task_table import INDEX_COLUMNS, TaskTable


def task(task_id: str, attempt: int, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = dict.fromkeys(INDEX_COLUMNS)
    base.update(task_id=task_id, attempt_number=attempt, type="NORMAL_TASK", state="FINISHED")
    base.update(events=[{"state": "FINISHED", "created_ms": 5}], profiling_data={"x": 1.5})
    base.update(extra)
    return base


TASKS = [task("aa", 0), task("aa", 1, name="again"), task("bb", 0, type="DRIVER_TASK")]


def test_reads_back_every_task_and_column() -> None:
    table = TaskTable(TASKS)
    assert len(table) == 3 and list(table) == TASKS and table == TASKS
    assert table[-1] == TASKS[-1] and table[1:] == TASKS[1:]
    with pytest.raises(IndexError):
        table[3]
    assert table.brief(1) == {c: TASKS[1][c] for c in INDEX_COLUMNS}
    assert table.column(1, "name") == "again" and table.column(0, "profiling_data") == {"x": 1.5}
    assert table.is_driver(2) and not table.is_driver(0)
    assert table.find("aa", 1) == TASKS[1] and table.find("aa", 2) is None
    assert table.find("cc", 0) is None


def test_decoded_tasks_are_the_callers_own() -> None:
    table = TaskTable(TASKS)
    table[0]["events"].clear()
    assert table[0]["events"] == [{"state": "FINISHED", "created_ms": 5}]


def test_rows_json_is_a_json_array_of_the_chosen_tasks() -> None:
    table = TaskTable(TASKS)
    for positions in ([], [0], [0, 1, 2], [0, 2], [1, 2]):
        joined = b"".join(table.rows_json(positions))
        assert orjson.loads(joined) == [TASKS[i] for i in positions]
