"""End-to-end fixtures: a full cluster, the operator's own identity, operator processes.

* ``e2e_cluster`` (session): ``ControlPlane(full=True)`` (kube-controller-manager,
  scheduler, kwok fake nodes whose pods become Running/Ready) in a tmp dir, or the
  cluster ``KUBERAY_TEST_KUBECONFIG`` names (a throwaway one: namespaces and
  ClusterRoles are created there). ``needs_local_cluster`` skips what needs ours.
* ``admin`` (session): kuberay's client as cluster admin (for the tests, never the
  operator).
* ``operator_identity`` (session): CRDs installed; a fresh operator namespace with the
  ServiceAccount ``kuberay-operator``, the RBAC from ``manifests/rbac`` and a kubeconfig
  holding a TokenRequest token for that ServiceAccount.
* ``start_operator`` (function): starts ``kuberay-operator`` processes with that
  kubeconfig; stopped (SIGTERM) at teardown. On a failed test the log tail of every
  operator that ran during it is added to the report.
* ``ns`` (function): a fresh namespace for the test's RayClusters.
* ``real_cluster`` / ``real_admin`` / ``real_identity`` (session): ONE real-node cluster
  (``ControlPlane(full=True, real_nodes=1, real_nodes_only=True)``) shared by every
  real-node module, its admin client, and the operator's ServiceAccount identity there
  (see ``realcluster.py``); ``rns`` (function): a fresh namespace on it. Started only when
  a real-node test runs; one real node per machine (a second waits for the node lock).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kuberay.kube import Client, KubeError, NotFound
from kuberay.testing.crds import install_crds
from tests.e2e.harness import (
    TIMINGS,
    OperatorProcess,
    place_rbac,
    rbac_documents,
    request_token,
    write_token_kubeconfig,
)
from tests.e2e.realcluster import (
    RealCluster,
    RealIdentity,
    find_kubectl,
    real_namespace,
)
from tests.e2e.realcluster import (
    operator_identity as make_real_identity,
)

if TYPE_CHECKING:
    from kuberay.testing.envtest import ControlPlane

KUBECONFIG_ENV = "KUBERAY_TEST_KUBECONFIG"
TIMEOUT_SCALE_ENV = "KUBERAY_E2E_TIMEOUT_SCALE"
_ALL_OPERATORS: list[OperatorProcess] = []
_TEST_STARTED = pytest.StashKey[float]()


@dataclass
class E2ECluster:
    """The cluster under test: its admin kubeconfig, and our ControlPlane if we run it."""

    kubeconfig: Path
    workdir: Path
    control_plane: ControlPlane | None = None
    timeout_scale: float = 1.0

    @property
    def local(self) -> bool:
        return self.control_plane is not None

    def timeout(self, seconds: float) -> float:
        """A timeout tuned for the local cluster, stretched for an existing one."""
        return seconds * self.timeout_scale


@dataclass
class OperatorIdentity:
    """Where the operator's ServiceAccount lives and the kubeconfig that acts as it."""

    namespace: str
    kubeconfig: Path
    rbac_source: Path
    username: str
    applied: list[dict[str, Any]] = field(default_factory=list)


