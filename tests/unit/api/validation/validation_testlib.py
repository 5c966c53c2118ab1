"""What the validation tests share: mutations of a valid object, the rule ``Case`` (a
failing example with the error's path and message, and a passing near-miss) and
``check_case`` that asserts both."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kuberay.api.v1 import FieldError

Mutation = Callable[[dict[str, Any]], None]

Key = str | int


def _walk(obj: Any, path: tuple[Key, ...]) -> Any:
    for key in path:
        if isinstance(obj, dict) and isinstance(key, str):
            obj = obj.setdefault(key, {})
        else:
            obj = obj[key]
    return obj


def put(*path: Any) -> Mutation:
    """Mutation setting ``path[:-1]`` to ``path[-1]`` (intermediate dicts created)."""
    *keys, value = path

    def apply(obj: dict[str, Any]) -> None:
        _walk(obj, tuple(keys[:-1]))[keys[-1]] = copy.deepcopy(value)

    return apply


def drop(*path: Key) -> Mutation:
    def apply(obj: dict[str, Any]) -> None:
        del _walk(obj, path[:-1])[path[-1]]

    return apply


def all_of(*mutations: Mutation) -> Mutation:
    def apply(obj: dict[str, Any]) -> None:
        for mutation in mutations:
            mutation(obj)

    return apply


def noop(_: dict[str, Any]) -> None:
    return None


HEAD = ("spec", "headGroupSpec")
HEAD_C = (*HEAD, "template", "spec", "containers", 0)
W0 = ("spec", "workerGroupSpecs", 0)
W0_C = (*W0, "template", "spec", "containers", 0)
GATES_ALL = {
    "GCSFaultToleranceEmbeddedStorage": True,
    "RayClusterNetworkPolicy": True,
    "RayClusterMTLS": True,
    "RayClusterHistoryServer": True,
}
AUTOSCALING = put("spec", "enableInTreeAutoscaling", True)
V2 = all_of(AUTOSCALING, put("spec", "autoscalerOptions", {"version": "v2"}))

ROCKSDB = {"backend": "rocksdb"}


def env(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"name": n, "value": v} for n, v in pairs]


@dataclass
class Case:
    id: str
    bad: Mutation
    path: str
    message: str
    good: Mutation = noop
    gates: dict[str, bool] | None = None
    source: str = "spec"
    good_gates: dict[str, bool] | None = field(default=None)


def check_case(validate: Callable[..., list[FieldError]], base: dict[str, Any], case: Case) -> None:
    bad = copy.deepcopy(base)
    case.bad(bad)
    errors = validate(bad, gates=case.gates)
    matching = [
        e
        for e in errors
        if e.path == case.path and case.message in e.message and e.source == case.source
    ]
    assert matching, (
        f"expected {case.source} error at {case.path!r} containing {case.message!r}; got:\n"
        + "\n".join(f"  [{e.source}] {e}" for e in errors)
    )
    good = copy.deepcopy(base)
    case.good(good)
    good_errors = validate(
        good, gates=case.good_gates if case.good_gates is not None else case.gates
    )
    if case.good is noop and case.good_gates is None:
        return
    assert good_errors == [], "\n".join(str(e) for e in good_errors)
