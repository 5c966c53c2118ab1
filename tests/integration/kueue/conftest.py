"""Fixtures: Kueue's CRDs (from its Go module, ``hack/build/fetch_crds.py kueue``) and the real
Kueue controller manager (``hack/build/build_kueue.py``) running against the session's apiserver;
the tests start our operator in-process per namespace (``start_operator``).

The Kueue binary is built on first use when the cache lacks it (``make test`` builds it
beforehand). The tests are skipped, with the reason, only when it cannot be built here (no Go,
or the module proxy unreachable) or Kueue's fixed metrics-certificate path cannot be written.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kuberay.kube import AlreadyExists, Client
from kuberay.testing.crds import install_crds
from tests.integration.kueue.process import (
    METRICS_CERT_DIR,
    KueueError,
    KueueProcess,
    ensure_metrics_certs,
)
from tests.integration.rayjob.conftest import operator

__all__ = ["operator"]


@pytest.fixture(scope="session")
def kueue_binary() -> Path:
    """The cached Kueue manager binary, built now if missing (skip if it cannot be)."""
    from hack.build import build_kueue

    try:
        return Path(build_kueue.build())
    except build_kueue.BuildError as exc:
        pytest.skip(f"Kueue {build_kueue.KUEUE_VERSION} cannot be built here: {exc}")


@pytest.fixture(scope="session")
async def kueue_crds(crds_installed: None, kubeconfig_path: Path) -> None:
    """Kueue's CRDs, installed once (and the ``kueue-system`` namespace it names)."""
    from hack.build import fetch_crds

    directory = Path(fetch_crds.fetch("kueue"))
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0)
    try:
        await install_crds(client, directory=directory)
        with contextlib.suppress(AlreadyExists):
            await client.create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kueue-system"}}
            )
    finally:
        await client.close()


@pytest.fixture(scope="session")
async def kueue(
    kueue_crds: None,
    kueue_binary: Path,
    kubeconfig_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[KueueProcess]:
    """The real Kueue controller manager, ready, for the whole session."""
    try:
        ensure_metrics_certs()
    except OSError as exc:
        pytest.skip(f"Kueue reads its metrics certificate from {METRICS_CERT_DIR}: {exc}")
    process = KueueProcess(kueue_binary, kubeconfig_path, tmp_path_factory.mktemp("kueue"))
    try:
        process.start()
    except KueueError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield process
    finally:
        process.stop()
