"""An apiserver that serves ``scheduling.k8s.io/v1alpha2`` (the KubernetesWAS gate's API):
kube-apiserver v1.36 serves it only when asked, so this directory runs its own control
plane with :data:`WAS_APISERVER_ARGS` (``kubeconfig_path`` is overridden here, so the
shared ``kclient`` / ``namespace`` fixtures talk to it). With ``KUBERAY_TEST_KUBECONFIG``
the tests run against that cluster when it serves the API, and are skipped otherwise."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kuberay.controllers.batchscheduler.kubernetes_was import unavailable_reason
from kuberay.kube import Client
from kuberay.testing.crds import install_crds

#: the alpha API and the feature gate behind both its objects and ``Pod.spec.schedulingGroup``
WAS_APISERVER_ARGS = (
    "--runtime-config=scheduling.k8s.io/v1alpha2=true",
    "--feature-gates=GenericWorkload=true,GangScheduling=true",
)


@pytest.fixture(scope="session")
def was_control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    existing = os.environ.get("KUBERAY_TEST_KUBECONFIG")
    if existing:
        yield Path(existing).expanduser().resolve()
        return
    from kuberay.testing import envtest as controlplane

    cp = controlplane.ControlPlane(
        tmp_path_factory.mktemp("was-controlplane"), extra_apiserver_args=WAS_APISERVER_ARGS
    )
    try:
        cp.start()
    except (controlplane.BuildError, controlplane.ControlPlaneError) as exc:
        pytest.fail(f"control plane with scheduling.k8s.io/v1alpha2 failed: {exc}", pytrace=False)
    try:
        yield cp.kubeconfig
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def kubeconfig_path(was_control_plane: Path) -> Path:
    return was_control_plane


@pytest.fixture(scope="session")
async def was_crds(kubeconfig_path: Any) -> None:
    """Ray CRDs installed; skip when the cluster does not serve the WAS API."""
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0)
    try:
        reason = await unavailable_reason(client)
        if reason:
            pytest.skip(f"KUBERAY_TEST_KUBECONFIG cluster: {reason}")
        await install_crds(client, timeout=180)
    finally:
        await client.close()
