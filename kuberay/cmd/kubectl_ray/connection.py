"""kubectl's connection flags applied to the merged kubeconfig: the server to dial, how to
trust it, who to be, through which proxy, and for how long to wait.

:func:`resolve` picks the context (``--context`` else ``current-context``), its cluster
and user (``--cluster`` / ``--user`` replace them), then lets each flag override the
field it names, as client-go's ``ConfigOverrides``. Without any kubeconfig entry and
without ``--server`` it falls back to the pod's service account (in-cluster config).
Credentials: ``token``/``tokenFile``, client certificates, basic auth, ``exec`` plugins
(:mod:`.credentials`) and ``auth-provider`` tokens. Proxy: the cluster's ``proxy-url``,
else ``HTTPS_PROXY``/``HTTP_PROXY`` minus ``NO_PROXY`` with Go's rules (loopback
addresses and ``localhost`` are never proxied).
"""

from __future__ import annotations

import base64
import ipaddress
import os
import re
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from kuberay.cmd.kubectl_ray.credentials import Credentials, ExecPlugin, temp_file
from kuberay.cmd.kubectl_ray.kubeconfigs import (
    KubeconfigError,
    MergedConfig,
    kubeconfig_files,
    merge,
)

SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
#: What ``--request-timeout 0`` (no timeout) becomes: a day per request.
NO_TIMEOUT = 86400.0
#: Per-request timeout when ``--request-timeout`` is not given.
DEFAULT_TIMEOUT = 30.0


def parse_request_timeout(text: str) -> float:
    """kubectl's ``--request-timeout`` value: ``0`` (none), plain seconds (``5``) or a Go
    duration (``5s``, ``1m``, ``1h30m``, ``250ms``); seconds (0.0 for none)."""
    text = text.strip()
    if re.fullmatch(r"\d+", text):
        return float(text)
    pos, total = 0, 0.0
    for match in _DURATION.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if not text or pos != len(text):
        raise ValueError(
            "invalid timeout value. Timeout must be a single integer in seconds, or an "
            "integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)"
        )
    return total


@attrs.define
class ConnectionFlags:
    """kubectl's connection flags (None: not given)."""

    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    server: str | None = None
    token: str | None = None
    as_user: str | None = None
    as_groups: list[str] = attrs.field(factory=list)
    as_uid: str | None = None
    certificate_authority: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None
    request_timeout: str | None = None


@attrs.define
class ConnectionConfig:
    """Everything :class:`~kuberay.kube.Client` needs (the attributes it reads from a
    configuration), plus the namespace and the per-request timeout."""

    host: str
    namespace: str = "default"
    context: str = ""
    ssl_ca_cert: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    verify_ssl: bool = True
    tls_server_name: str | None = None
    proxy: str | None = None
    extra_headers: list[tuple[str, str]] = attrs.field(factory=list)
    credentials: Credentials = attrs.field(factory=Credentials)
    request_timeout: float = DEFAULT_TIMEOUT

    async def auth_settings(self) -> dict[str, dict[str, str]]:
        """kubernetes-asyncio's shape: ``{"BearerToken": {"value": "Bearer ..."}}``."""
        token = await self.credentials.token()
        if not token:
            return {}
        return {"BearerToken": {"in": "header", "key": "authorization", "value": f"Bearer {token}"}}


def load(flags: ConnectionFlags, environ: Mapping[str, str] | None = None) -> MergedConfig:
    """The merged kubeconfig the flags select."""
    return merge(kubeconfig_files(flags.kubeconfig, environ))


def namespace_of(
    flags: ConnectionFlags, config: MergedConfig, environ: Mapping[str, str] | None = None
) -> str:
    """``-n``, else the context's namespace, else the pod's (in-cluster), else default."""
    env = os.environ if environ is None else environ
    if flags.namespace:
        return flags.namespace
    name = flags.context or config.current_context
    ctx = config.contexts.get(name) if name else None
    if flags.context and ctx is None:
        raise KubeconfigError(f'context was not found for specified context: "{flags.context}"')
    if ctx is not None:
        return str(ctx.get("namespace") or "default")
    if config.is_empty() and not flags.server and env.get("KUBERNETES_SERVICE_HOST"):
        try:
            return (SA_DIR / "namespace").read_text().strip() or "default"
        except OSError:
            return "default"
    return "default"


