"""One home for each rule (``make lint`` runs this file): Go's text formats are parsed in
``kuberay/gocompat`` only, the history server's wire names live in ``historyserver/layout.py``,
and ``ray.io/...`` keys and the Ray auth header in ``kuberay/api/v1/constants.py``.

Each rule reads the source (AST, docstrings excluded) for what a second definition looks like:

* a Go duration parser: a regex alternation of duration units (``ms|s|m|h``) or a table keyed
  by them;
* ``strconv.ParseBool``: a literal collection of Go's spellings (``"TRUE"``, or ``"t"`` with
  ``"T"``);
* ``strconv.Atoi``: a signed-integer regex (``[+-]?[0-9]+``);
* an RFC 3339 reader or writer: ``fromisoformat``, a Go time layout as a ``strftime`` format
  (``%Y-%m-%dT%H:%M:%S``), or a regex of an RFC 3339 time;
* the history server's wire: a dashboard endpoint both of its programs use, or a ``*camel*``
  function, inside ``kuberay/historyserver`` but outside ``layout.py``;
* ``x-ray-authorization`` or a ``ray.io/`` key outside ``api/v1/constants.py`` (the operator's,
  the plugin's and the API server's home) and ``historyserver/layout.py`` (the history server's:
  its images ship without ``kuberay.api``).

A file still holding one on purpose is in :data:`ALLOWED`, with its reason; an entry that is
no longer needed fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

GOCOMPAT = "kuberay/gocompat/"
LAYOUT = "kuberay/historyserver/layout.py"
CONSTANTS = "kuberay/api/v1/constants.py"

#: (file, rule) -> why the file keeps its own copy for now.
ALLOWED: dict[tuple[str, str], str] = {
    ("kuberay/api/v1/rules.py", "parse-bool"): (
        "KubeRay reads RAY_ENABLE_AUTOSCALER_V2 as exactly 1 or true, not with ParseBool: "
        "autoscaler_v2_env_enabled is that rule's one home"
    ),
    ("kuberay/historyserver/server/context.py", "parse-bool"): (
        "query parameters of the Ray dashboard paths the history server answers (detail=1...): "
        "true/1/yes and false/0/no, kept so the links that work today keep working"
    ),
    ("kuberay/historyserver/server/workers.py", "parse-bool"): (
        "a Ray state API filter on a boolean column (is_alive=true/1), Ray's comparison"
    ),
    ("kuberay/kubectl_ray/job.py", "parse-bool"): (
        "the --verify flag's value (as `ray job submit --verify`): a CA path, or false/0 to "
        "skip the check; not a Go bool"
    ),
}

_UNIT = r"(?:ns|us|µs|μs|ms|s|m|h)"
_UNIT_ALTERNATION = re.compile(rf"(?:^|[(|]){_UNIT}(?:\|{_UNIT})+(?:$|[)|])")
_SIGNED_INT_REGEX = re.compile(r"\^?\[\+-\]\?(?:\[0-9\]|\\d)\+\$?")
_RFC3339_REGEX = re.compile(r"\\d\{2\}\)?T\(?\\d\{2\}")
_GO_LAYOUTS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S")
_WIRE_ENDPOINTS = frozenset(
    {
        "/api/v0/cluster_metadata",
        "/timezone",
        "/api/serve/applications/",
        "/api/v0/placement_groups?detail=1&limit=10000",
        "/api/jobs/",
        "/api/data/datasets/",
    }
)


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _strings(node: ast.AST) -> list[str]:
    """The string elements of a literal collection (``frozenset({...})`` included)."""
    if (
        isinstance(node, ast.Call)
        and node.args
        and getattr(node.func, "id", "")
        in (
            "set",
            "frozenset",
            "tuple",
        )
    ):
        node = node.args[0]
    if isinstance(node, ast.Set | ast.Tuple | ast.List):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


def violations(path: str, source: str) -> Iterator[tuple[int, str, str]]:
    """``(line, rule, what)`` for each second home in the file at repo path ``path``."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    go_home = path.startswith(GOCOMPAT)
    history = path.startswith("kuberay/historyserver/") and path != LAYOUT
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docstrings:
                continue
            text = node.value
            if not go_home:
                if _UNIT_ALTERNATION.search(text):
                    yield line, "go-duration", text
                if _SIGNED_INT_REGEX.fullmatch(text):
                    yield line, "atoi", text
                if any(layout in text for layout in _GO_LAYOUTS) or _RFC3339_REGEX.search(text):
                    yield line, "rfc3339", text
            if path not in (CONSTANTS, LAYOUT):
                if text.lower() == "x-ray-authorization":
                    yield line, "auth-header", text
                if text.startswith("ray.io/"):
                    yield line, "ray.io-key", text
            if history and text in _WIRE_ENDPOINTS:
                yield line, "history-wire-path", text
        elif isinstance(node, ast.Attribute) and node.attr == "fromisoformat" and not go_home:
            yield line, "rfc3339", "fromisoformat"
        elif isinstance(node, ast.Dict) and not go_home:
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            if {"ms", "s", "m", "h"} <= keys or {"ns", "us"} <= keys:
                yield line, "go-duration", "a table of duration units"
        elif (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and history
            and "camel" in node.name
        ):
            yield line, "history-camel", node.name
        if not go_home and isinstance(node, ast.Set | ast.Tuple | ast.List | ast.Call):
            spellings = set(_strings(node))
            if (
                "TRUE" in spellings
                or {"t", "T"} <= spellings
                or {"true", "1"} <= spellings
                or {"false", "0"} <= spellings
            ):
                yield line, "parse-bool", ", ".join(sorted(spellings))


