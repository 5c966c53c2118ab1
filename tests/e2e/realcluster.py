"""The real-node cluster shared by the real-node e2e modules (fixtures in conftest.py).

* :class:`RealCluster`: ``ControlPlane(full=True, real_nodes=1, real_nodes_only=True)`` and
  a kubectl for it;
* :func:`real_namespace`: a namespace whose ``default`` ServiceAccount exists (pods wait
  for it: the ServiceAccount admission plugin is on with a real node);
* :class:`RealIdentity` / :func:`operator_identity`: the operator's ServiceAccount with the
  shipped RBAC and a token kubeconfig, so every module's host operator acts as it would
  in a pod;
* :data:`DASHBOARD_NETWORKS`: what a host operator must be allowed to dial to reach the
  real node's Ray dashboards (loopback and the node's pod network);
* :func:`host_operator`: kuberay-operator on the host with that identity and those networks;
* :func:`diagnose_namespace` / :func:`wait_for`: bounded polls that fail with the owner's
  status, the namespace's Events, pods and log tails.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kuberay.kube import Client, NotFound
from kuberay.testing.crds import install_crds
from tests.e2e.harness import (
    OperatorProcess,
    place_rbac,
    rbac_documents,
    request_token,
    write_token_kubeconfig,
)

ROOT = Path(__file__).resolve().parents[2]
POD_CIDR = "10.250.0.0/24"  # = hack/realnode.POD_CIDR (checked in test_rayjob_real.py)
#: ``KUBERAY_DASHBOARD_ALLOWED_NETWORKS`` for an operator on the host of the real node.
DASHBOARD_NETWORKS = f"127.0.0.0/8,{POD_CIDR}"
ALLOWED_ENV = "KUBERAY_DASHBOARD_ALLOWED_NETWORKS"


class RealCluster:
    """A started real-node control plane and the kubectl to talk to it."""

    def __init__(self, cp: Any, kubectl: Path) -> None:
        self.cp = cp
        self.kubeconfig: Path = cp.kubeconfig
        self.kubectl_path = kubectl

    def kubectl(self, *args: str, timeout: float = 60, check: bool = True) -> str:
        """``kubectl ARGS`` against the cluster; stdout (asserts success when ``check``)."""
        done = subprocess.run(
            [str(self.kubectl_path), f"--kubeconfig={self.kubeconfig}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check:
            assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}{done.stdout}"
        return done.stdout


def find_kubectl() -> Path:
    """hack/cluster/kubectl.py's kubectl (installed into the venv when missing)."""
    from hack.cluster import kubectl

    found: Path | None = kubectl.find_kubectl(install=True)
    assert found is not None, "no kubectl (hack/cluster/kubectl.py found none nor installed one)"
    return found


async def real_namespace(admin: Client, prefix: str) -> str:
    """A fresh namespace whose ``default`` ServiceAccount exists."""
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    deadline = time.monotonic() + 30
    while True:
        try:
            await admin.get("v1", "ServiceAccount", "default", name)
            return name
        except NotFound:
            assert time.monotonic() < deadline, f"no default ServiceAccount in {name}"
            await asyncio.sleep(0.2)


@dataclass(frozen=True)
class RealIdentity:
    """The operator's namespace (its ServiceAccount and Lease) and token kubeconfig."""

    namespace: str
    kubeconfig: Path


async def operator_identity(admin: Client, workdir: Path) -> RealIdentity:
    """CRDs installed; the operator's ServiceAccount and shipped RBAC in a fresh namespace
    (ClusterRoles suffixed: the Helm test installs the chart's under the shipped names)."""
    await install_crds(admin, timeout=240)  # a loaded machine: slow establishment
    namespace = await real_namespace(admin, "kuberay-real")
    docs, _ = rbac_documents()
    for doc in place_rbac(docs, namespace, cluster_suffix=f"-{namespace}"):
        await admin.apply(doc, field_manager="kuberay-e2e", force=True)
    token = await request_token(admin, namespace)
    kubeconfig = write_token_kubeconfig(workdir / "operator.kubeconfig", admin, token)
    return RealIdentity(namespace=namespace, kubeconfig=kubeconfig)


@contextlib.asynccontextmanager
async def host_operator(
    name: str,
    cluster: RealCluster,
    identity: RealIdentity,
    *,
    leader_election: bool = True,
    extra_args: Sequence[str] = (),
    allow_pod_network: bool = True,
) -> AsyncIterator[OperatorProcess]:
    """kuberay-operator on the host as ``identity`` (with ``extra_args``, e.g. feature
    gates), allowed to dial the real node's pod network (``allow_pod_network`` False: only
    loopback, the default, so dashboards are reached through the apiserver's proxy); ready
    (and leading, with leader election) before it is yielded."""
    op = OperatorProcess(
        name,
        identity.kubeconfig,
        cluster.cp.dir.parent / "operators",
        lease_namespace=identity.namespace,
        leader_election=leader_election,
        env={ALLOWED_ENV: DASHBOARD_NETWORKS} if allow_pod_network else {},
        extra_args=extra_args,
    ).start()
    try:
        await op.wait_ready(60)
        if leader_election:
            await op.wait_leading(60)
        yield op
    finally:
        op.terminate()


async def diagnose_namespace(
    admin: Client,
    cluster: RealCluster,
    ns: str,
    kind: str,
    name: str,
    *,
    endpoint_slices: bool = False,
) -> str:
    """``kind`` ``ns/name``'s status, the namespace's Events, pods (and EndpointSlices) and
    every pod's log tail: what a failed wait prints."""
    parts: list[str] = []
    try:
        obj = await admin.get("ray.io/v1", kind, name, ns)
        parts.append(f"{kind} status: " + json.dumps(obj.get("status"), indent=1))
    except NotFound:
        parts.append(f"{kind} {ns}/{name}: not found")
    parts.append(
        "Events:\n" + cluster.kubectl("-n", ns, "get", "events", "--sort-by=.lastTimestamp")
    )
    parts.append(
        "Pods:\n"
        + cluster.kubectl("-n", ns, "get", "pods", "-o", "wide", "--show-labels", check=False)
    )
    if endpoint_slices:
        parts.append(
            "EndpointSlices:\n" + cluster.kubectl("-n", ns, "get", "endpointslices", check=False)
        )
    pods, _ = await admin.list_all("v1", "Pod", ns)
    for pod in pods:
        pod_name = pod["metadata"]["name"]
        logs = cluster.kubectl(
            "-n", ns, "logs", pod_name, "--all-containers", "--tail=30", check=False
        )
        parts.append(f"--- logs of {pod_name}:\n{logs}")
    return "\n".join(parts)


async def wait_for(
    what: str,
    check: Callable[[], Awaitable[Any]],
    timeout: float,
    explain: Callable[[], Awaitable[str]],
) -> Any:
    """Poll ``check`` every second until truthy and return it; on timeout fail with
    ``explain()``."""
    deadline = time.monotonic() + timeout
    while True:
        result = await check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f}s\n{await explain()}")
        await asyncio.sleep(1)
