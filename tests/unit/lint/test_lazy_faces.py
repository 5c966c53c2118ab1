"""Every package that re-exports names lazily (:mod:`kuberay.lazy`) lists each name three
times: its ``if TYPE_CHECKING:`` imports (what type checkers see), its ``_EXPORTS`` table
(what ``__getattr__`` imports) and ``__all__`` (what it exports). This test is what keeps the
three one list: they must name the same (module, name) pairs, and each name must resolve to
the object its module defines."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

FACES = sorted(
    path
    for path in (ROOT / "kuberay").rglob("__init__.py")
    if "lazy_exports(" in path.read_text(encoding="utf-8")
)


def _package(path: Path) -> str:
    return ".".join(path.parent.relative_to(ROOT).parts)


def _type_checking_block(tree: ast.Module) -> list[ast.stmt]:
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            return node.body
    raise AssertionError("no `if TYPE_CHECKING:` block")


def _assigned(tree: ast.Module, target: str) -> ast.expr:
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == target for t in targets):
                return node.value
    raise AssertionError(f"no {target} = ...")


def _lists(path: Path) -> tuple[set[tuple[str, str]], set[tuple[str, str]], set[str], set[str]]:
    """(TYPE_CHECKING imports, _EXPORTS pairs, __all__, names the block only declares)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported: set[tuple[str, str]] = set()
    declared: set[str] = set()
    for stmt in _type_checking_block(tree):
        if isinstance(stmt, ast.ImportFrom) and stmt.module:
            imported |= {(stmt.module, alias.name) for alias in stmt.names}
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            declared.add(stmt.target.id)  # defined by the package's own __getattr__
    table = _assigned(tree, "_EXPORTS")
    assert isinstance(table, ast.Dict)
    exported: set[tuple[str, str]] = set()
    for key, value in zip(table.keys, table.values, strict=True):
        assert isinstance(key, ast.Constant) and isinstance(value, ast.Tuple), ast.unparse(value)
        for element in value.elts:
            assert isinstance(element, ast.Constant) and isinstance(element.value, str)
            exported.add((key.value, element.value))
    names = ast.literal_eval(_assigned(tree, "__all__"))
    assert len(names) == len(set(names)), "a name twice in __all__"
    return imported, exported, set(names), declared


def test_there_are_lazy_faces() -> None:
    assert len(FACES) >= 5  # the glob found them


@pytest.mark.parametrize("path", FACES, ids=_package)
def test_type_checking_imports_exports_table_and_all_agree(path: Path) -> None:
    imported, exported, names, declared = _lists(path)
    # Names imported outside the table (api.v1's eager constants) appear in both places.
    assert imported == exported
    assert names == {name for _, name in exported} | declared


@pytest.mark.parametrize("path", FACES, ids=_package)
def test_each_exported_name_resolves_to_its_modules_object(path: Path) -> None:
    _, exported, names, _ = _lists(path)
    package = importlib.import_module(_package(path))
    for module, name in sorted(exported):
        assert getattr(package, name) is getattr(importlib.import_module(module), name), name
    for name in names:
        assert getattr(package, name) is not None
    assert set(dir(package)) >= names
