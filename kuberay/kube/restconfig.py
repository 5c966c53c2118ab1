"""A resolved connection: where the apiserver is, how to trust it, who to be, through which
proxy (client-go's ``rest.Config``). :mod:`kuberay.kube.kubeconfig` makes one from a
kubeconfig or a pod's service account; :class:`~kuberay.kube.Client` reads it.

Contracts:

* Inline certificates and keys (``*-data``, an exec plugin's ``clientKeyData``) stay in
  memory: :meth:`RestConfig.ssl_context` hands them to OpenSSL through an anonymous
  in-memory file (``memfd_create``, read via ``/proc/self/fd``; closed once loaded), or,
  where there is none, a private (0600) temporary file deleted as soon as
  ``load_cert_chain`` returns. No file holding a key outlives building the context, so
  nothing is left behind however the process ends.
* :meth:`RestConfig.authorization` is the ``Authorization`` header value of the user:
  ``Bearer <token>`` (token, token file or exec plugin) or ``Basic <base64>`` (username
  and password, as client-go sends them), or None for an anonymous or certificate-only
  user. A kubeconfig user with both is refused when the config is resolved.
"""

from __future__ import annotations

import base64
import contextlib
import os
import ssl
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

from kuberay.kube.exec_credentials import Credentials


class RestConfig:
    """Connection settings (see the module doc). ``ssl_ca_cert``/``cert_file``/``key_file``
    are paths; ``ca_data``/``cert_data``/``key_data`` PEM bytes, used instead of the path
    when given. ``token`` (a string) is shorthand for ``Credentials(static=token)``;
    ``namespace`` and ``context`` are what the kubeconfig selected."""

    def __init__(
        self,
        host: str,
        *,
        ssl_ca_cert: str | None = None,
        ca_data: bytes | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        cert_data: bytes | None = None,
        key_data: bytes | None = None,
        verify_ssl: bool = True,
        tls_server_name: str | None = None,
        proxy: str | None = None,
        extra_headers: Sequence[tuple[str, str]] = (),
        credentials: Credentials | None = None,
        token: str | None = None,
        basic_auth: tuple[str, str] | None = None,
        namespace: str = "default",
        context: str = "",
        request_timeout: float | None = None,
    ) -> None:
        self.host = host.rstrip("/")
        self.ssl_ca_cert = ssl_ca_cert
        self.ca_data = ca_data
        self.cert_file = cert_file
        self.key_file = key_file
        self.cert_data = cert_data
        self.key_data = key_data
        self.verify_ssl = verify_ssl
        self.tls_server_name = tls_server_name
        self.proxy = proxy
        self.extra_headers = list(extra_headers)
        self.credentials = credentials or Credentials(static=token)
        self.basic_auth = basic_auth
        self.namespace = namespace
        self.context = context
        #: Seconds per request the user asked for (client-go ``rest.Config.Timeout``).
        self.request_timeout = request_timeout

    # ----- authentication ---------------------------------------------------------------
    async def prepare(self) -> None:
        """Obtain credentials needed before the first connection (run an exec plugin that
        may return a client certificate). CredentialError when the plugin fails."""
        await self.credentials.prepare()

    async def authorization(self) -> str | None:
        """The ``Authorization`` header value (see the module doc), or None."""
        token = await self.credentials.token()
        if token:
            return f"Bearer {token}"
        if self.basic_auth is not None:
            raw = f"{self.basic_auth[0]}:{self.basic_auth[1]}".encode()
            return "Basic " + base64.b64encode(raw).decode()
        return None

    def bearer_token(self) -> str | None:
        """The static or file token, synchronously (None for an exec plugin's)."""
        return self.credentials.stored_token()

    async def auth_settings(self) -> dict[str, dict[str, str]]:
        """kubernetes-asyncio's shape: ``{"BearerToken": {"value": "Bearer ..."}}`` (or
        ``"BasicAuth"`` for a basic-auth user), for callers that forward credentials."""
        value = await self.authorization()
        if not value:
            return {}
        key = "BearerToken" if value.startswith("Bearer ") else "BasicAuth"
        return {key: {"in": "header", "key": "authorization", "value": value}}

    def unauthorized(self) -> None:
        """The apiserver answered 401: a plugin's credential is run for again next time."""
        self.credentials.invalidate()

    @property
    def tls_generation(self) -> int:
        """Changes when the client certificate changes (an exec plugin's rotation)."""
        return self.credentials.cert_generation

    # ----- TLS ----------------------------------------------------------------------------
    def ssl_context(self) -> ssl.SSLContext:
        """A client TLS context: the cluster's CA (else the system's), the client
        certificate (the exec plugin's, else the config's), no verification when
        ``verify_ssl`` is False. Leaves no file behind (module doc)."""
        ctx = ssl.create_default_context(
            cafile=self.ssl_ca_cert if self.ca_data is None else None,
            cadata=self.ca_data.decode() if self.ca_data is not None else None,
        )
        pair = self.credentials.client_certificate()
        if pair is not None:
            load_cert_chain(ctx, *pair)
        elif self.cert_data is not None or self.key_data is not None:
            cert = self.cert_data if self.cert_data is not None else _read(self.cert_file)
            key = self.key_data if self.key_data is not None else _read(self.key_file)
            load_cert_chain(ctx, cert, key)
        elif self.cert_file:
            ctx.load_cert_chain(self.cert_file, keyfile=self.key_file)
        if not self.verify_ssl:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        return ctx


