"""Import the operator's third-party libraries without the parts it never uses.

Imported first by :mod:`kuberay.cmd.operator` (before anything imports structlog); an idle
operator's memory is mostly the code it loaded.

* structlog's console renderer imports rich (with pygments) and colorama when they are
  installed (a development environment; the operator image has neither). The operator
  formats exceptions itself (``format_exc_info``) and renders without colours, so structlog
  is imported as if they were not installed: its output is the same.
* prometheus-client's package imports its own HTTP servers and push-gateway client
  (``http.server``, ``wsgiref.simple_server``, ``urllib.request``, which pull in
  ``http.client`` and ``email``: about 2 MiB). The operator serves ``/metrics`` itself
  (:mod:`kuberay.reconcile.httpserver`) and pushes nowhere, so prometheus-client is imported
  with placeholders for those three modules (removed again right after: a later
  ``import http.server`` gets the real one). In the operator process its
  ``start_http_server``, ``start_wsgi_server`` and gateway functions raise
  :class:`NotLoaded`; metrics, registries and ``generate_latest`` are unchanged.

aiohttp is not imported by the operator at all: the apiserver and Ray dashboard clients
speak HTTP/1.1 through :mod:`kuberay.http` (``kubectl ray`` loads aiohttp, through
:func:`kuberay.kube.aiohttp_import.import_aiohttp`, for its websockets and log streams).

Each step is skipped when its library is already imported (a test process, a library user).
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator
from typing import Any, NoReturn

__all__ = ["NotLoaded", "import_prometheus_client", "import_structlog"]

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


class NotLoaded(RuntimeError):
    """A part of a library this process imported without (see the module doc)."""


def _not_loaded(what: str) -> Any:
    def refuse(*_args: object, **_kwargs: object) -> NoReturn:
        raise NotLoaded(
            f"{what} is not loaded in kuberay-operator (it serves /metrics itself: "
            "kuberay.reconcile.httpserver)"
        )

    return refuse


def _placeholder_class(module: str, name: str) -> type:
    return type(name, (), {"__init__": _not_loaded(f"{module}.{name}"), "__module__": module})


#: The modules prometheus_client's exposition imports only for its servers and gateway
#: client, with the names it takes from them.
PROMETHEUS_SERVER_MODULES = {
    "http.server": ("BaseHTTPRequestHandler",),
    "wsgiref.simple_server": ("make_server", "WSGIRequestHandler", "WSGIServer"),
    "urllib.request": (
        "BaseHandler",
        "build_opener",
        "HTTPHandler",
        "HTTPRedirectHandler",
        "HTTPSHandler",
        "Request",
    ),
}


@contextlib.contextmanager
def _placeholders(modules: dict[str, tuple[str, ...]]) -> Iterator[None]:
    """Inside, ``import`` of each module not yet imported finds a placeholder whose names
    are classes and functions that raise :class:`NotLoaded` when used."""
    placed: dict[str, types.ModuleType] = {}
    for name, attrs in modules.items():
        if name in sys.modules:
            continue
        module = placed[name] = types.ModuleType(name, "placeholder (kuberay.cmd.lean_imports)")
        for attr in attrs:
            if attr[0].isupper():
                setattr(module, attr, _placeholder_class(name, attr))
            else:
                setattr(module, attr, _not_loaded(f"{name}.{attr}"))
        sys.modules[name] = module
    try:
        yield
    finally:
        for name, module in placed.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]


def import_prometheus_client() -> None:
    """Import prometheus_client without its HTTP servers and push-gateway client."""
    if "prometheus_client" in sys.modules:
        return
    with _placeholders(PROMETHEUS_SERVER_MODULES):
        import prometheus_client
    for name in (
        "start_http_server",
        "start_wsgi_server",
        "make_wsgi_app",
        "push_to_gateway",
        "pushadd_to_gateway",
        "delete_from_gateway",
    ):
        setattr(prometheus_client, name, _not_loaded(f"prometheus_client.{name}"))


import_structlog()
import_prometheus_client()
