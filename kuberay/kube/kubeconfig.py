"""The one kubeconfig loader (operator, library and ``kubectl ray``): kubeconfig files or a
pod's service account to a :class:`~kuberay.kube.restconfig.RestConfig`, as client-go's
``clientcmd`` does it, without importing kubernetes-asyncio.

Files (:func:`kubeconfig_files`): an explicit file alone (it must exist); else every file
``$KUBECONFIG`` lists (``os.pathsep``-separated, duplicates and missing files skipped, an
empty file is an empty config); else ``~/.kube/config`` if it exists. Merging
(:func:`merge`): for ``clusters``, ``users`` and ``contexts`` the first file to define a
name wins the whole entry; for ``current-context`` the first file to set it wins. Relative
paths in an entry (certificate files, ``tokenFile``, an ``exec`` command with a directory
part) are resolved against the directory of the file defining it.

Resolving (:func:`resolve`): the context (``Overrides.context`` else ``current-context``),
its cluster and user (``Overrides.cluster``/``user`` replace them), each override replacing
the field it names (client-go ``ConfigOverrides``). Without any kubeconfig entry and without
a server override, inside a pod, the service account (:func:`in_cluster`). Fields:

* cluster: ``server`` (``https://`` added when it has no scheme),
  ``certificate-authority[-data]``, ``insecure-skip-tls-verify``, ``tls-server-name``,
  ``proxy-url`` (else the proxy environment: :mod:`kuberay.kube.proxy`);
* user: ``client-certificate[-data]``/``client-key[-data]`` (inline data is kept in memory,
  never written to a lasting file: :mod:`kuberay.kube.restconfig`); ``tokenFile`` (wins
  over ``token``, which is then its fallback, as in client-go); ``token``;
  ``username``/``password`` (sent as basic auth; with a token as well, refused as
  client-go's validation refuses "more than one authentication method"); ``exec``
  (:mod:`kuberay.kube.exec_credentials`; as in client-go, not run when the user also has a
  token, basic auth or a client certificate); impersonation (``as``, ``as-groups``,
  ``as-uid``, ``as-user-extra``). ``auth-provider`` is refused with an error naming the
  user: the gcp and azure providers are gone from kubectl (v1.26) and an oidc one used
  from its cached token would fail once it expires; an exec plugin (``kubelogin``,
  ``gke-gcloud-auth-plugin``) replaces each.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import os
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kuberay.kube.errors import ConfigError, CredentialError
from kuberay.kube.exec_credentials import Credentials, ExecPlugin, FileToken
from kuberay.kube.overrides import Overrides
from kuberay.kube.proxy import proxy_for
from kuberay.kube.restconfig import RestConfig

Obj = dict[str, Any]
SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
#: Path-valued fields of a cluster / a user entry.
CLUSTER_PATHS = ("certificate-authority",)
USER_PATHS = ("client-certificate", "client-key", "tokenFile")


@dataclasses.dataclass
class MergedConfig:
    """The merged view: named entries and the current context, plus the files read."""

    clusters: dict[str, Obj] = dataclasses.field(default_factory=dict)
    users: dict[str, Obj] = dataclasses.field(default_factory=dict)
    contexts: dict[str, Obj] = dataclasses.field(default_factory=dict)
    current_context: str = ""
    files: list[Path] = dataclasses.field(default_factory=list)

    def is_empty(self) -> bool:
        """True when no file defined any cluster, user or context (client-go then tries
        the in-cluster config)."""
        return not (self.clusters or self.users or self.contexts)

    def as_dict(self) -> Obj:
        """The merged config as one kubeconfig document."""
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": self.current_context,
            "clusters": [{"name": n, "cluster": c} for n, c in self.clusters.items()],
            "users": [{"name": n, "user": u} for n, u in self.users.items()],
            "contexts": [{"name": n, "context": c} for n, c in self.contexts.items()],
        }


def kubeconfig_files(
    explicit: str | os.PathLike[str] | None, environ: Mapping[str, str] | None = None
) -> list[Path]:
    """The files kubectl would read, in precedence order (module doc; an explicit file is
    returned even when missing, to be reported)."""
    env = os.environ if environ is None else environ
    if explicit:
        return [Path(explicit).expanduser()]
    listed = env.get("KUBECONFIG", "")
    if listed:
        seen: list[Path] = []
        for part in listed.split(os.pathsep):
            path = Path(part).expanduser() if part else None
            if path is not None and path not in seen and path.exists():
                seen.append(path)
        return seen
    default = Path(env.get("HOME") or Path.home()) / ".kube" / "config"
    return [default] if default.exists() else []


def read_file(path: Path) -> Obj:
    """One kubeconfig document (an empty file is an empty config)."""
    import yaml  # a kubeconfig file only (in-cluster, the operator never parses YAML)

    try:
        text = path.read_text()
    except FileNotFoundError as exc:
        raise ConfigError(f"stat {path}: no such file or directory") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read kubeconfig {path}: {exc.strerror or exc}") from exc
    try:
        doc = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
        raise ConfigError(f"error loading config file {path}: {first}") from exc
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigError(f"error loading config file {path}: not a kubeconfig mapping")
    return doc


def merge(paths: list[Path]) -> MergedConfig:
    """The files merged with kubectl's rules (see the module doc)."""
    merged = MergedConfig(files=list(paths))
    for path in paths:
        doc = read_file(path)
        base = path.parent.resolve()
        for section, into, fields in (
            ("clusters", merged.clusters, CLUSTER_PATHS),
            ("users", merged.users, USER_PATHS),
            ("contexts", merged.contexts, ()),
        ):
            for entry in doc.get(section) or []:
                if not isinstance(entry, dict) or not entry.get("name"):
                    continue
                body = entry.get(section[:-1]) or {}
                if isinstance(body, dict):
                    into.setdefault(str(entry["name"]), _resolve_paths(body, fields, base))
        if not merged.current_context and doc.get("current-context"):
            merged.current_context = str(doc["current-context"])
    return merged