# --------------------------------------------------------------------------- hooks


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: operator process against a full cluster")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    for item in items:
        if Path(str(item.path)).is_relative_to(here):
            item.add_marker(pytest.mark.e2e)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_TEST_STARTED] = time.monotonic()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if not report.failed:
        return
    began = item.stash.get(_TEST_STARTED, 0.0)
    for op in _ALL_OPERATORS:
        if op.popen is not None and (op.stopped_at is None or op.stopped_at >= began):
            report.sections.append(
                (f"operator {op.name} (pid {op.pid}) log tail: {op.log_path}", op.log_tail())
            )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TIMINGS:
        return
    terminalreporter.section("e2e timings (seconds)")
    for name, values in TIMINGS.items():
        shown = ", ".join(f"{v:.2f}" for v in values)
        terminalreporter.write_line(f"{name}: {shown}")


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def e2e_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[E2ECluster]:
    workdir = tmp_path_factory.mktemp("e2e")
    existing = os.environ.get(KUBECONFIG_ENV)
    if existing:
        path = Path(existing).expanduser().resolve()
        if not path.is_file():
            pytest.fail(f"{KUBECONFIG_ENV}={existing}: no such file", pytrace=False)
        scale = float(os.environ.get(TIMEOUT_SCALE_ENV) or 10.0)
        yield E2ECluster(kubeconfig=path, workdir=workdir, timeout_scale=scale)
        return

    from kuberay.testing import envtest as controlplane

    cp = controlplane.ControlPlane(workdir / "cluster", full=True)
    began = time.monotonic()
    try:
        cp.start()
    except controlplane.BuildError as exc:
        pytest.fail(f"cannot build control-plane binaries: {exc}", pytrace=False)
    except controlplane.ControlPlaneError as exc:
        pytest.fail(f"full control plane failed to start: {exc}", pytrace=False)
    TIMINGS.setdefault("full cluster start", []).append(time.monotonic() - began)
    scale = float(os.environ.get(TIMEOUT_SCALE_ENV) or 1.0)
    try:
        yield E2ECluster(
            kubeconfig=cp.kubeconfig, workdir=workdir, control_plane=cp, timeout_scale=scale
        )
    finally:
        cp.stop()


@pytest.fixture
def needs_local_cluster(e2e_cluster: E2ECluster) -> ControlPlane:
    """The local ControlPlane; skips on a cluster given through KUBERAY_TEST_KUBECONFIG."""
    if e2e_cluster.control_plane is None:
        pytest.skip(f"needs the local control plane (unset {KUBECONFIG_ENV})")
    return e2e_cluster.control_plane


@pytest.fixture(scope="session")
async def admin(e2e_cluster: E2ECluster) -> AsyncIterator[Client]:
    client = await Client.from_kubeconfig(e2e_cluster.kubeconfig, qps=0, burst=1)
    try:
        yield client
    finally:
        await client.close()


