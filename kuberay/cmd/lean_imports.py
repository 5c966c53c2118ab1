"""Import the operator's third-party libraries without the parts it never uses.

Imported first by :mod:`kuberay.cmd.operator` (before anything imports structlog or aiohttp);
an idle operator's memory is mostly the code it loaded, and each of these costs about
1-3 MiB of resident memory for nothing:

* structlog's console renderer imports rich (with pygments) and colorama when they are
  installed (a development environment; the operator image has neither). The operator
  formats exceptions itself (``format_exc_info``) and renders without colours, so structlog
  is imported as if they were not installed: its output is the same.
* aiohttp builds two default TLS contexts at import, each loading the system CA bundle
  (about 140 certificates); the operator's own connections use a context with only the
  cluster's CA. The verified default is made a :class:`DeferredCAContext` (it loads the
  bundle on its first connection) and the unverified one, which verifies nothing, gets none.
* frozenlist's compiled extension (only aiohttp's signal lists use it, a few items each) is
  replaced by its pure-Python version (``FROZENLIST_NO_EXTENSIONS``, for this import only).

Each step is skipped when its library is already imported (a test process, a library user).
"""

from __future__ import annotations

import contextlib
import os
import ssl
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["DeferredCAContext", "import_aiohttp", "import_structlog"]

#: What structlog's dev module imports if installed, and the operator does not use.
STRUCTLOG_OPTIONAL = ("rich", "colorama", "better_exceptions")


class DeferredCAContext(ssl.SSLContext):
    """A context whose system CA certificates (``load_default_certs``) are loaded when it
    first wraps a connection rather than when it is made."""

    _ca_purpose: ssl.Purpose | None = None

    def defer_default_certs(self, purpose: ssl.Purpose = ssl.Purpose.SERVER_AUTH) -> None:
        """Load the system CA certificates for ``purpose`` before the first connection."""
        self._ca_purpose = purpose

    def _load_ca(self) -> None:
        purpose, self._ca_purpose = self._ca_purpose, None
        if purpose is not None:
            ssl.SSLContext.load_default_certs(self, purpose)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        """As :meth:`ssl.SSLContext.wrap_bio`, after loading the deferred CA certificates."""
        self._load_ca()
        return super().wrap_bio(*args, **kwargs)

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        """As :meth:`ssl.SSLContext.wrap_socket`, after loading the deferred CA certificates."""
        self._load_ca()
        return super().wrap_socket(*args, **kwargs)


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


@contextlib.contextmanager
def _deferred_default_contexts() -> Iterator[None]:
    """Contexts made inside load their system CAs at their first connection; one that
    verifies nothing (``CERT_NONE``) loads none."""
    load_default_certs = ssl.SSLContext.load_default_certs
    set_default_verify_paths = ssl.SSLContext.set_default_verify_paths

    def deferred_load(self: ssl.SSLContext, purpose: ssl.Purpose = ssl.Purpose.SERVER_AUTH) -> None:
        if type(self) is ssl.SSLContext:
            self.__class__ = DeferredCAContext
        if isinstance(self, DeferredCAContext):
            self.defer_default_certs(purpose)
        else:
            load_default_certs(self, purpose)

    def paths_if_verifying(self: ssl.SSLContext) -> None:
        if self.verify_mode != ssl.CERT_NONE:
            set_default_verify_paths(self)

    ssl.SSLContext.load_default_certs = deferred_load  # type: ignore[method-assign]
    ssl.SSLContext.set_default_verify_paths = paths_if_verifying  # type: ignore[method-assign]
    try:
        yield
    finally:
        ssl.SSLContext.load_default_certs = load_default_certs  # type: ignore[method-assign]
        ssl.SSLContext.set_default_verify_paths = set_default_verify_paths  # type: ignore[method-assign]


def import_aiohttp() -> None:
    """Import aiohttp with its default TLS contexts deferred and pure-Python frozenlist."""
    if "aiohttp" in sys.modules:
        return
    set_env = "frozenlist" not in sys.modules and "FROZENLIST_NO_EXTENSIONS" not in os.environ
    if set_env:
        os.environ["FROZENLIST_NO_EXTENSIONS"] = "1"
    try:
        with _deferred_default_contexts():
            import aiohttp  # noqa: F401
    finally:
        if set_env:
            os.environ.pop("FROZENLIST_NO_EXTENSIONS", None)


import_structlog()
import_aiohttp()
