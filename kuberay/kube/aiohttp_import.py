"""Import aiohttp without what an operator never uses, when it is first needed.

The operator never loads aiohttp (its apiserver and dashboard clients are
:mod:`kuberay.http`); ``kubectl ray``'s first log stream or port-forward loads it
through :func:`import_aiohttp`, which leaves out two costs of its import:

* aiohttp builds two default TLS contexts at import, each loading the system CA bundle
  (about 140 certificates, 0.8 MiB each); this operator's own connections use contexts
  of their own. The verified default is made a :class:`DeferredCAContext` (it loads the
  bundle on its first connection) and the unverified one, which verifies nothing, gets none.
* frozenlist's compiled extension (only aiohttp's signal lists use it, a few items each) is
  replaced by its pure-Python version (``FROZENLIST_NO_EXTENSIONS``, for this import only).

A process that imported aiohttp already (a test, a library user) gets it as it is.
"""

from __future__ import annotations

import contextlib
import os
import ssl
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

__all__ = ["DeferredCAContext", "import_aiohttp"]


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


def import_aiohttp() -> ModuleType:
    """aiohttp, imported (the first time) with its default TLS contexts deferred and
    pure-Python frozenlist."""
    loaded = sys.modules.get("aiohttp")
    if loaded is not None:
        return loaded
    set_env = "frozenlist" not in sys.modules and "FROZENLIST_NO_EXTENSIONS" not in os.environ
    if set_env:
        os.environ["FROZENLIST_NO_EXTENSIONS"] = "1"
    try:
        with _deferred_default_contexts():
            import aiohttp  # noqa: F401
    finally:
        if set_env:
            os.environ.pop("FROZENLIST_NO_EXTENSIONS", None)
    return sys.modules["aiohttp"]
