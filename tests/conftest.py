"""Shared pytest fixtures: a real local control plane (etcd + kube-apiserver) and clients.

* ``control_plane`` (session): a started ``kuberay.testing.envtest.ControlPlane``, or, when
  ``KUBERAY_TEST_KUBECONFIG`` is set, an ``ExistingCluster`` with just ``.kubeconfig``.
* ``kubeconfig_path`` (session): Path of the admin kubeconfig.
* ``api_client`` (function, async): a kubernetes_asyncio ApiClient, closed afterwards.
* ``namespace`` (function, async): a fresh ``t-<8 hex>`` namespace; deleted (not awaited)
  at teardown, since without kube-controller-manager namespaces never finish terminating.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

ROOT = Path(__file__).resolve().parents[1]
# the checkout's root: ``tests.*`` and the development scripts' package ``hack.*`` import from it
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

if TYPE_CHECKING:
    from kuberay.testing.envtest import ControlPlane

KUBECONFIG_ENV = "KUBERAY_TEST_KUBECONFIG"

#: Fails the run when a test's DNS question leaves the machine (see that module).
pytest_plugins = ["tests.egress_guard"]


@dataclass(frozen=True)
class ExistingCluster:
    """A cluster started elsewhere (``KUBERAY_TEST_KUBECONFIG``); only its kubeconfig."""

    kubeconfig: Path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    integration = ROOT / "tests" / "integration"
    for item in items:
        if Path(str(item.path)).is_relative_to(integration):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def control_plane(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ControlPlane | ExistingCluster]:
    existing = os.environ.get(KUBECONFIG_ENV)
    if existing:
        path = Path(existing).expanduser().resolve()
        if not path.is_file():
            pytest.fail(f"{KUBECONFIG_ENV}={existing}: no such file", pytrace=False)
        yield ExistingCluster(kubeconfig=path)
        return

    from kuberay.testing import envtest as controlplane

    cp = controlplane.ControlPlane(tmp_path_factory.mktemp("controlplane"))
    try:
        cp.start()
    except controlplane.BuildError as exc:
        pytest.fail(f"cannot build control-plane binaries: {exc}", pytrace=False)
    except controlplane.ControlPlaneError as exc:
        pytest.fail(f"control plane failed to start: {exc}", pytrace=False)
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def kubeconfig_path(control_plane: ControlPlane | ExistingCluster) -> Path:
    return control_plane.kubeconfig


@pytest.fixture
async def api_client(kubeconfig_path: Path) -> AsyncIterator[client.ApiClient]:
    cfg = client.Configuration()
    await config.load_kube_config(config_file=str(kubeconfig_path), client_configuration=cfg)
    api = client.ApiClient(cfg)
    try:
        yield api
    finally:
        await api.close()


@pytest.fixture
async def namespace(api_client: client.ApiClient) -> AsyncIterator[str]:
    name = f"t-{uuid.uuid4().hex[:8]}"
    core = client.CoreV1Api(api_client)
    await core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    try:
        yield name
    finally:
        try:
            await core.delete_namespace(name)
        except ApiException as exc:
            if exc.status != 404:
                raise
        except Exception:  # apiserver gone/restarting: nothing to clean up against
            pass
