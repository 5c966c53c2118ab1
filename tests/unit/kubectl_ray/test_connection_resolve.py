"""How flags and kubeconfig entries become a connection (the parts the apiserver tests
cannot reach: in-cluster, auth-providers refused, basic auth, relative paths)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from kuberay.kube.errors import ConfigError as KubeconfigError
from kuberay.kubectl_ray.connection import ConnectionFlags, load, resolve


def write(path: Path, doc: dict[str, object]) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


def test_in_cluster_when_no_kubeconfig_defines_anything(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("")
    env = {"KUBECONFIG": str(empty), "KUBERNETES_SERVICE_HOST": "10.96.0.1",
           "KUBERNETES_SERVICE_PORT": "443"}  # fmt: skip
    flags = ConnectionFlags()
    conn = resolve(flags, load(flags, env), env)
    assert conn.host == "https://10.96.0.1:443"
    assert conn.ssl_ca_cert == "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
    assert conn.credentials.token_file == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    # --server turns the in-cluster fallback off
    flags = ConnectionFlags(server="https://example.test:6443")
    assert resolve(flags, load(flags, env), env).host == "https://example.test:6443"


def test_relative_paths_resolve_against_their_file(tmp_path: Path) -> None:
    sub = tmp_path / "conf"
    sub.mkdir()
    path = write(sub / "config", {
        "clusters": [{"name": "c", "cluster": {"server": "https://h:1",
                                               "certificate-authority": "ca.crt"}}],
        "users": [{"name": "u", "user": {"client-certificate": "certs/u.crt",
                                         "client-key": "/abs/u.key"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    })  # fmt: skip
    flags = ConnectionFlags(kubeconfig=str(path))
    conn = resolve(flags, load(flags, {}), {})
    assert conn.ssl_ca_cert == str(sub.resolve() / "ca.crt")
    assert conn.cert_file == str(sub.resolve() / "certs" / "u.crt")
    assert conn.key_file == "/abs/u.key"


async def test_auth_provider_basic_auth_and_impersonation(tmp_path: Path) -> None:
    path = write(tmp_path / "config", {
        "clusters": [{"name": "c", "cluster": {"server": "h:6443",
                                               "insecure-skip-tls-verify": True}}],
        "users": [
            {"name": "oidc", "user": {"auth-provider": {"name": "oidc",
                                                        "config": {"id-token": "ID"}}}},
            {"name": "gcp", "user": {"auth-provider": {"name": "gcp", "config": {}}}},
            {"name": "basic", "user": {"username": "u", "password": "p",
                                       "as": "bob", "as-groups": ["g1", "g2"]}},
        ],
        "contexts": [{"name": n, "context": {"cluster": "c", "user": n}}
                     for n in ("oidc", "gcp", "basic")],
        "current-context": "oidc",
    })  # fmt: skip
    # auth-providers are refused, naming the user and pointing at exec plugins
    for name in ("oidc", "gcp"):
        flags = ConnectionFlags(kubeconfig=str(path), context=name)
        with pytest.raises(KubeconfigError, match=f'user "{name}": auth-provider "{name}" is not'):
            resolve(flags, load(flags, {}), {})
    flags = ConnectionFlags(kubeconfig=str(path), context="basic", as_groups=["only"])
    conn = resolve(flags, load(flags, {}), {})
    assert conn.host == "https://h:6443" and conn.verify_ssl is False
    assert conn.extra_headers == [
        ("Impersonate-User", "bob"),
        ("Impersonate-Group", "only"),  # --as-group replaces the kubeconfig's groups
    ]
    assert await conn.authorization() == "Basic " + base64.b64encode(b"u:p").decode()
    kubeconfig_groups = ConnectionFlags(kubeconfig=str(path), context="basic")
    conn = resolve(kubeconfig_groups, load(kubeconfig_groups, {}), {})
    assert [v for k, v in conn.extra_headers if k == "Impersonate-Group"] == ["g1", "g2"]
