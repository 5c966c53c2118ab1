"""The processes of :class:`kuberay.testing.envtest.ControlPlane`: how each is started and
when it counts as ready.

etcd and kube-apiserver always; in full mode, a small cluster without kubelets:
kube-controller-manager (garbage collector, namespace, Job, ReplicaSet/Deployment,
service-account and endpoint controllers, ...), kube-scheduler, and kwok managing fake nodes
(``kwok-node-0..``) whose stages (``hack/kwok/*.yaml``) make scheduled pods Running and Ready,
complete the pods of Jobs and finish graceful deletions.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from kuberay.testing._base import (
    CONTEXT_NAME,
    SERVICE_CLUSTER_IP_RANGE,
    ComponentSpec,
    ControlPlaneError,
    Plane,
)
from kuberay.testing.checkout import checkout_root
from kuberay.testing.pki import REAL_NODE_IP

ROOT = Path(__file__).resolve().parents[2]

# --------------------------------------------------------------- etcd + kube-apiserver


def _wait_etcd(cp: Plane, deadline: float) -> None:
    while True:
        cp._check_alive(ETCD.name)
        with (
            contextlib.suppress(OSError, ValueError),
            urllib.request.urlopen(f"{cp.etcd_url}/health", timeout=2) as r,
        ):
            if json.loads(r.read()).get("health") == "true":
                return
        if time.monotonic() > deadline:
            raise cp._timeout(ETCD.name, "healthy")
        time.sleep(0.1)


def _wait_apiserver(cp: Plane, deadline: float) -> None:
    ctx = cp.ssl_context()
    for path in ("/readyz", "/api/v1/namespaces/default"):
        while True:
            cp._check_alive(KUBE_APISERVER.name)
            with (
                contextlib.suppress(OSError, ValueError),
                urllib.request.urlopen(cp.server + path, timeout=5, context=ctx) as r,
            ):
                if r.status == 200:
                    break
            if time.monotonic() > deadline:
                raise cp._timeout(KUBE_APISERVER.name, f"answering {path}")
            time.sleep(0.2)


def _etcd_args(cp: Plane) -> list[str]:
    peer = f"http://127.0.0.1:{cp.etcd_peer_port}"
    return [
        "--name=kuberay-local",
        f"--data-dir={cp.etcd_data_dir}",
        f"--listen-client-urls={cp.etcd_url}",
        f"--advertise-client-urls={cp.etcd_url}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=kuberay-local={peer}",
        "--unsafe-no-fsync=true",
        f"--quota-backend-bytes={8 * 1024**3}",
        "--log-level=warn",
    ]


def _disabled_admission_plugins(cp: Plane) -> list[str]:
    # ServiceAccount stays off in full mode too (as in envtest): it rejects pods until the
    # serviceaccount controller has created the namespace's "default" ServiceAccount, so a
    # pod created right after its namespace would race the controller; nothing here needs
    # the token volume it would inject (kwok runs no containers).
    # A real node runs pods that talk to the API (CoreDNS, Ray's autoscaler, an in-cluster
    # operator): they need the token volume, so there it stays on.
    plugins = [] if cp.real_nodes else ["ServiceAccount"]
    if cp.full:
        # It taints new nodes node.kubernetes.io/not-ready and the node-lifecycle controller
        # (disabled, see KCM_DISABLED_CONTROLLERS) would lift that: fake nodes stay untainted.
        plugins.append("TaintNodesByCondition")
    return plugins


def _apiserver_args(cp: Plane) -> list[str]:
    assert cp.certs is not None
    c = cp.certs
    return [
        f"--etcd-servers={cp.etcd_url}",
        f"--secure-port={cp.apiserver_port}",
        # loopback only, real node or not: never reachable from another machine
        "--bind-address=127.0.0.1",
        # with a real node, pods reach the API through the kubernetes Service, whose endpoint
        # is the node's bridge address (the host side), where hack/cluster/apiserver_forward.py
        # (started by the real node) listens and pipes to 127.0.0.1
        *(
            [
                f"--advertise-address={REAL_NODE_IP}",
                # dial kubelets by InternalIP: a node name looked up in host DNS leaves the box
                "--kubelet-preferred-address-types=InternalIP",
            ]
            if cp.real_nodes
            else []
        ),
        f"--cert-dir={cp.dir / 'certs'}",
        f"--tls-cert-file={c.serving_cert}",
        f"--tls-private-key-file={c.serving_key}",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        "--allow-privileged=true",
        "--authorization-mode=RBAC",
        f"--disable-admission-plugins={','.join(_disabled_admission_plugins(cp))}",
        f"--service-account-issuer={cp.server}/",
        f"--service-account-key-file={c.sa_pub}",
        f"--service-account-signing-key-file={c.sa_key}",
        f"--client-ca-file={c.client_ca}",
        "--max-requests-inflight=2000",
        "--max-mutating-requests-inflight=1000",
        "--watch-cache=true",
        "--profiling=false",
        *cp.extra_apiserver_args,
    ]


ETCD = ComponentSpec("etcd", "etcd", _etcd_args, _wait_etcd)
KUBE_APISERVER = ComponentSpec("kube-apiserver", "kube-apiserver", _apiserver_args, _wait_apiserver)


# --------------------------------------------------------------- full mode

# full mode: kwok and its fake nodes
KWOK_STAGE_DIR = ROOT / "hack" / "kwok"
DEFAULT_FAKE_NODES = 4
FAKE_NODE_PREFIX = "kwok-node-"
FAKE_NODE_ANNOTATION = "kwok.x-k8s.io/node"  # kwok manages nodes annotated <this>=fake
FAKE_NODE_CAPACITY: dict[str, str] = {
    "cpu": "1000",
    "memory": "4Ti",
    "pods": "1000",
    "ephemeral-storage": "10Ti",
    "nvidia.com/gpu": "64",
    "google.com/tpu": "64",
}
FAKE_POD_CIDR = "10.244.0.0/16"  # pod IPs (kwok's default 10.0.0.1/24 overlaps services)
FAKE_NODE_IP_NET = ipaddress.ip_network("172.18.0.0/24")  # node i is .(i+2), kwok .1


# client identities: kube-controller-manager runs every controller under its own identity
# (--use-service-account-credentials=false), which the default RBAC role for
# system:kube-controller-manager does not cover, hence system:masters; the scheduler's
# default RBAC (system:kube-scheduler, system:volume-scheduler) is enough; kwok patches
# node/pod status, deletes pods and writes leases, so it is an admin too.
FULL_CLIENT_IDENTITIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "kube-controller-manager": ("system:kube-controller-manager", ("system:masters",)),
    "kube-scheduler": ("system:kube-scheduler", ()),
    "kwok": ("kwok-controller", ("system:masters",)),
}
COMPONENT_QPS = 500  # client-side rate limits of kcm and scheduler (defaults 20 and 50)
COMPONENT_BURST = 1000
KCM_DISABLED_CONTROLLERS = (
    "node-ipam-controller",  # no pod CIDRs per node: kwok hands out pod IPs from FAKE_POD_CIDR
    "node-lifecycle-controller",  # no not-ready taints or evictions for heartbeat hiccups
    "cloud-node-lifecycle-controller",  # no cloud provider ...
    "node-route-controller",
    "service-lb-controller",
    "persistentvolume-attach-detach-controller",  # ... and no volume plugins on fake nodes
    "certificatesigningrequest-signing-controller",  # no cluster signing CA
    "horizontal-pod-autoscaler-controller",  # no metrics API
)


def _controller_manager_args(cp: Plane) -> list[str]:
    assert cp.certs is not None and cp.certs.component_serving is not None
    kubeconfig = cp.component_kubeconfig(KUBE_CONTROLLER_MANAGER.name)
    return [
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        # no lookup of kube-system/extension-apiserver-authentication (it has no
        # request-header CA, which makes the lookup log errors): trust the client CA directly
        "--authentication-skip-lookup=true",
        f"--client-ca-file={cp.certs.client_ca}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--bind-address=127.0.0.1",
        f"--secure-port={cp.controller_manager_port}",
        f"--tls-cert-file={cp.certs.component_serving.cert}",
        f"--tls-private-key-file={cp.certs.component_serving.key}",
        "--leader-elect=false",
        "--use-service-account-credentials=false",
        f"--controllers=*,{','.join('-' + c for c in KCM_DISABLED_CONTROLLERS)}",
        f"--service-account-private-key-file={cp.certs.sa_key}",
        f"--root-ca-file={cp.certs.serving_ca}",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        f"--cluster-name={CONTEXT_NAME}",
        f"--kube-api-qps={COMPONENT_QPS}",
        f"--kube-api-burst={COMPONENT_BURST}",
        "--concurrent-job-syncs=10",
        "--concurrent-replicaset-syncs=10",
        "--profiling=false",
    ]


def _scheduler_args(cp: Plane) -> list[str]:
    assert cp.certs is not None and cp.certs.component_serving is not None
    kubeconfig = cp.component_kubeconfig(KUBE_SCHEDULER.name)
    return [
        f"--config={cp.components_dir / 'kube-scheduler.yaml'}",
        f"--authentication-kubeconfig={kubeconfig}",
        # no lookup of kube-system/extension-apiserver-authentication (it has no
        # request-header CA, which makes the lookup log errors): trust the client CA directly
        "--authentication-skip-lookup=true",
        f"--client-ca-file={cp.certs.client_ca}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--bind-address=127.0.0.1",
        f"--secure-port={cp.scheduler_port}",
        f"--tls-cert-file={cp.certs.component_serving.cert}",
        f"--tls-private-key-file={cp.certs.component_serving.key}",
        "--profiling=false",
    ]


def kwok_stage_dir() -> Path:
    """``hack/kwok`` of the source checkout in use (:func:`~kuberay.testing.checkout.
    checkout_root`), else :data:`KWOK_STAGE_DIR` (which an installed wheel lacks)."""
    root = checkout_root()
    return KWOK_STAGE_DIR if root is None else root / "hack" / "kwok"


def kwok_stage_files() -> list[Path]:
    """The Stage files kwok loads (``hack/kwok/*.yaml`` of :func:`kwok_stage_dir`, sorted;
    empty without them)."""
    return sorted(kwok_stage_dir().glob("*.yaml"))


def fake_node_ip(index: int) -> str:
    """The InternalIP of fake node ``index`` (in ``FAKE_NODE_IP_NET``)."""
    return str(FAKE_NODE_IP_NET.network_address + 2 + index)


def fake_node(name: str, index: int) -> dict[str, Any]:
    """A Node object for kwok: untainted, big capacity, an InternalIP (pods' hostIP)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {FAKE_NODE_ANNOTATION: "fake"},
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
            },
        },
        "spec": {},
        "status": {
            "capacity": dict(FAKE_NODE_CAPACITY),
            "allocatable": dict(FAKE_NODE_CAPACITY),
            "addresses": [
                {"type": "InternalIP", "address": fake_node_ip(index)},
                {"type": "Hostname", "address": name},
            ],
        },
    }


def _kwok_args(cp: Plane) -> list[str]:
    return [
        f"--kubeconfig={cp.component_kubeconfig(KWOK.name)}",
        f"--manage-nodes-with-annotation-selector={FAKE_NODE_ANNOTATION}=fake",
        *(f"--config={path}" for path in kwok_stage_files()),
        f"--server-address=127.0.0.1:{cp.kwok_port}",
        f"--node-ip={FAKE_NODE_IP_NET.network_address + 1}",
        f"--cidr={FAKE_POD_CIDR}",
    ]


def _kwok_env(cp: Plane) -> dict[str, str]:
    # kwok always loads ~/.kwok/kwok.yaml when it exists: keep the user's out of the way
    return {"HOME": str(cp.dir / "kwok-home")}


def write_component_configs(cp: Plane) -> None:
    """The components' kubeconfigs (one client cert each) and the scheduler's config file."""
    assert cp.certs is not None
    cp.components_dir.mkdir(parents=True, exist_ok=True)
    for name, pair in cp.certs.clients.items():
        cp._write_kubeconfig(cp.component_kubeconfig(name), pair.cert, pair.key)
    scheduler_config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {
            "kubeconfig": str(cp.component_kubeconfig(KUBE_SCHEDULER.name)),
            "qps": COMPONENT_QPS,
            "burst": COMPONENT_BURST,
        },
        "leaderElection": {"leaderElect": False},
    }
    (cp.components_dir / "kube-scheduler.yaml").write_text(
        yaml.safe_dump(scheduler_config, sort_keys=False)
    )
    (cp.dir / "kwok-home").mkdir(exist_ok=True)


def _wait_controller_manager(cp: Plane, deadline: float) -> None:
    name = KUBE_CONTROLLER_MANAGER.name
    url = f"https://127.0.0.1:{cp.controller_manager_port}/healthz"
    cp._wait_url(name, url, deadline, cp._serving_ca_context())
    # proof that controllers run: the serviceaccount controller made default/default
    while True:
        cp._check_alive(name)
        with contextlib.suppress(OSError, ValueError):
            cp.api("GET", "/api/v1/namespaces/default/serviceaccounts/default")
            return
        if time.monotonic() > deadline:
            raise cp._timeout(name, "creating the default ServiceAccount")
        time.sleep(0.2)


def _wait_scheduler(cp: Plane, deadline: float) -> None:
    url = f"https://127.0.0.1:{cp.scheduler_port}/readyz"
    cp._wait_url(KUBE_SCHEDULER.name, url, deadline, cp._serving_ca_context())


def _wait_kwok(cp: Plane, deadline: float) -> None:
    cp._wait_url(KWOK.name, f"http://127.0.0.1:{cp.kwok_port}/healthz", deadline)
    unready = list(cp.node_names)
    while True:
        cp._check_alive(KWOK.name)
        with contextlib.suppress(OSError, ValueError, KeyError):
            unready = cp.unready_nodes()
            if not unready:
                return
        if time.monotonic() > deadline:
            raise cp._timeout(KWOK.name, f"making nodes {', '.join(unready)} Ready")
        time.sleep(0.2)


def _create_fake_nodes(cp: Plane) -> None:
    """Create the Node objects kwok manages (existing ones are left alone)."""
    for index, name in enumerate(cp.node_names):
        try:
            cp.api("POST", "/api/v1/nodes", fake_node(name, index))
        except urllib.error.HTTPError as exc:
            if exc.code != 409:
                detail = exc.read().decode(errors="replace")
                raise ControlPlaneError(f"creating node {name}: {exc.code} {detail}") from None


KUBE_CONTROLLER_MANAGER = ComponentSpec(
    "kube-controller-manager",
    "kube-controller-manager",
    _controller_manager_args,
    _wait_controller_manager,
    before_start=_create_fake_nodes,
)
KUBE_SCHEDULER = ComponentSpec("kube-scheduler", "kube-scheduler", _scheduler_args, _wait_scheduler)
KWOK = ComponentSpec("kwok", "kwok", _kwok_args, _wait_kwok, env=_kwok_env)
FULL_COMPONENT_BINARIES = tuple(s.binary for s in (KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER, KWOK))
