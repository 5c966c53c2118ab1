"""Package attributes imported on first use (PEP 562), so importing one submodule of a
package does not import all of its siblings.

A package lists what it re-exports as ``{submodule: (name, ...)}`` and binds
:func:`lazy_exports`' two functions as its module ``__getattr__`` and ``__dir__``; its
``if TYPE_CHECKING:`` block keeps the plain imports, so type checkers see every name with its
type. An attribute is imported from its submodule the first time it is read, then cached in
the package's namespace.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` re-exporting ``exports`` lazily."""
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