def _resolve_paths(entry: Obj, fields: tuple[str, ...], base: Path) -> Obj:
    out = dict(entry)
    for field in fields:
        value = out.get(field)
        if isinstance(value, str) and value:
            path = Path(value).expanduser()
            out[field] = str(path if path.is_absolute() else base / path)
    exec_spec = out.get("exec")
    if isinstance(exec_spec, dict):
        command = str(exec_spec.get("command") or "")
        if command and os.sep in command and not Path(command).is_absolute():
            out["exec"] = {**exec_spec, "command": str(base / command)}
    return out


def namespace_of(
    config: MergedConfig, overrides: Overrides, environ: Mapping[str, str] | None = None
) -> str:
    """The override, else the context's namespace, else the pod's (in-cluster), else
    "default"."""
    env = os.environ if environ is None else environ
    if overrides.namespace:
        return overrides.namespace
    name = overrides.context or config.current_context
    ctx = config.contexts.get(name) if name else None
    if overrides.context and ctx is None:
        raise ConfigError(f'context was not found for specified context: "{overrides.context}"')
    if ctx is not None:
        return str(ctx.get("namespace") or "default")
    if config.is_empty() and not overrides.server and env.get("KUBERNETES_SERVICE_HOST"):
        try:
            return (SA_DIR / "namespace").read_text().strip() or "default"
        except OSError:
            return "default"
    return "default"