def _tree() -> Iterator[tuple[str, str]]:
    for file in sorted((ROOT / "kuberay").rglob("*.py")):
        yield file.relative_to(ROOT).as_posix(), file.read_text(encoding="utf-8")


def test_each_rule_has_one_home() -> None:
    found = [
        f"{path}:{line}: {rule}: {what!r}"
        for path, source in _tree()
        for line, rule, what in violations(path, source)
        if (path, rule) not in ALLOWED
    ]
    assert not found, "defined outside its home:\n" + "\n".join(found)


def test_every_allowed_copy_is_still_there() -> None:
    sources = dict(_tree())
    stale = [
        key
        for key in ALLOWED
        if not any(rule == key[1] for _, rule, _ in violations(key[0], sources.get(key[0], "")))
    ]
    assert not stale, f"no longer needed in ALLOWED: {stale}"


@pytest.mark.parametrize(
    ("path", "source", "rule"),
    [
        ("kuberay/x.py", 'U = re.compile(r"(\\d+)(ms|s|m|h)")', "go-duration"),
        ("kuberay/x.py", 'U = {"ns": 1, "us": 1e3, "ms": 1e6}', "go-duration"),
        ("kuberay/x.py", 'T = frozenset({"1", "t", "T", "TRUE", "true", "True"})', "parse-bool"),
        ("kuberay/x.py", 'on = text.lower() in ("true", "1", "yes")', "parse-bool"),
        ("kuberay/x.py", 'ok = re.fullmatch(r"[+-]?[0-9]+", text)', "atoi"),
        ("kuberay/x.py", "when = dt.datetime.fromisoformat(text)", "rfc3339"),
        ("kuberay/x.py", 'text = when.strftime("%Y-%m-%dT%H:%M:%SZ")', "rfc3339"),
        ("kuberay/x.py", 'R = r"^(\\d{4})-(\\d{2})-(\\d{2})T(\\d{2}):(\\d{2})"', "rfc3339"),
        ("kuberay/historyserver/server/x.py", 'JOBS = "/api/jobs/"', "history-wire-path"),
        ("kuberay/historyserver/server/x.py", "def camel(n: str) -> str: ...", "history-camel"),
        ("kuberay/controllers/x.py", 'H = "X-Ray-Authorization"', "auth-header"),
        ("kuberay/kubectl_ray/x.py", 'LABEL = "ray.io/cluster"', "ray.io-key"),
        ("kuberay/kubectl_ray/x.py", 'ok = v.startswith("ray.io/")', "ray.io-key"),
    ],
)
def test_a_second_home_is_found(path: str, source: str, rule: str) -> None:
    assert rule in {r for _, r, _ in violations(path, source)}


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("kuberay/gocompat/gotime.py", 'x = when.strftime("%Y-%m-%dT%H:%M:%SZ")'),
        (LAYOUT, 'JOBS_ENDPOINT = "/api/jobs/"'),
        (CONSTANTS, 'RAY_CLUSTER_LABEL_KEY = "ray.io/cluster"'),
        ("kuberay/controllers/dashboard/client.py", 'JOBS_PATH = "/api/jobs/"'),  # the operator's
        ("kuberay/x.py", 'ok = status in ("True", "False", "Unknown")'),  # condition statuses
        ("kuberay/x.py", 'name = datetime.strptime(s, "%Y-%m-%d_%H-%M-%S")'),  # not RFC 3339
        (
            "kuberay/x.py",
            'def f() -> None:\n    """Reads ray.io/cluster and x-ray-authorization."""',
        ),
    ],
)
def test_a_home_or_another_rule_is_no_violation(path: str, source: str) -> None:
    assert list(violations(path, source)) == []
