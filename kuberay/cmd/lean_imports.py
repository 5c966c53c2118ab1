"""The operator process's process-wide tweaks, made by one explicit call: :func:`slim_process`.

``kuberay-operator``'s ``main`` (:mod:`kuberay.cmd.operator`) calls it first, before anything
imports structlog or prometheus-client; nothing else calls it, and importing this module
changes nothing. An idle operator's memory is mostly the code it loaded and the buffers it
keeps:

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
  :class:`NotLoaded`; metrics, registries and ``generate_latest`` are unchanged. When a
  prometheus-client release imports something else from those modules (the import with
  placeholders fails), it is imported plainly instead and :func:`slim_process` reports it.
* asyncio gives every TLS connection a 256 KiB read buffer, and each watch is a connection of
  its own (HTTP/1.1): :func:`shrink_tls_read_buffers` caps it at :data:`TLS_READ_BUFFER`.

Each step is skipped when its library is already imported.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator, Mapping
from typing import Any, NoReturn

__all__ = [
    "PROMETHEUS_SERVER_MODULES",
    "TLS_READ_BUFFER",
    "NotLoaded",
    "import_prometheus_client",
    "import_structlog",
    "shrink_tls_read_buffers",
    "slim_process",
]

#: What structlog's dev module imports if installed, and the operator does not use.
STRUCTLOG_OPTIONAL = ("rich", "colorama", "better_exceptions")

#: Read buffer of each TLS connection. asyncio gives every one 256 KiB
#: (``asyncio.sslproto.SSLProtocol.max_size``), which a watch fills during its initial list
#: and keeps: megabytes over an idle operator's watches. Two TLS records' worth reads a large
#: list in a few more calls and keeps 32 KiB.
TLS_READ_BUFFER = 32 * 1024

#: The modules prometheus_client's exposition imports only for its servers and gateway
#: client, with the names it takes from them.
PROMETHEUS_SERVER_MODULES: Mapping[str, tuple[str, ...]] = {
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

#: prometheus_client's functions that need those modules: they raise :class:`NotLoaded`.
PROMETHEUS_SERVER_FUNCTIONS = (
    "start_http_server",
    "start_wsgi_server",
    "make_wsgi_app",
    "push_to_gateway",
    "pushadd_to_gateway",
    "delete_from_gateway",
)


def slim_process() -> list[str]:
    """Make the operator process's tweaks (module doc). Returns what went otherwise than
    planned, one line each, for the caller to log once logging is configured."""
    notes: list[str] = []
    import_structlog()
    fallback = import_prometheus_client()
    if fallback is not None:
        notes.append(fallback)
    shrink_tls_read_buffers()
    return notes


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


@contextlib.contextmanager
def _placeholders(modules: Mapping[str, tuple[str, ...]]) -> Iterator[None]:
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


def _forget(package: str) -> None:
    """Drop ``package`` and its submodules from ``sys.modules`` (a failed import's remains,
    which may hold placeholders)."""
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


def import_prometheus_client(modules: Mapping[str, tuple[str, ...]] | None = None) -> str | None:
    """Import prometheus_client with placeholders for ``modules`` (default
    :data:`PROMETHEUS_SERVER_MODULES`: its HTTP servers and push-gateway client); when that
    fails (a release importing other names from them), import it plainly. None, or the line
    saying why it was imported plainly."""
    if "prometheus_client" in sys.modules:
        return None
    try:
        with _placeholders(PROMETHEUS_SERVER_MODULES if modules is None else modules):
            import prometheus_client
    except Exception as exc:  # ImportError, or a placeholder used while importing
        _forget("prometheus_client")
        import prometheus_client

        return (
            "prometheus-client imported whole, its HTTP servers and push-gateway client "
            f"included (importing it without them failed: {exc})"
        )
    for name in PROMETHEUS_SERVER_FUNCTIONS:
        setattr(prometheus_client, name, _not_loaded(f"prometheus_client.{name}"))
    return None


def shrink_tls_read_buffers(size: int = TLS_READ_BUFFER) -> None:
    """Cap asyncio's per-connection TLS read buffer at ``size`` (process-wide, for
    connections opened from now on)."""
    from asyncio import sslproto

    if getattr(sslproto.SSLProtocol, "max_size", 0) > size:
        sslproto.SSLProtocol.max_size = size