def resolve(
    config: MergedConfig,
    overrides: Overrides | None = None,
    environ: Mapping[str, str] | None = None,
) -> RestConfig:
    """The connection ``config`` and ``overrides`` describe (module doc); ConfigError
    naming the context, cluster or user at fault when there is none."""
    env = os.environ if environ is None else environ
    over = overrides or Overrides()
    namespace = namespace_of(config, over, env)
    if config.is_empty() and not over.server and env.get("KUBERNETES_SERVICE_HOST"):
        cfg = in_cluster(env, strict=False)
        cfg.namespace = namespace
        return cfg
    ctx_name = over.context or config.current_context
    ctx = config.contexts.get(ctx_name, {}) if ctx_name else {}
    cluster_name = over.cluster or str(ctx.get("cluster") or "")
    user_name = over.user or str(ctx.get("user") or "")
    if over.cluster and over.cluster not in config.clusters:
        raise ConfigError(f'cluster "{over.cluster}" does not exist in the kubeconfig')
    if over.user and over.user not in config.users:
        raise ConfigError(f'user "{over.user}" does not exist in the kubeconfig')
    cluster = dict(config.clusters.get(cluster_name, {}))
    user = dict(config.users.get(user_name, {}))
    server = str(over.server or cluster.get("server") or "")
    if not server:
        if config.is_empty():
            looked = ", ".join(str(p) for p in config.files) or "no file"
            raise ConfigError(
                "no Kubernetes cluster configured: set KUBECONFIG, pass --kubeconfig or "
                f"--server (kubeconfig files read: {looked})"
            )
        if not ctx_name:
            raise ConfigError("the kubeconfig has no current-context; pass --context")
        if ctx_name not in config.contexts:
            raise ConfigError(f'context "{ctx_name}" does not exist in the kubeconfig')
        raise ConfigError(f'context "{ctx_name}": cluster "{cluster_name}" has no server')
    if "://" not in server:
        server = "https://" + server
    if over.insecure_skip_tls_verify and over.certificate_authority:
        raise ConfigError(
            "specifying a root certificates file with the insecure flag is not allowed"
        )
    insecure = over.insecure_skip_tls_verify or bool(cluster.get("insecure-skip-tls-verify"))
    ca_file, ca_data = _source(cluster, "certificate-authority", over.certificate_authority)
    cert_file, cert_data = _source(user, "client-certificate", over.client_certificate)
    key_file, key_data = _source(user, "client-key", over.client_key)
    has_cert = bool(cert_file or cert_data)
    credentials, basic = _credentials(over, user, user_name, cluster, server, has_cert)
    return RestConfig(
        server,
        ssl_ca_cert=None if insecure else ca_file,
        ca_data=None if insecure else ca_data,
        cert_file=cert_file,
        key_file=key_file,
        cert_data=cert_data,
        key_data=key_data,
        verify_ssl=not insecure,
        tls_server_name=over.tls_server_name or cluster.get("tls-server-name") or None,
        proxy=proxy_for(server, cluster.get("proxy-url"), env),
        extra_headers=_impersonation(over, user),
        credentials=credentials,
        basic_auth=basic,
        namespace=namespace,
        context=ctx_name,
    )


def _credentials(
    over: Overrides, user: Obj, name: str, cluster: Obj, server: str, has_cert: bool
) -> tuple[Credentials, tuple[str, str] | None]:
    if over.token:
        return Credentials(static=over.token), None
    if user.get("auth-provider"):
        provider = user["auth-provider"]
        which = provider.get("name") if isinstance(provider, dict) else provider
        raise ConfigError(
            f'user "{name}": auth-provider "{which}" is not supported (kubectl removed the '
            "gcp and azure providers); use an exec credential plugin instead, such as "
            "gke-gcloud-auth-plugin, kubelogin or aws eks get-token"
        )
    basic = None
    if user.get("username") or user.get("password"):
        basic = (str(user.get("username") or ""), str(user.get("password") or ""))
    methods = [m for m in ("token", "tokenFile") if user.get(m)]
    if basic is not None and methods:
        raise ConfigError(
            f'user "{name}": more than one authentication method found '
            f"(basic auth and {', '.join(methods)}); only one is allowed"
        )
    # client-go runs the plugin only when the user has no token, basic auth or certificate
    # (exec.Authenticator.UpdateTransportConfig): those are taken as meant instead.
    if isinstance(user.get("exec"), dict) and not (methods or basic or has_cert):
        info = _cluster_info(cluster, server)
        return Credentials(exec_plugin=ExecPlugin(user["exec"], name, info)), None
    token_file = str(user["tokenFile"]) if user.get("tokenFile") else None
    return Credentials(static=str(user.get("token") or "") or None, token_file=token_file), basic


