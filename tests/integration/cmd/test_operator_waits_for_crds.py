"""The operator started together with its CRDs (Helm, GitOps, one ``kubectl apply``): it
waits for the kinds to be served, as controller-runtime does, instead of dying with a
traceback; and when they never come, it exits after ``--cache-sync-timeout`` with one
error line.

Each test runs its own bare control plane (etcd + kube-apiserver, about 5 s to start):
the shared one has the CRDs installed for the whole session."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from kuberay.kube import Client, NotFound
from kuberay.testing.crds import install_crds
from kuberay.testing.envtest import ControlPlane
from tests.conftest import KUBECONFIG_ENV
from tests.e2e.harness import OperatorProcess, cluster_pods, sample_raycluster
from tests.helpers import eventually


@pytest.fixture
def bare_control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A fresh apiserver without any CRD."""
    if os.environ.get(KUBECONFIG_ENV):
        pytest.skip("needs a control plane of its own (KUBERAY_TEST_KUBECONFIG is set)")
    cp = ControlPlane(tmp_path_factory.mktemp("bare-cp"))
    cp.start()
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture
async def bare_client(bare_control_plane: ControlPlane) -> AsyncIterator[Client]:
    client = await Client.from_kubeconfig(bare_control_plane.kubeconfig, qps=0, burst=1)
    try:
        yield client
    finally:
        await client.close()


def operator(cp: ControlPlane, log_dir: Path, *extra: str) -> OperatorProcess:
    return OperatorProcess(
        "operator",
        cp.kubeconfig,
        log_dir,
        lease_namespace="default",
        leader_election=False,
        extra_args=extra,
    )


async def test_operator_started_before_its_crds_comes_up_and_reconciles(
    bare_control_plane: ControlPlane, bare_client: Client, tmp_path: Path
) -> None:
    with pytest.raises(NotFound):
        await bare_client.resource("ray.io/v1", "RayCluster")
    op = operator(bare_control_plane, tmp_path).start()
    try:
        # It says what it waits for, and keeps running.
        await eventually(
            lambda: "waiting for the API server to serve a kind" in op.log_path.read_text(),
            timeout=60,
            message="the waiting log line",
        )
        await asyncio.sleep(3)  # the CRDs come a few seconds later
        assert op.alive, op.log_tail()
        assert await op.probe("/readyz") != 200
        await install_crds(bare_client)
        await op.wait_ready(timeout=120)
        await bare_client.create(sample_raycluster("late", "default", replicas=1))

        async def pods() -> int:
            found = await cluster_pods(bare_client, "default", "late")
            assert len(found) == 2, found
            return len(found)

        await eventually(pods, timeout=60, message="head and worker pods")
    finally:
        code = await op.terminate_async()
    log = op.log_path.read_text()
    assert code == 0, op.log_tail()
    assert "Traceback" not in log
    assert '"kind":"RayCluster"' in log  # the waiting line names the kind


async def test_operator_without_its_crds_exits_after_the_timeout_with_one_line(
    bare_control_plane: ControlPlane, tmp_path: Path
) -> None:
    op = operator(bare_control_plane, tmp_path, "--cache-sync-timeout=3s").start()
    began = time.monotonic()
    assert op.popen is not None
    code = await asyncio.to_thread(op.popen.wait, 120)
    waited = time.monotonic() - began
    log = op.log_path.read_text()
    assert code == 1, log
    assert waited >= 3, log  # not before the timeout
    assert "Traceback" not in log
    errors = [line for line in log.splitlines() if "\terror\t" in line]  # zap's console form
    assert len(errors) == 1, log
    (line,) = errors
    assert "cannot start; exiting (see --cache-sync-timeout)" in line
    assert "the API server does not serve kind" in line
    assert "of ray.io/v1 (is its CRD installed?); gave up after 3s" in line
