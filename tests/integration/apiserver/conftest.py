"""Fixtures for the API server on the real apiserver: the server in this process on
127.0.0.1, ServiceAccount tokens, and Roles to grant them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kuberay.apiserver.options import CALLER, ApiServerOptions
from kuberay.apiserver.retry import RetryPolicy
from kuberay.apiserver.upstream import Upstream
from kuberay.kube import Client
from kuberay.kube.kubeconfig import load
from kuberay.kube.restconfig import RestConfig
from tests.apiserver_serving import api_server
from tests.chromium import Browser, require_chromium

StartServer = Callable[..., Awaitable[str]]


@pytest.fixture(scope="session")
async def browser(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Browser]:
    """One headless Chromium for every dashboard browser test (skipped without Chromium)."""
    require_chromium()
    async with Browser.start(tmp_path_factory.mktemp("chromium"), width=1280, height=800) as b:
        yield b


@pytest.fixture
async def start_apiserver(kubeconfig_path: Path) -> AsyncIterator[StartServer]:
    """Start an API server over the test apiserver; returns its base URL. Keyword arguments
    are :class:`ApiServerOptions` fields (``auth_mode`` defaults to caller), plus
    ``config`` (a RestConfig: default the admin kubeconfig) and ``policy``."""
    async with contextlib.AsyncExitStack() as servers:

        async def start(
            *, config: RestConfig | None = None, policy: RetryPolicy | None = None, **fields: Any
        ) -> str:
            options = ApiServerOptions(
                http_host="127.0.0.1", http_port=0, **{"auth_mode": CALLER, **fields}
            )
            upstream = Upstream(config or load(str(kubeconfig_path)))
            serving = api_server(options, upstream, wired=True, policy=policy, access_log=None)
            return await servers.enter_async_context(serving)

        yield start


async def service_account_token(kube: Client, namespace: str, name: str) -> str:
    """A 10-minute token of a new ServiceAccount ``name`` in ``namespace``."""
    await kube.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": name, "namespace": namespace},
        }
    )
    answer = await kube.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        verb="create",
        body={
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 600},
        },
    )
    return str(answer["status"]["token"])


async def grant(
    kube: Client, namespace: str, sa: str, rules: list[dict[str, Any]], *, sa_namespace: str = ""
) -> None:
    """A Role with ``rules`` in ``namespace``, bound to ServiceAccount ``sa``."""
    name = f"grant-{sa}"
    await kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": name, "namespace": namespace},
            "rules": rules,
        }
    )
    await kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": name, "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [
                {"kind": "ServiceAccount", "name": sa, "namespace": sa_namespace or namespace}
            ],
        }
    )
    await asyncio.sleep(0)  # RBAC takes effect at once on a single apiserver
