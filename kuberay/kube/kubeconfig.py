"""Connection settings from a kubeconfig or a pod's service account, cheaply.

kubernetes-asyncio's loader imports its whole generated client (every model and
API class, much of an idle operator's memory) just to read a few fields. This
module reads the common cases itself and returns a :class:`RestConfig`, which has
the attributes :class:`~kuberay.kube.client.Client` reads from a kubernetes-asyncio
``Configuration`` (``host``, ``ssl_ca_cert``, ``cert_file``, ``key_file``,
``verify_ssl``, ``tls_server_name``, ``async auth_settings()``):

* in-cluster: ``KUBERNETES_SERVICE_HOST``/``_PORT``, the service account's CA and
  token; the token is re-read from its file at most once a minute, so a rotated
  (bound, expiring) token is picked up as client-go's does;
* a kubeconfig (``KUBECONFIG`` may list several files, merged as kubectl merges
  them: the first file to define a name wins): the current (or given) context's
  server, ``certificate-authority[-data]``, ``insecure-skip-tls-verify``,
  ``tls-server-name``, ``client-certificate[-data]``/``client-key[-data]``,
  ``token`` and ``tokenFile``. Relative paths are relative to the file that names
  them; ``*-data`` is written to private temporary files (removed at exit).

A user authenticated any other way (``exec`` plugins, ``auth-provider``) raises
:class:`Unsupported`; :meth:`Client.from_kubeconfig` then falls back to
kubernetes-asyncio's loader, which handles those.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kuberay.kube.objects import Object as Obj

SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
#: Seconds a token read from a file is used before the file is read again.
TOKEN_FILE_TTL = 60.0


class ConfigError(Exception):
    """The kubeconfig or service account is missing or malformed."""


class Unsupported(ConfigError):
    """The kubeconfig uses something this loader does not implement."""


class FileToken:
    """A bearer token read from ``path``, cached for ``ttl`` seconds."""

    def __init__(
        self, path: str, ttl: float = TOKEN_FILE_TTL, now: Callable[[], float] = time.monotonic
    ) -> None:
        self.path = path
        self.ttl = ttl
        self._now = now
        self._token = ""
        self._read_at: float | None = None

    def __call__(self) -> str:
        now = self._now()
        if self._read_at is None or now - self._read_at >= self.ttl:
            try:
                self._token = Path(self.path).read_text().strip()
            except OSError as exc:
                if self._read_at is None:
                    raise ConfigError(f"cannot read token file {self.path}: {exc}") from exc
                # Keep the last token while the file is being rotated.
            self._read_at = now
        return self._token


class RestConfig:
    """Where the apiserver is and how to authenticate (the module doc lists fields)."""

    def __init__(
        self,
        host: str,
        *,
        ssl_ca_cert: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        verify_ssl: bool = True,
        tls_server_name: str | None = None,
        token: str | Callable[[], str] | None = None,
    ) -> None:
        self.host = host
        self.ssl_ca_cert = ssl_ca_cert
        self.cert_file = cert_file
        self.key_file = key_file
        self.verify_ssl = verify_ssl
        self.tls_server_name = tls_server_name
        self._token = token

    def bearer_token(self) -> str | None:
        """The current bearer token (re-read from its file when due), or None."""
        if self._token is None:
            return None
        return self._token if isinstance(self._token, str) else self._token()

    async def auth_settings(self) -> dict[str, dict[str, str]]:
        """kubernetes-asyncio's shape: ``{"BearerToken": {"value": "Bearer ..."}}``."""
        token = self.bearer_token()
        if not token:
            return {}
        return {"BearerToken": {"in": "header", "key": "authorization", "value": f"Bearer {token}"}}


def in_cluster(environ: dict[str, str] | None = None, sa_dir: Path = SA_DIR) -> RestConfig:
    """The pod's service-account configuration (raises ConfigError outside a pod)."""
    env = os.environ if environ is None else environ
    host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise ConfigError("not in a pod: KUBERNETES_SERVICE_HOST/PORT are not set")
    if ":" in host:  # IPv6
        host = f"[{host}]"
    token_file, ca_file = sa_dir / "token", sa_dir / "ca.crt"
    if not ca_file.is_file():
        raise ConfigError(f"service account CA {ca_file} not found")
    token = FileToken(str(token_file))
    token()  # fail now, not at the first request
    return RestConfig(f"https://{host}:{port}", ssl_ca_cert=str(ca_file), token=token)


