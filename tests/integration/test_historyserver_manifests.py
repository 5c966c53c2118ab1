"""The history server's manifests on a real kube-apiserver (server-side dry run, nothing
stored): manifests/historyserver (and its auth-token-mode Role) moved into a fresh
namespace, and the chart's rendering with ``historyServer.enabled``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kuberay.kube import Client
from tests.integration.test_manifests import (  # noqa: F401  (namespaces: a fixture)
    _move,
    dry_run_all,
    namespaces,
    needs_helm,
    render,
)
from tests.unit.manifests.manifests_expected import MANIFESTS, find, load_yaml_dir

HS_DIR = MANIFESTS / "historyserver"


async def test_plain_manifests_dry_run(kclient: Client, namespaces: Callable[[], Any]) -> None:  # noqa: F811
    ns = await namespaces()
    docs = [d for ds in load_yaml_dir(HS_DIR).values() for d in ds]
    applied = await dry_run_all(kclient, _move(docs, ns))
    assert applied == {
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
        "Service",
        "ConfigMap",
        "Secret",
    }
    auth = [d for ds in load_yaml_dir(HS_DIR / "auth_token_mode").values() for d in ds]
    for doc in auth:
        doc["metadata"]["namespace"] = ns  # what `kubectl apply -n <ns>` does
    assert await dry_run_all(kclient, _move(auth, ns)) == {"Role", "RoleBinding"}


@needs_helm
async def test_chart_with_the_history_server_dry_run(
    kclient: Client,
    namespaces: Callable[[], Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    ns, other = await namespaces(), await namespaces()
    values = {
        "historyServer": {
            "enabled": True,
            "authTokenMode": {"enabled": True, "namespaces": [other]},
            "storage": {"envFrom": [{"secretRef": {"name": "historyserver-storage"}}]},
        }
    }
    objs = render(values, ns, tmp_path)
    applied = await dry_run_all(kclient, objs)
    assert {"Deployment", "Service", "ClusterRole", "Role", "RoleBinding"} <= applied
    assert find(objs, "Role", "historyserver-secret-reader")["metadata"]["namespace"] == other