def resolve(
    flags: ConnectionFlags, config: MergedConfig, environ: Mapping[str, str] | None = None
) -> ConnectionConfig:
    """The connection the flags and the kubeconfig describe (KubeconfigError if none)."""
    env = os.environ if environ is None else environ
    timeout = DEFAULT_TIMEOUT
    if flags.request_timeout is not None:
        try:
            timeout = parse_request_timeout(flags.request_timeout) or NO_TIMEOUT
        except ValueError as exc:
            raise KubeconfigError(str(exc)) from exc
    namespace = namespace_of(flags, config, env)
    if config.is_empty() and not flags.server and env.get("KUBERNETES_SERVICE_HOST"):
        return _in_cluster(env, namespace, timeout)
    ctx_name = flags.context or config.current_context
    ctx = config.contexts.get(ctx_name, {}) if ctx_name else {}
    cluster_name = flags.cluster or str(ctx.get("cluster") or "")
    user_name = flags.user or str(ctx.get("user") or "")
    if flags.cluster and flags.cluster not in config.clusters:
        raise KubeconfigError(f'cluster "{flags.cluster}" does not exist in the kubeconfig')
    if flags.user and flags.user not in config.users:
        raise KubeconfigError(f'user "{flags.user}" does not exist in the kubeconfig')
    cluster = dict(config.clusters.get(cluster_name, {}))
    user = dict(config.users.get(user_name, {}))
    server = flags.server or cluster.get("server")
    if not server:
        if config.is_empty():
            looked = ", ".join(str(p) for p in config.files) or "no file"
            raise KubeconfigError(
                "no Kubernetes cluster configured: set KUBECONFIG, pass --kubeconfig or "
                f"--server (kubeconfig files read: {looked})"
            )
        if not ctx_name:
            raise KubeconfigError("the kubeconfig has no current-context; pass --context")
        raise KubeconfigError(f'context "{ctx_name}": cluster "{cluster_name}" has no server')
    server = str(server)
    if "://" not in server:
        server = "https://" + server
    insecure = flags.insecure_skip_tls_verify or bool(cluster.get("insecure-skip-tls-verify"))
    ca = flags.certificate_authority or _file(cluster, "certificate-authority")
    if flags.insecure_skip_tls_verify and flags.certificate_authority:
        raise KubeconfigError(
            "specifying a root certificates file with the insecure flag is not allowed"
        )
    cert = flags.client_certificate or _file(user, "client-certificate")
    key = flags.client_key or _file(user, "client-key")
    headers = _impersonation(flags, user)
    if user.get("username") and not flags.token:
        raw = f"{user.get('username')}:{user.get('password') or ''}".encode()
        headers.append(("Authorization", "Basic " + base64.b64encode(raw).decode()))
    credentials = _credentials(flags, user, user_name)
    return ConnectionConfig(
        host=server.rstrip("/"),
        namespace=namespace,
        context=ctx_name,
        ssl_ca_cert=None if insecure else ca,
        cert_file=cert,
        key_file=key,
        verify_ssl=not insecure,
        tls_server_name=flags.tls_server_name or cluster.get("tls-server-name") or None,
        proxy=proxy_for(server, cluster.get("proxy-url"), env),
        extra_headers=headers,
        credentials=credentials,
        request_timeout=timeout,
    )


def _credentials(flags: ConnectionFlags, user: dict[str, Any], name: str) -> Credentials:
    if flags.token:
        return Credentials(static=flags.token)
    if user.get("token"):
        return Credentials(static=str(user["token"]))
    if user.get("tokenFile"):
        return Credentials(token_file=str(user["tokenFile"]))
    if isinstance(user.get("exec"), dict):
        return Credentials(exec_plugin=ExecPlugin.from_spec(user["exec"], name))
    provider = user.get("auth-provider")
    if isinstance(provider, dict):
        cfg = provider.get("config") or {}
        token = cfg.get("id-token") if provider.get("name") == "oidc" else cfg.get("access-token")
        if not token:
            raise KubeconfigError(
                f'user "{name}": auth-provider "{provider.get("name")}" has no cached token; '
                "run kubectl once (it refreshes the token) or switch to an exec plugin"
            )
        return Credentials(static=str(token))
    return Credentials()