def _cluster_info(cluster: Obj, server: str) -> Obj:
    """``spec.cluster`` of an ExecCredential request (client-go ``clientauthentication``)."""
    info: Obj = {"server": server}
    for field, key in (
        ("tls-server-name", "tls-server-name"),
        ("insecure-skip-tls-verify", "insecure-skip-tls-verify"),
        ("proxy-url", "proxy-url"),
        ("certificate-authority-data", "certificate-authority-data"),
    ):
        if cluster.get(field):
            info[key] = cluster[field]
    for ext in cluster.get("extensions") or []:
        if isinstance(ext, dict) and ext.get("name") == "client.authentication.k8s.io/exec":
            info["config"] = ext.get("extension")
    return info


def _impersonation(over: Overrides, user: Obj) -> list[tuple[str, str]]:
    """client-go's impersonation headers (one ``Impersonate-Group`` line per group)."""
    headers: list[tuple[str, str]] = []
    who = over.as_user or user.get("as")
    if who:
        headers.append(("Impersonate-User", str(who)))
    for group in over.as_groups or list(user.get("as-groups") or []):
        headers.append(("Impersonate-Group", str(group)))
    uid = over.as_uid or user.get("as-uid")
    if uid:
        headers.append(("Impersonate-Uid", str(uid)))
    for key, values in (user.get("as-user-extra") or {}).items():
        for value in values:
            headers.append((f"Impersonate-Extra-{urllib.parse.quote(str(key))}", str(value)))
    return headers


def _source(section: Obj, field: str, override: str | None) -> tuple[str | None, bytes | None]:
    """``(path, None)`` or ``(None, data)`` of ``field`` (an override path wins)."""
    if override:
        return override, None
    data = section.get(f"{field}-data")
    if data:
        try:
            return None, base64.b64decode(str(data), validate=True)
        except (ValueError, binascii.Error) as exc:
            raise ConfigError(f"kubeconfig {field}-data is not base64: {exc}") from exc
    value = section.get(field)
    return (str(value) if value else None), None


def in_cluster(
    environ: Mapping[str, str] | None = None, sa_dir: Path = SA_DIR, *, strict: bool = True
) -> RestConfig:
    """The pod's service-account configuration (ConfigError outside a pod). ``strict``
    checks now that the CA and token can be read (else the first request fails)."""
    env = os.environ if environ is None else environ
    host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "")
    if strict and (not host or not port):
        raise ConfigError("not in a pod: KUBERNETES_SERVICE_HOST/PORT are not set")
    if ":" in host:  # IPv6
        host = f"[{host}]"
    token_file, ca_file = sa_dir / "token", sa_dir / "ca.crt"
    if strict:
        if not ca_file.is_file():
            raise ConfigError(f"service account CA {ca_file} not found")
        FileToken(str(token_file))()  # fail now, not at the first request
    return RestConfig(
        f"https://{host}:{port or 443}",
        ssl_ca_cert=str(ca_file),
        credentials=Credentials(token_file=str(token_file)),
    )


def load(
    path: str | os.PathLike[str] | None = None,
    overrides: Overrides | None = None,
    environ: Mapping[str, str] | None = None,
) -> RestConfig:
    """:func:`resolve` over the files :func:`kubeconfig_files` picks for ``path``."""
    return resolve(merge(kubeconfig_files(path, environ)), overrides, environ)


def load_kubeconfig(paths: list[Path], context: str | None = None) -> RestConfig:
    """The configuration of ``context`` (default: the current one) in ``paths``, merged."""
    return resolve(merge(paths), Overrides(context=context))


__all__ = [
    "SA_DIR",
    "ConfigError",
    "CredentialError",
    "MergedConfig",
    "Overrides",
    "RestConfig",
    "in_cluster",
    "kubeconfig_files",
    "load",
    "load_kubeconfig",
    "merge",
    "namespace_of",
    "read_file",
    "resolve",
]