async def _create_namespace(admin: Client, prefix: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


async def _delete_quietly(
    admin: Client, api_version: str, kind: str, name: str, namespace: str | None = None
) -> None:
    with contextlib.suppress(NotFound, KubeError):
        await admin.delete(api_version, kind, name, namespace)


@pytest.fixture(scope="session")
async def operator_identity(
    e2e_cluster: E2ECluster, admin: Client
) -> AsyncIterator[OperatorIdentity]:
    await install_crds(admin)
    namespace = await _create_namespace(admin, "kuberay-e2e")
    docs, source = rbac_documents()
    # on someone else's cluster, never overwrite an installed operator's ClusterRoles
    suffix = "" if e2e_cluster.local else f"-{namespace}"
    placed = place_rbac(docs, namespace, cluster_suffix=suffix)
    kinds = {d["kind"] for d in placed}
    assert {"ServiceAccount", "ClusterRole", "ClusterRoleBinding"} <= kinds, (
        f"RBAC from {source} lacks the operator's ServiceAccount/ClusterRole/Binding: {kinds}"
    )
    applied: list[dict[str, Any]] = []
    try:
        for doc in placed:
            await admin.apply(doc, field_manager="kuberay-e2e", force=True)
            applied.append(doc)
        token = await request_token(admin, namespace)
        kubeconfig = write_token_kubeconfig(
            e2e_cluster.workdir / "operator.kubeconfig", admin, token
        )
        yield OperatorIdentity(
            namespace=namespace,
            kubeconfig=kubeconfig,
            rbac_source=source,
            username=f"system:serviceaccount:{namespace}:kuberay-operator",
            applied=applied,
        )
    finally:
        for doc in applied:
            if doc["kind"] in ("ClusterRole", "ClusterRoleBinding"):
                await _delete_quietly(
                    admin, doc["apiVersion"], doc["kind"], doc["metadata"]["name"]
                )
        await _delete_quietly(admin, "v1", "Namespace", namespace)


OperatorStarter = Callable[..., OperatorProcess]


def _operator_starter(
    e2e_cluster: E2ECluster, identity: OperatorIdentity, started: list[OperatorProcess]
) -> OperatorStarter:
    def start(
        name: str,
        *,
        leader_election: bool = True,
        extra_args: Sequence[str] = (),
    ) -> OperatorProcess:
        op = OperatorProcess(
            f"{name}-{len(_ALL_OPERATORS)}",
            identity.kubeconfig,
            e2e_cluster.workdir / "operators",
            lease_namespace=identity.namespace,
            leader_election=leader_election,
            extra_args=extra_args,
        )
        _ALL_OPERATORS.append(op)
        started.append(op)
        return op.start()

    return start


def _stop_all(started: list[OperatorProcess]) -> None:
    for op in started:
        if op.alive and op.popen is not None:
            op.popen.send_signal(signal.SIGTERM)  # all first: they drain in parallel
    for op in started:
        op.terminate()


@pytest.fixture
def start_operator(
    e2e_cluster: E2ECluster, operator_identity: OperatorIdentity
) -> Iterator[OperatorStarter]:
    """``start_operator(name, leader_election=True, extra_args=())`` -> a started process."""
    started: list[OperatorProcess] = []
    try:
        yield _operator_starter(e2e_cluster, operator_identity, started)
    finally:
        _stop_all(started)


@pytest.fixture(scope="module")
async def shared_operator(
    e2e_cluster: E2ECluster, operator_identity: OperatorIdentity
) -> AsyncIterator[OperatorProcess]:
    """One operator (leader election on) for every test of a module; SIGTERM at the end."""
    started: list[OperatorProcess] = []
    op = _operator_starter(e2e_cluster, operator_identity, started)("shared")
    try:
        await op.wait_ready(e2e_cluster.timeout(60))
        leading = await op.wait_leading(e2e_cluster.timeout(60))
        TIMINGS.setdefault("operator start -> leading (free lease)", []).append(leading)
        yield op
    finally:
        _stop_all(started)


@pytest.fixture
async def ns(admin: Client) -> AsyncIterator[str]:
    name = await _create_namespace(admin, "e2e")
    try:
        yield name
    finally:
        await _delete_quietly(admin, "v1", "Namespace", name)


# --------------------------------------------------------------------------- real node


@pytest.fixture(scope="session")
def real_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealCluster]:
    """The real-node cluster every real-node module shares (started once per session)."""
    if os.geteuid() != 0:
        pytest.skip("a real node needs root")
    from kuberay.testing import envtest as controlplane

    cp = controlplane.ControlPlane(
        tmp_path_factory.mktemp("real-node") / "cluster",
        full=True,
        real_nodes=1,
        real_nodes_only=True,
        start_timeout=300,
    )
    began = time.monotonic()
    cp.start()
    TIMINGS.setdefault("real-node cluster start", []).append(time.monotonic() - began)
    for name, seconds in cp.real_node.timings.items():
        TIMINGS.setdefault(f"real node: {name}", []).append(seconds)
    try:
        yield RealCluster(cp, find_kubectl())
    finally:
        cp.stop()


@pytest.fixture(scope="session")
async def real_admin(real_cluster: RealCluster) -> AsyncIterator[Client]:
    client = await Client.from_kubeconfig(real_cluster.kubeconfig, qps=0, burst=1)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture(scope="session")
async def real_identity(real_cluster: RealCluster, real_admin: Client) -> RealIdentity:
    """CRDs, the operator's ServiceAccount + shipped RBAC, its token kubeconfig."""
    return await make_real_identity(real_admin, real_cluster.cp.dir.parent)


@pytest.fixture
async def rns(real_admin: Client) -> AsyncIterator[str]:
    name = await real_namespace(real_admin, "real")
    try:
        yield name
    finally:
        await _delete_quietly(real_admin, "v1", "Namespace", name)
