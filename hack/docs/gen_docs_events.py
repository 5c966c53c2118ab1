"""The Event reasons the controllers record, read from their source (``hack/docs/gen_docs.py``).

An Event is recorded by ``x.event(obj, TYPE, REASON, message, action)`` or a controller's
shorthand ``self._event(TYPE, REASON, message, action)``. A reason is found where it is
written out: a string literal, a module constant, a local assigned a literal, a dict of
literals (``_INVALID_REASON.get(source, "InvalidRayJobSpec")``) or an f-string
(``f"Created{kind}"``, shown as ``Created<kind>``). When the reason (or the type) at the call
is a parameter of the enclosing function, that function is followed to its callers, and so
on, until the literal is found.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

TYPES = {"NORMAL": "Normal", "WARNING": "Warning", "Normal": "Normal", "Warning": "Warning"}
#: ``x.event(obj, type, reason, ...)``: the type's position; ``_event(type, reason, ...)``.
DIRECT = {"event": 1, "_event": 0}


@dataclass(frozen=True)
class Found:
    """One Event reason: its type (``Normal``/``Warning``, ``?`` when decided at run time),
    the controller package and where the reason is written."""

    reason: str
    etype: str
    controller: str
    where: str


@dataclass(frozen=True)
class _Sink:
    """A function that passes its parameter ``reason`` (and ``etype``, when a parameter too)
    on to an Event."""

    name: str
    reason_index: int
    reason_param: str
    type_index: int | None
    type_param: str | None
    fixed_type: str | None


class _Module:
    def __init__(self, path: Path, root: Path) -> None:
        self.path = path
        self.rel = path.relative_to(root.parent).as_posix()
        self.tree = ast.parse(path.read_text())
        self.constants: dict[str, ast.expr] = {}
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    self.constants[target.id] = node.value
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.value is not None
            ):
                self.constants[node.target.id] = node.value
        self.parents: dict[ast.AST, ast.AST] = {}
        for parent in ast.walk(self.tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent

    def function_of(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        cur: ast.AST | None = node
        while cur is not None:
            cur = self.parents.get(cur)
            if isinstance(cur, ast.FunctionDef | ast.AsyncFunctionDef):
                return cur
        return None

    def controller(self) -> str:
        parts = self.path.parts
        return parts[parts.index("controllers") + 1] if "controllers" in parts else "?"


def _params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    names = [a.arg for a in func.args.posonlyargs + func.args.args]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def _strings(node: ast.expr, mod: _Module, func: ast.AST | None, depth: int = 0) -> list[str]:
    """The reason strings ``node`` can be, as far as they are written in this module."""
    if depth > 4:
        return []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value else []
    if isinstance(node, ast.JoinedStr):
        text = "".join(
            str(v.value) if isinstance(v, ast.Constant) else f"<{ast.unparse(v.value)}>"
            for v in node.values
            if isinstance(v, ast.Constant | ast.FormattedValue)
        )
        return [text]
    if isinstance(node, ast.Attribute):
        return [] if node.attr[:1].islower() else [f"<{ast.unparse(node)}>"]
    if isinstance(node, ast.Name):
        found: list[str] = []
        if func is not None:
            for sub in ast.walk(func):
                if isinstance(sub, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == node.id for t in sub.targets
                ):
                    found += _strings(sub.value, mod, func, depth + 1)
        if not found and node.id in mod.constants:
            found += _strings(mod.constants[node.id], mod, None, depth + 1)
        return found
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and isinstance(node.func.value, ast.Name)
    ):
        out = _strings(node.func.value, mod, func, depth + 1)
        for arg in node.args[1:]:
            out += _strings(arg, mod, func, depth + 1)
        return out
    if isinstance(node, ast.Dict):
        return [s for v in node.values for s in _strings(v, mod, func, depth + 1)]
    if isinstance(node, ast.IfExp):
        return _strings(node.body, mod, func, depth + 1) + _strings(
            node.orelse, mod, func, depth + 1
        )
    return []


def _type_of(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Name):
        return TYPES.get(node.id)
    if isinstance(node, ast.Attribute):
        return TYPES.get(node.attr)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return TYPES.get(node.value)
    return None


def _arg(call: ast.Call, index: int, param: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value
    return call.args[index] if index < len(call.args) else None


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    if isinstance(call.func, ast.Name):
        return call.func.id
    return None


def scan(root: Path) -> list[Found]:
    """Every Event reason recorded under ``root`` (``kuberay/controllers``), sorted."""
    modules = [_Module(p, root) for p in sorted(root.rglob("*.py"))]
    sinks = [_Sink(name, skip + 1, "reason", skip, "etype", None) for name, skip in DIRECT.items()]
    known = {(s.name, s.reason_index) for s in sinks}
    found: set[Found] = set()
    i = 0
    while i < len(sinks):
        sink = sinks[i]
        i += 1
        for mod in modules:
            for call in ast.walk(mod.tree):
                if not isinstance(call, ast.Call) or _called_name(call) != sink.name:
                    continue
                func = mod.function_of(call)
                if func is not None and func.name in DIRECT and sink.name in DIRECT:
                    continue  # a controller's own event() wrapper: its callers are scanned
                reason = _arg(call, sink.reason_index, sink.reason_param)
                if reason is None:
                    continue
                etype_node: ast.expr | None = None
                fixed: str | None = sink.fixed_type
                if fixed is None and sink.type_index is not None:
                    etype_node = _arg(call, sink.type_index, sink.type_param or "")
                    fixed = _type_of(etype_node)
                params = _params(func) if func is not None else []
                if isinstance(reason, ast.Name) and reason.id in params and func is not None:
                    # passed in: follow the enclosing function to its callers
                    type_param = (
                        etype_node.id
                        if isinstance(etype_node, ast.Name) and etype_node.id in params
                        else None
                    )
                    key = (func.name, params.index(reason.id))
                    if key not in known:
                        known.add(key)
                        sinks.append(
                            _Sink(
                                func.name,
                                params.index(reason.id),
                                reason.id,
                                params.index(type_param) if type_param else None,
                                type_param,
                                fixed,
                            )
                        )
                    continue
                where = f"{mod.rel}:{call.lineno}"
                for text in _strings(reason, mod, func):
                    found.add(Found(text, fixed or "?", mod.controller(), where))
    return sorted(found, key=lambda f: (f.controller, f.reason, f.etype, f.where))
