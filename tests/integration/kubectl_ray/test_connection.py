"""kubectl's connection habits against the real apiserver: merged ``KUBECONFIG`` lists,
every connection flag (before or after the command), proxies, exec credentials and
one-line connection errors."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from kuberay.kube import Client
from tests.integration.kubectl_ray.connect_helpers import (
    Admin,
    connect_proxy,
    environ,
    kubeconfig,
    ray,
    silent_server,
    split_admin,
    whoami,
)

pytestmark = pytest.mark.integration

SA = "plugin-tester"


def raycluster(name: str, namespace: str) -> dict[str, Any]:
    """A minimal RayCluster (no operator runs: it only has to be listed)."""
    container = {"name": "ray-head", "image": "rayproject/ray:2.52.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": {
            "containers": [container]}}}},
    }  # fmt: skip


@pytest.fixture
async def admin(kubeconfig_path: Path, tmp_path: Path) -> Admin:
    return split_admin(kubeconfig_path, tmp_path / "admin")


@pytest.fixture
async def demo(kclient: Client, namespace: str, crds_installed: None) -> str:
    await kclient.create(raycluster("demo", namespace))
    return namespace


@pytest.fixture
async def sa_token(kclient: Client, namespace: str) -> str:
    await kclient.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": SA, "namespace": namespace},
        }
    )
    review = await kclient.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{SA}/token",
        verb="create",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
              "spec": {"expirationSeconds": 600}},
    )  # fmt: skip
    return str(review["status"]["token"])


def names_in(table: str) -> list[str]:
    return [line.split()[0] for line in table.splitlines()[1:]]


async def test_merged_kubeconfig_list(admin: Admin, demo: str, tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    first = kubeconfig(
        tmp_path / "a.yaml",
        clusters={"dead": {"server": "https://127.0.0.1:1"}},
        contexts={"cxa": {"cluster": "dead", "user": "admin"}},
        current="cxb",  # defined in the next file: kubectl still uses it
    )
    second = kubeconfig(
        tmp_path / "b.yaml",
        clusters={"real": admin.cluster()},
        users={"admin": admin.user()},
        contexts={"cxb": {"cluster": "real", "user": "admin", "namespace": demo}},
        current="cxa",  # loses: the first file set current-context
    )
    shadowed = kubeconfig(
        tmp_path / "c.yaml",
        contexts={"cxb": {"cluster": "dead", "user": "admin"}},  # loses: b.yaml defined cxb
    )
    listed = ":".join(str(p) for p in (empty, tmp_path / "missing.yaml", first, second, shadowed))
    with environ(KUBECONFIG=listed):
        got = await ray("get", "cluster")  # context cxb, its namespace
        assert got.code == 0, got.err
        assert names_in(got.out) == ["demo"]
        assert got.out.splitlines()[1].split()[1] == demo

        explicit = await ray("get", "cluster", "--context", "cxb", "-n", demo)
        assert names_in(explicit.out) == ["demo"]

        dead = await ray("--context", "cxa", "get", "cluster", "-n", demo)
        assert dead.code == 1
        assert dead.err.count("\n") == 1
        assert dead.err == (
            "Error: cannot reach the Kubernetes API server at https://127.0.0.1:1: "
            "connection refused\n"
        )

        missing = await ray("get", "cluster", "--context", "nope")
        assert missing.code == 1
        assert 'context was not found for specified context: "nope"' in missing.err

    # --kubeconfig reads that file alone (b.yaml's entries are not there)
    only = await ray("--kubeconfig", str(first), "--context", "cxb", "get", "cluster")
    assert only.code == 1 and "context was not found" in only.err
    gone = await ray("--kubeconfig", str(tmp_path / "missing.yaml"), "get", "cluster")
    assert gone.err.startswith("Error: stat ") and "no such file or directory" in gone.err


async def test_tls_flags_without_a_kubeconfig(admin: Admin, demo: str, tmp_path: Path) -> None:
    with environ(KUBECONFIG=str(tmp_path / "none.yaml"), HOME=str(tmp_path)):
        nothing = await ray("get", "cluster", "-n", demo)
        assert nothing.code == 1
        assert "no Kubernetes cluster configured" in nothing.err

        flags = ["--server", admin.server, "--client-certificate", str(admin.cert),
                 "--client-key", str(admin.key)]  # fmt: skip
        ok = await ray(
            "get", "cluster", "-n", demo, *flags, "--certificate-authority", str(admin.ca)
        )
        assert ok.code == 0, ok.err
        assert names_in(ok.out) == ["demo"]

        # flags before the command work the same
        before = await ray(*flags, "--insecure-skip-tls-verify", "-n", demo, "get", "cluster")
        assert names_in(before.out) == ["demo"]

        untrusted = await ray("get", "cluster", "-n", demo, *flags)
        assert untrusted.code == 1
        assert untrusted.err.startswith(
            f"Error: cannot reach the Kubernetes API server at {admin.server}: "
            "TLS certificate not trusted"
        )
        assert untrusted.err.count("\n") == 1

        ca = ["--certificate-authority", str(admin.ca)]
        named = await ray("get", "cluster", "-n", demo, *flags, *ca,
                          "--tls-server-name", "kubernetes.default")  # fmt: skip
        assert names_in(named.out) == ["demo"], named.err
        wrong = await ray("get", "cluster", "-n", demo, *flags, *ca,
                          "--tls-server-name", "not-the-apiserver.example")  # fmt: skip
        assert wrong.code == 1 and "TLS certificate not trusted" in wrong.err

        both = await ray("get", "cluster", *flags, *ca, "--insecure-skip-tls-verify")
        assert "root certificates file with the insecure flag is not allowed" in both.err


async def test_cluster_user_and_token_flags(
    admin: Admin, demo: str, sa_token: str, tmp_path: Path
) -> None:
    path = kubeconfig(
        tmp_path / "config",
        clusters={"dead": {"server": "https://127.0.0.1:1"}, "real": admin.cluster()},
        users={"nobody": {}, "admin": admin.user()},
        contexts={"main": {"cluster": "dead", "user": "nobody", "namespace": demo}},
        current="main",
    )
    with environ(KUBECONFIG=str(path)):
        switched = await ray("get", "cluster", "--cluster", "real", "--user", "admin")
        assert switched.code == 0, switched.err
        assert names_in(switched.out) == ["demo"]
        assert (await whoami("--cluster", "real", "--user", "admin"))["username"] == "admin"

        as_sa = await whoami("--cluster", "real", "--token", sa_token)
        assert as_sa["username"] == f"system:serviceaccount:{demo}:{SA}"
        # the service account may not list RayClusters: the apiserver's answer, one line
        denied = await ray("get", "cluster", "--cluster", "real", "--token", sa_token)
        assert denied.code == 1
        assert f'User "system:serviceaccount:{demo}:{SA}" cannot list' in denied.err
        assert denied.err.count("\n") == 1

        bad = await ray("get", "cluster", "--cluster", "real", "--token", "not-a-token")
        assert bad.err.startswith(
            f"Error: the server {admin.server} rejected the credentials (Unauthorized)"
        )
        unknown = await ray("get", "cluster", "--user", "ghost")
        assert 'user "ghost" does not exist' in unknown.err


async def test_impersonation_flags(admin: Admin, demo: str, tmp_path: Path) -> None:
    path = kubeconfig(
        tmp_path / "config",
        clusters={"real": admin.cluster()},
        users={"admin": admin.user()},
        contexts={"main": {"cluster": "real", "user": "admin", "namespace": demo}},
        current="main",
    )
    with environ(KUBECONFIG=str(path)):
        who = await whoami("--as", "alice", "--as-group", "team-a", "--as-group", "team-b",
                           "--as-uid", "uid-7")  # fmt: skip
        assert who["username"] == "alice"
        assert who["uid"] == "uid-7"
        assert {"team-a", "team-b"} <= set(who["groups"])

        denied = await ray("get", "cluster", "--as", "alice")
        assert denied.code == 1 and 'User "alice" cannot list' in denied.err
        # the second group line is sent on its own (a joined value would name no group)
        allowed = await ray("get", "cluster", "--as", "alice", "--as-group", "team-a",
                            "--as-group", "system:masters")  # fmt: skip
        assert allowed.code == 0, allowed.err
        assert names_in(allowed.out) == ["demo"]


async def test_request_timeout(tmp_path: Path) -> None:
    async with silent_server() as port:
        server = f"https://127.0.0.1:{port}"
        with environ(KUBECONFIG=str(tmp_path / "none.yaml")):
            stuck = await ray("get", "cluster", "--server", server, "--request-timeout", "1s")
            assert stuck.err == (
                f"Error: cannot reach the Kubernetes API server at {server}: "
                "no answer within 1s (--request-timeout)\n"
            )
            bad = await ray("get", "cluster", "--server", server, "--request-timeout", "5x")
            assert bad.code == 1 and "invalid timeout value" in bad.err


async def test_proxy_url_and_proxy_environment(admin: Admin, demo: str, tmp_path: Path) -> None:
    port = admin.server.rsplit(":", 1)[1]
    # a name that resolves nowhere: only a proxy can reach it (ours dials 127.0.0.1)
    far = f"https://apiserver.kuberay.invalid:{port}"
    named = {"tls-server-name": "localhost"}
    async with connect_proxy() as proxy:
        url = f"http://127.0.0.1:{proxy.port}"
        path = kubeconfig(
            tmp_path / "proxied",
            clusters={"far": admin.cluster(far, **named, **{"proxy-url": url})},
            users={"admin": admin.user()},
            contexts={"main": {"cluster": "far", "user": "admin", "namespace": demo}},
            current="main",
        )
        with environ(KUBECONFIG=str(path), HTTPS_PROXY=None, https_proxy=None):
            got = await ray("get", "cluster")
            assert got.code == 0, got.err
            assert names_in(got.out) == ["demo"]
        assert proxy.targets and set(proxy.targets) == {f"apiserver.kuberay.invalid:{port}"}

        env_path = kubeconfig(
            tmp_path / "env",
            clusters={"far": admin.cluster(far, **named), "near": admin.cluster()},
            users={"admin": admin.user()},
            contexts={"far": {"cluster": "far", "user": "admin", "namespace": demo},
                      "near": {"cluster": "near", "user": "admin", "namespace": demo}},
            current="far",
        )  # fmt: skip
        proxy.targets.clear()
        with environ(KUBECONFIG=str(env_path), HTTPS_PROXY=url, NO_PROXY=None, no_proxy=None):
            via_env = await ray("get", "cluster")
            assert names_in(via_env.out) == ["demo"], via_env.err
            assert len(proxy.targets) >= 1
            seen = len(proxy.targets)
            # loopback servers are never proxied (Go's rule)
            near = await ray("get", "cluster", "--context", "near")
            assert names_in(near.out) == ["demo"]
            assert len(proxy.targets) == seen
        with environ(KUBECONFIG=str(env_path), HTTPS_PROXY=url, NO_PROXY=".kuberay.invalid"):
            direct = await ray("get", "cluster")
            assert direct.code == 1
            assert "unknown host apiserver.kuberay.invalid" in direct.err
            assert len(proxy.targets) == seen


async def test_exec_credential_plugin(
    admin: Admin, demo: str, sa_token: str, tmp_path: Path
) -> None:
    plugin = tmp_path / "bin" / "token-plugin.py"
    plugin.parent.mkdir()
    plugin.write_text(
        "import json, os, sys\n"
        "info = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
        "assert info['kind'] == 'ExecCredential'\n"
        "print(json.dumps({'apiVersion': info['apiVersion'], 'kind': 'ExecCredential',\n"
        "                  'status': {'token': os.environ['PLUGIN_TOKEN']}}))\n"
    )
    path = kubeconfig(
        tmp_path / "config",
        clusters={"real": admin.cluster()},
        users={"sa": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(plugin)],
            "env": [{"name": "PLUGIN_TOKEN", "value": sa_token}],
            "interactiveMode": "Never",
        }}, "broken": {"exec": {"apiVersion": "client.authentication.k8s.io/v1",
                                "command": "./bin/no-such-plugin", "installHint": "install it"}}},
        contexts={"sa": {"cluster": "real", "user": "sa", "namespace": demo},
                  "broken": {"cluster": "real", "user": "broken", "namespace": demo}},
        current="sa",
    )  # fmt: skip
    with environ(KUBECONFIG=str(path)):
        who = await whoami()
        assert who["username"] == f"system:serviceaccount:{demo}:{SA}"
        broken = await ray("get", "cluster", "--context", "broken")
        assert broken.code == 1
        # a relative command is relative to the kubeconfig's directory, as in kubectl
        assert str(tmp_path / "bin" / "no-such-plugin") in broken.err
        assert "(install it)" in broken.err