def ssl_context_of(configuration: Any) -> ssl.SSLContext:
    """The TLS context of a RestConfig, or of an object with kubernetes-asyncio
    ``Configuration``'s attributes (CA, certificate and key files, ``verify_ssl``)."""
    if isinstance(configuration, RestConfig):
        return configuration.ssl_context()
    legacy = RestConfig(
        str(configuration.host),
        ssl_ca_cert=configuration.ssl_ca_cert,
        cert_file=configuration.cert_file,
        key_file=configuration.key_file,
        verify_ssl=configuration.verify_ssl,
    )
    return legacy.ssl_context()


async def authorization(configuration: Any) -> str | None:
    """The ``Authorization`` header value a configuration asks for: a RestConfig's
    ``authorization()``, else the bearer or basic value of kubernetes-asyncio's
    ``auth_settings()`` shape; None for none."""
    method = getattr(configuration, "authorization", None)
    if callable(method):
        value = await method()
        return str(value) if value else None
    auth = await configuration.auth_settings()
    for key in ("BearerToken", "BasicAuth"):
        entry = auth.get(key) if isinstance(auth, dict) else None
        if isinstance(entry, dict) and entry.get("value"):
            return str(entry["value"])
    return None


def _read(path: str | None) -> bytes:
    if not path:
        return b""
    with open(path, "rb") as f:
        return f.read()


def load_cert_chain(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """Load a PEM certificate chain and its key into ``ctx`` without leaving a file."""
    with _private_path(cert, "cert") as cert_path, _private_path(key, "key") as key_path:
        ctx.load_cert_chain(cert_path, keyfile=key_path if key else None)


@contextlib.contextmanager
def _private_path(data: bytes, what: str) -> Iterator[str]:
    """A path reading ``data`` for as long as the block runs: an anonymous memory file
    where the OS has them, else a 0600 temporary file unlinked on leaving."""
    memfd: Any = getattr(os, "memfd_create", None)
    if memfd is not None and os.path.isdir("/proc/self/fd"):
        fd = memfd(f"kuberay-client-{what}", getattr(os, "MFD_CLOEXEC", 0))
        try:
            _write_all(fd, data)
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
        return
    fd, name = tempfile.mkstemp(prefix=f"kuberay-client-{what}-")
    try:
        _write_all(fd, data)
        os.close(fd)
        fd = -1
        yield name
    finally:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


__all__ = ["RestConfig", "authorization", "load_cert_chain", "ssl_context_of"]