def load_kubeconfig(paths: list[Path], context: str | None = None) -> RestConfig:
    """The configuration of ``context`` (default: the current one) in ``paths``, merged."""
    clusters: dict[str, tuple[Obj, Path]] = {}
    users: dict[str, tuple[Obj, Path]] = {}
    contexts: dict[str, Obj] = {}
    current = ""
    import yaml  # a kubeconfig file only (in-cluster, the operator never parses YAML)

    for path in paths:
        try:
            doc = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read kubeconfig {path}: {exc}") from exc
        if not isinstance(doc, dict):
            raise ConfigError(f"kubeconfig {path} is not a mapping")
        for section, into in (("clusters", clusters), ("users", users)):
            for entry in doc.get(section) or []:
                body = entry.get(section[:-1]) or {}
                into.setdefault(str(entry.get("name")), (body, path.parent))
        for entry in doc.get("contexts") or []:
            contexts.setdefault(str(entry.get("name")), entry.get("context") or {})
        current = current or str(doc.get("current-context") or "")
    name = context or current
    if not name or name not in contexts:
        raise ConfigError(f"kubeconfig context {name!r} not found")
    ctx = contexts[name]
    if ctx.get("cluster") not in clusters:
        raise ConfigError(f"kubeconfig context {name!r}: cluster {ctx.get('cluster')!r} not found")
    cluster, cluster_dir = clusters[ctx["cluster"]]
    user, user_dir = users.get(str(ctx.get("user")), ({}, cluster_dir))
    if user.get("exec") or user.get("auth-provider") or user.get("username"):
        raise Unsupported(f"kubeconfig user {ctx.get('user')!r}: plugin or basic auth")
    server = cluster.get("server")
    if not server:
        raise ConfigError(f"kubeconfig cluster {ctx['cluster']!r} has no server")
    token: str | Callable[[], str] | None = user.get("token") or None
    if token is None and user.get("tokenFile"):
        token = FileToken(_path(user["tokenFile"], user_dir))
    insecure = bool(cluster.get("insecure-skip-tls-verify"))
    return RestConfig(
        str(server),
        ssl_ca_cert=None if insecure else _file(cluster, "certificate-authority", cluster_dir),
        cert_file=_file(user, "client-certificate", user_dir),
        key_file=_file(user, "client-key", user_dir),
        verify_ssl=not insecure,
        tls_server_name=cluster.get("tls-server-name") or None,
        token=token,
    )


def kubeconfig_paths(path: str | os.PathLike[str] | None) -> list[Path]:
    """``path``, else every file ``$KUBECONFIG`` lists, else ``~/.kube/config``."""
    if path:
        return [Path(path).expanduser()]
    env = os.environ.get("KUBECONFIG", "")
    listed = [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    existing = [p for p in listed if p.exists()]
    if listed:
        return existing or listed[:1]
    return [Path.home() / ".kube" / "config"]


def _path(value: str, base: Path) -> str:
    p = Path(value).expanduser()
    return str(p if p.is_absolute() else base / p)


def _file(section: Obj, field: str, base: Path) -> str | None:
    """The path of ``field``, or of a private temp file holding ``field-data``."""
    data = section.get(f"{field}-data")
    if data:
        try:
            raw = base64.b64decode(data)
        except ValueError as exc:
            raise ConfigError(f"kubeconfig {field}-data is not base64: {exc}") from exc
        return temp_file(raw)
    value = section.get(field)
    return _path(str(value), base) if value else None


_TEMP_FILES: dict[bytes, str] = {}


def temp_file(data: bytes, *, prefix: str = "kuberay-kubeconfig-") -> str:
    """A private (0600) file holding ``data`` (one per distinct content, named ``prefix…``
    when made), removed at exit: for certificates and keys given inline (``*-data``)."""
    existing = _TEMP_FILES.get(data)
    if existing and os.path.exists(existing):
        return existing
    fd, name = tempfile.mkstemp(prefix=prefix)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    if not _TEMP_FILES:
        atexit.register(_remove_temp_files)
    _TEMP_FILES[data] = name
    return name


def _remove_temp_files() -> None:
    for name in _TEMP_FILES.values():
        with contextlib.suppress(OSError):
            os.unlink(name)
    _TEMP_FILES.clear()
