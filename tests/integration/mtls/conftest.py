"""Fixtures: cert-manager's CRDs (from its Go module, see ``hack/build/fetch_cert_manager.py``) and
the RayCluster + mTLS controllers running in-process against the real apiserver.

Most tests run no cert-manager controller: they issue certificates with
:mod:`.fake_cert_manager` (which can produce the failure paths the real one cannot be made
to). ``real_cert_manager`` runs cert-manager's real controller
(``hack/build/build_cert_manager.py``) scoped to the test's namespace; its tests are skipped, with
the reason, only when the binary is not built (and no build is under way) and
``KUBERAY_REQUIRE_CERT_MANAGER`` is unset; with it set, a missing binary is built and a
failed build fails the test."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kuberay.kube import Client
from kuberay.testing.crds import install_crds
from tests.cert_manager_process import (
    CertManagerError,
    CertManagerProcess,
    binary_or_skip,
    crd_dir,
)
from tests.integration import operator_harness as harness
from tests.integration.operator_harness import Operator


@pytest.fixture(scope="session")
def cert_manager_binary() -> Path:
    """The cached cert-manager controller binary (see the module docstring for when the
    tests using it are skipped instead)."""
    return binary_or_skip()


@pytest.fixture
def real_cert_manager(
    cert_manager_binary: Path,  # first: a skip needs no control plane
    cert_manager_crds: None,
    kubeconfig_path: Path,
    namespace: str,
    tmp_path: Path,
) -> Iterator[CertManagerProcess]:
    """cert-manager's real controller, started, watching only the test's namespace."""
    process = CertManagerProcess(cert_manager_binary, kubeconfig_path, tmp_path, namespace)
    try:
        process.start()
    except CertManagerError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="session")
async def cert_manager_crds(crds_installed: None, kubeconfig_path: Any) -> None:
    directory = crd_dir()
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0)
    try:
        await install_crds(client, directory=directory)
    finally:
        await client.close()


MTLSOperator = Operator


def start_mtls_operator(
    client: Client, namespace: str, *, cert_manager: bool = True, **mtls: Any
) -> contextlib.AbstractAsyncContextManager[Operator]:
    """The RayCluster controller and (when cert-manager is there) the mTLS controller, with
    ``RayClusterMTLS`` on; ``mtls`` go to the mTLS controller."""
    return harness.start_operator(
        client,
        namespace,
        kinds=("raycluster", "mtls") if cert_manager else ("raycluster",),
        gates="RayClusterMTLS=true",
        raycluster={"cert_manager_available": cert_manager},
        mtls=mtls,
    )