def _impersonation(flags: ConnectionFlags, user: dict[str, Any]) -> list[tuple[str, str]]:
    """client-go's impersonation headers (one ``Impersonate-Group`` line per group)."""
    headers: list[tuple[str, str]] = []
    who = flags.as_user or user.get("as")
    if who:
        headers.append(("Impersonate-User", str(who)))
    for group in flags.as_groups or list(user.get("as-groups") or []):
        headers.append(("Impersonate-Group", str(group)))
    uid = flags.as_uid or user.get("as-uid")
    if uid:
        headers.append(("Impersonate-Uid", str(uid)))
    for key, values in (user.get("as-user-extra") or {}).items():
        for value in values:
            headers.append((f"Impersonate-Extra-{urllib.parse.quote(str(key))}", str(value)))
    return headers


def _file(section: dict[str, Any], field: str) -> str | None:
    data = section.get(f"{field}-data")
    if data:
        try:
            return temp_file(base64.b64decode(data))
        except ValueError as exc:
            raise KubeconfigError(f"kubeconfig {field}-data is not base64: {exc}") from exc
    value = section.get(field)
    return str(value) if value else None


def _in_cluster(env: Mapping[str, str], namespace: str, timeout: float) -> ConnectionConfig:
    host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "")
    if ":" in host:
        host = f"[{host}]"
    return ConnectionConfig(
        host=f"https://{host}:{port or 443}",
        namespace=namespace,
        ssl_ca_cert=str(SA_DIR / "ca.crt"),
        credentials=Credentials(token_file=str(SA_DIR / "token")),
        request_timeout=timeout,
    )


def _no_proxy_match(host: str, port: int, no_proxy: str) -> bool:
    """Go's ``httpproxy`` NO_PROXY rules: ``*``, IPs, CIDRs, domains (``.x`` / ``x``
    match ``x`` and its subdomains), optional ``:port``."""
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        try:
            net = ipaddress.ip_network(entry, strict=False)
            if "/" in entry:
                try:
                    if ipaddress.ip_address(host) in net:
                        return True
                except ValueError:
                    pass
                continue
        except ValueError:
            pass
        want_port = None
        if entry.count(":") == 1:
            entry, port_text = entry.split(":")
            want_port = int(port_text) if port_text.isdigit() else None
        if want_port is not None and want_port != port:
            continue
        try:
            if ipaddress.ip_address(entry.strip("[]")) == ipaddress.ip_address(host):
                return True
            continue
        except ValueError:
            pass
        domain = entry.lstrip("*").lstrip(".")
        if host == domain or host.endswith("." + domain):
            return True
    return False


def proxy_for(server: str, proxy_url: object, environ: Mapping[str, str]) -> str | None:
    """The proxy to reach ``server`` through: the cluster's ``proxy-url``, else the
    proxy environment variables as Go reads them (None: dial directly)."""
    if proxy_url:
        return str(proxy_url)
    parts = urllib.parse.urlsplit(server)
    host = (parts.hostname or "").lower()
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if host == "localhost":
        return None
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:
        pass
    if parts.scheme == "https":
        value = environ.get("HTTPS_PROXY") or environ.get("https_proxy")
    else:
        value = environ.get("HTTP_PROXY") or environ.get("http_proxy")
    if not value:
        return None
    if _no_proxy_match(host, port, environ.get("NO_PROXY") or environ.get("no_proxy") or ""):
        return None
    return str(value if "://" in value else "http://" + value)


__all__ = [
    "DEFAULT_TIMEOUT",
    "NO_TIMEOUT",
    "ConnectionConfig",
    "ConnectionFlags",
    "load",
    "namespace_of",
    "parse_request_timeout",
    "proxy_for",
    "resolve",
]
