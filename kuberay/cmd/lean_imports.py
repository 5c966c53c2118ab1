"""Import the operator's third-party libraries without the parts it never uses.

Imported first by :mod:`kuberay.cmd.operator` (before anything imports structlog); an idle
operator's memory is mostly the code it loaded.

* structlog's console renderer imports rich (with pygments) and colorama when they are
  installed (a development environment; the operator image has neither). The operator
  formats exceptions itself (``format_exc_info``) and renders without colours, so structlog
  is imported as if they were not installed: its output is the same.

aiohttp is not imported at start-up at all: the apiserver client is
:mod:`kuberay.kube.http1`, and :func:`kuberay.kube.aiohttp_import.import_aiohttp` loads
aiohttp (without its own waste) for the first dashboard a controller dials.

Skipped when structlog is already imported (a test process, a library user).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

__all__ = ["import_structlog"]

#: What structlog's dev module imports if installed, and the operator does not use.
STRUCTLOG_OPTIONAL = ("rich", "colorama", "better_exceptions")


@contextlib.contextmanager
def _hidden(names: tuple[str, ...]) -> Iterator[None]:
    """``import name`` fails inside (as if not installed) for modules not yet imported."""
    hidden = [n for n in names if n not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in hidden:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]


def import_structlog() -> None:
    """Import structlog as if rich, colorama and better_exceptions were not installed."""
    if "structlog" in sys.modules:
        return
    with _hidden(STRUCTLOG_OPTIONAL):
        import structlog  # noqa: F401


import_structlog()
