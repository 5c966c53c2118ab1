"""A real node for the local cluster: containerd + runc, CNI bridge, kubelet, kube-proxy, CoreDNS.

Used by ``hack/controlplane.py`` (``ControlPlane(full=True, real_nodes=1)``, ``up --real-nodes 1``);
not run on its own. Everything lives in the control plane's work dir (``DIR/node``) except what
the kernel makes global, which is set up on start and removed on stop:

* the bridge ``kuberay0`` (``NODE_IP``/24, the node's InternalIP and the pods' gateway) for the
  pod CIDR ``POD_CIDR``; the service CIDR is routed onto it too, so a ClusterIP nobody serves
  stays on the bridge instead of taking the default route;
* ``unreachable`` routes for kwok's fake pod and node ranges (dialling them fails at once);
* a FORWARD rule rejecting anything from the pod CIDR that would leave through another
  interface, and ``net.ipv4.ip_forward=1`` (restored on stop);
* an INPUT rule dropping packets for the pod CIDR (the bridge address) that arrive from
  neither loopback nor the bridge: what listens there (the kubelet, the apiserver forwarder)
  answers only this machine and its pods;
* ``hack/cluster/apiserver_forward.py`` on ``NODE_IP:<apiserver port>``: the ``kubernetes``
  Service's endpoint, piped to the loopback-only kube-apiserver;
* kube-proxy's iptables chains (``kube-proxy --cleanup`` on stop); the kubelet's ``/kubepods``
  cgroups and ``/var/log/containers`` links; mounts under ``DIR/node``.

No packet leaves the machine: containerd never pulls (images are imported from
``hack/release/images.py``'s archives; a pull goes to a closed local "proxy", ``NO_PULL_PROXY``),
CoreDNS has no ``forward`` plugin, pods resolve with an empty host resolv.conf, and pod
traffic can only reach the bridge and the host itself.

One real node per machine (bridge name, iptables chains and pod CIDR are global): a second
cluster with a real node waits on ``LOCK_FILE``.

Pods land on the real node when they tolerate its taint and select its label
(``REAL_NODE_LABEL``), or on a cluster started with ``real_nodes_only`` (no fake nodes, no taint).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import yaml

from hack import node_deps
from hack.cluster.node_dns import coredns_objects
from hack.cluster.node_host import (
    BRIDGE,
    CLUSTER_DNS_IP,
    CLUSTER_DOMAIN,
    FWD_CHAIN,
    IN_CHAIN,
    IP_FORWARD,
    IP_FORWARD_SAVED,
    KWOK_RANGES,
    LOCK_FILE,
    NODE_IP,
    POD_CIDR,
    REAL_NODE_LABEL,
    REAL_NODE_NAME,
    RUN_DIR,
    SERVICE_CIDR,
    RealNodeError,
    _cleanup_leftovers,
    _remove_fwd_chain,
    _remove_in_chain,
    _remove_netns,
    _remove_veths,
    _restore_ip_forward,
    _sh,
    _unmount_under,
    cleanup_after_stop,
    containerd_root,
)
from hack.cluster.node_host import cleanup_leftovers as cleanup_leftovers  # hack/controlplane.py
from hack.release import images

HACK = Path(__file__).resolve().parents[1]


# containerd never pulls: every registry request goes to a closed local port (through a
# proxy the registry's name is never even looked up), so a missing image fails at once
NO_PULL_PROXY = "http://127.0.0.1:9"
NO_PULL_ENV = {
    "HTTP_PROXY": NO_PULL_PROXY,
    "HTTPS_PROXY": NO_PULL_PROXY,
    "http_proxy": NO_PULL_PROXY,
    "https_proxy": NO_PULL_PROXY,
    "NO_PROXY": "",
    "no_proxy": "",
}


def _load_prctl() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()


def _die_with_parent() -> None:
    _PRCTL(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class _Proc:
    def __init__(self, name: str, argv: list[str], log: Path, env: dict[str, str] | None) -> None:
        self.name = name
        self.log_path = log
        self.log: IO[bytes] = log.open("ab")
        main_thread = threading.current_thread() is threading.main_thread()
        self.popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=None if env is None else {**os.environ, **env},
            start_new_session=True,
            # SIGTERM when we die (from the main thread only: PDEATHSIG follows the thread)
            preexec_fn=_die_with_parent if main_thread and _PRCTL is not None else None,
        )

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = 15.0) -> None:
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.log.close()


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


class RealNode:
    """One kubelet node on this machine. ``cp`` is the (full) ControlPlane it joins."""

    def __init__(self, cp: Any, *, tainted: bool, timeout: float = 180.0) -> None:
        self.cp = cp
        self.tainted = tainted
        self.timeout = timeout
        self.name = REAL_NODE_NAME
        self.dir: Path = cp.dir / "node"
        self.procs: dict[str, _Proc] = {}
        self.timings: dict[str, float] = {}
        self._lock_fd: int | None = None
        self._undo: list[Callable[[], None]] = []

    # ------------------------------------------------------------------ paths
    @property
    def containerd_socket(self) -> Path:
        return RUN_DIR / "containerd.sock"

    def ctr(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return _sh(
            "ctr", "--address", str(self.containerd_socket), "-n", "k8s.io", *args, check=check
        )

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        began = time.monotonic()
        try:
            node_deps.ensure()
            t0 = time.monotonic()
            archives = images.ensure(images.NODE_IMAGES)
            archives["coredns"] = images.build_coredns(self.cp.binary("coredns"))
            self.timings["images"] = time.monotonic() - t0
            self._acquire_lock()
            self.dir.mkdir(parents=True, exist_ok=True)
            self._network_up()
            self._start_apiserver_forward()
            self._start_containerd()
            t0 = time.monotonic()
            self.import_images(archives)
            self.timings["image-import"] = time.monotonic() - t0
            self._start_kubelet()
            self._start_kube_proxy()
            self._deploy_coredns()
        except BaseException:
            self.stop()
            raise
        self.timings["total"] = time.monotonic() - began

    def stop(self) -> None:
        if self._lock_fd is None:  # never got the node lock: nothing here is ours to undo
            return
        for name in ("kube-proxy", "kubelet", "apiserver-forward"):
            proc = self.procs.pop(name, None)
            if proc is not None:
                proc.stop()
        self._remove_pods()
        proc = self.procs.pop("containerd", None)
        if proc is not None:
            proc.stop()
        _remove_netns()
        for fn in reversed(self._undo):
            with contextlib.suppress(Exception):
                fn()
        self._undo.clear()
        cleanup_after_stop(self.dir)
        self._release_lock()

    # ------------------------------------------------------------------ lock
    def _acquire_lock(self) -> None:
        fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + 600
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise RealNodeError(f"another real node holds {LOCK_FILE}") from None
                time.sleep(1)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {self.cp.dir}\n".encode())
        self._lock_fd = fd
        # a previous run that died without cleaning up: remove what it left behind
        _cleanup_leftovers()

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # ------------------------------------------------------------------ network
    def _network_up(self) -> None:
        _sh("ip", "link", "add", BRIDGE, "type", "bridge")
        self._undo.append(lambda: _sh("ip", "link", "del", BRIDGE, check=False) and None)
        _sh("ip", "addr", "add", f"{NODE_IP}/24", "dev", BRIDGE)
        _sh("ip", "link", "set", BRIDGE, "up")
        # a ClusterIP nobody serves stays on the bridge (kube-proxy DNATs the served ones)
        _sh("ip", "route", "add", SERVICE_CIDR, "dev", BRIDGE)
        for cidr in KWOK_RANGES:
            _sh("ip", "route", "replace", "unreachable", cidr)
            self._undo.append(
                lambda c=cidr: _sh("ip", "route", "del", "unreachable", c, check=False) and None
            )
        # what listens on the bridge address (kubelet, the apiserver forwarder, NodePorts)
        # answers the host and the pods only: a packet for it from another interface (another
        # machine routing 10.250.0.0/24 to this one) is dropped
        _sh("iptables", "-N", IN_CHAIN)
        _sh("iptables", "-A", IN_CHAIN, "-i", "lo", "-j", "RETURN")
        _sh("iptables", "-A", IN_CHAIN, "-i", BRIDGE, "-j", "RETURN")
        _sh("iptables", "-A", IN_CHAIN, "-j", "DROP")
        _sh("iptables", "-I", "INPUT", "1", "-d", POD_CIDR, "-j", IN_CHAIN)
        self._undo.append(_remove_in_chain)
        # pods reach the bridge and the host, never another interface
        _sh("iptables", "-N", FWD_CHAIN)
        _sh("iptables", "-A", FWD_CHAIN, "-s", POD_CIDR, "!", "-o", BRIDGE, "-j", "REJECT")
        _sh("iptables", "-I", "FORWARD", "1", "-j", FWD_CHAIN)
        self._undo.append(_remove_fwd_chain)
        # the machine's own value is kept in a file, so that a run killed before restoring it
        # is undone by the next start (or `down`), never mistaken for the original
        if not IP_FORWARD_SAVED.exists():
            IP_FORWARD_SAVED.write_text(IP_FORWARD.read_text())
        IP_FORWARD.write_text("1\n")
        self._undo.append(_restore_ip_forward)
        bnf = Path("/proc/sys/net/bridge/bridge-nf-call-iptables")
        if bnf.exists():
            bnf.write_text("1\n")

    # ------------------------------------------------------------------ apiserver access
    def _start_apiserver_forward(self) -> None:
        """Pods' way to the loopback-only apiserver: ``NODE_IP:<port>`` (the ``kubernetes``
        Service's endpoint) piped to ``127.0.0.1:<port>`` (hack/cluster/apiserver_forward.py)."""
        port = self.cp.apiserver_port
        argv = [
            sys.executable,
            str(HACK / "cluster" / "apiserver_forward.py"),
            f"--listen={NODE_IP}:{port}",
            f"--to=127.0.0.1:{port}",
        ]
        self._spawn("apiserver-forward", argv)

        def listening() -> bool:
            with contextlib.suppress(OSError), socket.create_connection((NODE_IP, port), 1):
                return True
            return False

        self._wait("apiserver-forward", listening)

    # ------------------------------------------------------------------ containerd
    def _start_containerd(self) -> None:
        cni_dir = self.dir / "cni"
        (cni_dir / "net.d").mkdir(parents=True, exist_ok=True)
        (cni_dir / "ipam").mkdir(parents=True, exist_ok=True)
        conflist = {
            "cniVersion": "0.4.0",
            "name": "kuberay",
            "plugins": [
                {
                    "type": "bridge",
                    "bridge": BRIDGE,
                    "isGateway": True,
                    "ipMasq": False,
                    "hairpinMode": True,
                    "ipam": {
                        "type": "host-local",
                        "ranges": [[{"subnet": POD_CIDR, "gateway": NODE_IP}]],
                        "routes": [{"dst": "0.0.0.0/0"}],
                        "dataDir": str(cni_dir / "ipam"),
                    },
                },
                {"type": "portmap", "capabilities": {"portMappings": True}},
            ],
        }
        (cni_dir / "net.d" / "10-kuberay.conflist").write_text(json.dumps(conflist, indent=1))
        RUN_DIR.mkdir(parents=True, exist_ok=True)
        self._undo.append(lambda: shutil.rmtree(RUN_DIR, ignore_errors=True))
        root = containerd_root()
        root.mkdir(parents=True, exist_ok=True)
        cri = 'plugins."io.containerd.grpc.v1.cri"'
        config = f"""version = 2
root = "{root}"
state = "{RUN_DIR / "state"}"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "{self.containerd_socket}"
[ttrpc]
  address = "{RUN_DIR / "containerd.sock.ttrpc"}"
[plugins."io.containerd.internal.v1.opt"]
  path = "{root / "opt"}"
[{cri}]
  sandbox_image = "{images.PAUSE_IMAGE}"
  restrict_oom_score_adj = true
  enable_cdi = false
  [{cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [{cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [{cri}.cni]
    bin_dir = "{node_deps.cni_bin_dir()}"
    conf_dir = "{cni_dir / "net.d"}"
    max_conf_num = 1
"""
        (self.dir / "containerd.toml").write_text(config)
        t0 = time.monotonic()
        self._spawn(
            "containerd",
            ["containerd", "--config", str(self.dir / "containerd.toml")],
            env=NO_PULL_ENV,
        )
        self._wait("containerd", lambda: self.ctr("version", check=False).returncode == 0)
        self.timings["containerd"] = time.monotonic() - t0

    def import_images(self, archives: dict[str, Path]) -> None:
        """Import each archive once per containerd root (it persists, and imports are slow)."""
        record = containerd_root() / "kuberay-imported.json"
        try:
            done = set(json.loads(record.read_text()))
        except (OSError, ValueError):
            done = set()
        present = set(self.ctr("images", "ls", "-q").stdout.split())
        for archive in archives.values():
            tags = images.archive_tags(archive)
            if archive.name in done and all(t in present for t in tags):
                continue
            self.ctr("images", "import", str(archive))
            done.add(archive.name)
            record.write_text(json.dumps(sorted(done)))

    # ------------------------------------------------------------------ kubelet
    def _start_kubelet(self) -> None:
        kdir = self.dir / "kubelet"
        kdir.mkdir(parents=True, exist_ok=True)
        (self.dir / "pod-logs").mkdir(exist_ok=True)
        resolv = self.dir / "resolv.conf"  # pods with dnsPolicy Default: no upstream at all
        resolv.write_text("")
        kubeconfig = self.dir / "node.kubeconfig"
        self.cp._write_kubeconfig(kubeconfig, self.cp.certs.admin_cert, self.cp.certs.admin_key)
        healthz = self.cp._distinct_ports(1)[0]
        self.kubelet_healthz_port = healthz
        config = {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "failCgroupV1": False,
            "cgroupDriver": "cgroupfs",
            "failSwapOn": False,
            "containerRuntimeEndpoint": f"unix://{self.containerd_socket}",
            "address": NODE_IP,
            "port": 10250,
            "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1",
            "healthzPort": healthz,
            "authentication": {
                "anonymous": {"enabled": True},
                "webhook": {"enabled": False},
                "x509": {"clientCAFile": str(self.cp.certs.client_ca)},
            },
            "authorization": {"mode": "AlwaysAllow"},
            "clusterDNS": [CLUSTER_DNS_IP],
            "clusterDomain": CLUSTER_DOMAIN,
            "resolvConf": str(resolv),
            "podLogsDir": str(self.dir / "pod-logs"),
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "evictionHard": {
                "memory.available": "100Mi",
                "nodefs.available": "1%",
                "imagefs.available": "1%",
                "nodefs.inodesFree": "1%",
            },
            "maxPods": 110,
            "serializeImagePulls": False,
            "nodeStatusUpdateFrequency": "4s",
            "syncFrequency": "10s",
            "fileCheckFrequency": "5s",
            "registerNode": True,
            "registerWithTaints": (
                [{"key": REAL_NODE_LABEL, "value": "true", "effect": "NoSchedule"}]
                if self.tainted
                else []
            ),
        }
        (self.dir / "kubelet.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        argv = [
            str(self.cp.binary("kubelet")),
            f"--config={self.dir / 'kubelet.yaml'}",
            f"--kubeconfig={kubeconfig}",
            f"--root-dir={kdir}",
            f"--node-ip={NODE_IP}",
            f"--hostname-override={self.name}",
            f"--node-labels={REAL_NODE_LABEL}=true",
            "--v=1",
        ]
        t0 = time.monotonic()
        self._spawn("kubelet", argv)
        self._wait("kubelet", self._node_ready)
        self.timings["kubelet"] = time.monotonic() - t0

    def _node_ready(self) -> bool:
        try:
            node = self.cp.api("GET", f"/api/v1/nodes/{self.name}")
        except (OSError, ValueError):
            return False
        return any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in node.get("status", {}).get("conditions") or ()
        )

    # ------------------------------------------------------------------ kube-proxy
    def _start_kube_proxy(self) -> None:
        kubeconfig = self.dir / "node.kubeconfig"
        healthz, metrics = self.cp._distinct_ports(2)
        config = {
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
            "kind": "KubeProxyConfiguration",
            "mode": "iptables",
            "clientConnection": {"kubeconfig": str(kubeconfig)},
            "hostnameOverride": self.name,
            "bindAddress": NODE_IP,
            "healthzBindAddress": f"127.0.0.1:{healthz}",
            "metricsBindAddress": f"127.0.0.1:{metrics}",
            "clusterCIDR": POD_CIDR,
            "detectLocalMode": "ClusterCIDR",
            "nodePortAddresses": [f"{NODE_IP}/32"],
            "iptables": {"localhostNodePorts": False, "syncPeriod": "10s", "minSyncPeriod": "0s"},
            # leave the machine's conntrack sysctls alone
            "conntrack": {
                "maxPerCore": 0,
                "min": 0,
                "tcpEstablishedTimeout": "0s",
                "tcpCloseWaitTimeout": "0s",
            },
        }
        (self.dir / "kube-proxy.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        self._undo.append(self._kube_proxy_cleanup)
        t0 = time.monotonic()
        self._spawn(
            "kube-proxy",
            [str(self.cp.binary("kube-proxy")), f"--config={self.dir / 'kube-proxy.yaml'}"],
        )

        def healthy() -> bool:
            with (
                contextlib.suppress(OSError, ValueError),
                urllib.request.urlopen(f"http://127.0.0.1:{healthz}/healthz", timeout=2) as r,
            ):
                return r.status == 200
            return False

        self._wait("kube-proxy", healthy)
        self.timings["kube-proxy"] = time.monotonic() - t0

    def _kube_proxy_cleanup(self) -> None:
        _sh(str(self.cp.binary("kube-proxy")), "--cleanup", check=False)

    # ------------------------------------------------------------------ CoreDNS
    def _deploy_coredns(self) -> None:
        t0 = time.monotonic()
        for obj in coredns_objects(self.tainted):
            self._apply(obj)

        def ready() -> bool:
            try:
                d = self.cp.api("GET", "/apis/apps/v1/namespaces/kube-system/deployments/coredns")
            except (OSError, ValueError):
                return False
            return int(d.get("status", {}).get("readyReplicas") or 0) >= 1

        self._wait("kubelet", ready, what="CoreDNS ready")
        self.timings["coredns"] = time.monotonic() - t0

    def _apply(self, obj: dict[str, Any]) -> None:
        api = obj["apiVersion"]
        prefix = "/api/v1" if api == "v1" else f"/apis/{api}"
        plural = {
            "ServiceAccount": "serviceaccounts",
            "ClusterRole": "clusterroles",
            "ClusterRoleBinding": "clusterrolebindings",
            "ConfigMap": "configmaps",
            "Service": "services",
            "Deployment": "deployments",
        }[obj["kind"]]
        ns = obj["metadata"].get("namespace")
        path = f"{prefix}/namespaces/{ns}/{plural}" if ns else f"{prefix}/{plural}"
        try:
            self.cp.api("POST", path, obj)
        except urllib.error.HTTPError as exc:
            if exc.code != 409:
                raise RealNodeError(
                    f"creating {obj['kind']} {obj['metadata']['name']}: "
                    f"{exc.code} {exc.read().decode(errors='replace')}"
                ) from None

    # ------------------------------------------------------------------ helpers
    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        log = self.cp.dir / f"{name}.log"
        with log.open("ab") as f:
            f.write(f"==== {time.strftime('%F %T')} starting {name}\n".encode())
        self.procs[name] = _Proc(name, argv, log, env)
        (self.cp.dir / f"{name}.pid").write_text(f"{self.procs[name].popen.pid}\n")

    def _wait(self, name: str, ok: Callable[[], bool], what: str = "ready") -> None:
        deadline = time.monotonic() + self.timeout
        proc = self.procs[name]
        while True:
            if not proc.alive():
                raise RealNodeError(
                    f"{name} exited with code {proc.popen.returncode}; last lines "
                    f"of {proc.log_path}:\n{_tail(proc.log_path)}"
                )
            if ok():
                return
            if time.monotonic() > deadline:
                raise RealNodeError(
                    f"{name} not {what} within {self.timeout:.0f}s; last lines "
                    f"of {proc.log_path}:\n{_tail(proc.log_path)}"
                )
            time.sleep(0.3)

    def _remove_pods(self) -> None:
        """Stop and remove every pod sandbox (tears down their netns/veths), unmount leftovers."""
        if "containerd" in self.procs and self.procs["containerd"].alive():
            crictl = ["--address", str(self.containerd_socket), "-n", "k8s.io"]
            tasks = _sh("ctr", *crictl, "tasks", "ls", "-q", check=False).stdout.split()
            for task in tasks:
                _sh("ctr", *crictl, "tasks", "kill", "-s", "SIGKILL", task, check=False)
            time.sleep(0.5 if tasks else 0)
            for task in tasks:
                _sh("ctr", *crictl, "tasks", "delete", "-f", task, check=False)
            # the containerd root persists (imported images): drop this run's containers
            containers = _sh("ctr", *crictl, "containers", "ls", "-q", check=False).stdout.split()
            if containers:
                _sh("ctr", *crictl, "containers", "delete", *containers, check=False)
        _unmount_under(self.dir)
        _unmount_under(RUN_DIR)
        _remove_veths()
