"""What a real node (``hack/cluster/realnode.py``) sets up on this machine outside its work
dir, and its removal: the addresses and names it claims (bridge, pod CIDR, iptables chains,
cgroups, the lock), the command runner, and the cleanup after a stop or after a run that died
uncleanly (processes, bridge, routes, chains, mounts, netns, cgroups, container log links).
One real node per machine: these names are global."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from hack.build import build

BRIDGE = "kuberay0"
POD_CIDR = "10.250.0.0/24"
NODE_IP = "10.250.0.1"  # the bridge's address: node InternalIP, pods' gateway, kubelet's address
SERVICE_CIDR = "10.0.0.0/24"  # = controlplane.SERVICE_CLUSTER_IP_RANGE
CLUSTER_DNS_IP = "10.0.0.10"
CLUSTER_DOMAIN = "cluster.local"
KWOK_RANGES = ("10.244.0.0/16", "172.18.0.0/24")  # controlplane.FAKE_POD_CIDR, FAKE_NODE_IP_NET
REAL_NODE_NAME = "kuberay-real-0"
REAL_NODE_LABEL = "kuberay.io/real-node"  # label value "true"; taint <label>=true:NoSchedule
RUN_DIR = Path("/run/kuberay-node")  # containerd's state and socket (short unix socket paths)
LOCK_FILE = Path("/run/kuberay-node.lock")
FWD_CHAIN = "KUBERAY-NODE-FWD"
IN_CHAIN = "KUBERAY-NODE-IN"
KUBEPODS_CGROUP = "kubepods"


class RealNodeError(RuntimeError):
    pass


def _sh(*cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RealNodeError(f"{' '.join(cmd)}: {(proc.stderr or proc.stdout).strip()}")
    return proc


def containerd_root() -> Path:
    """containerd's root (content, snapshots, metadata): kept between runs so the Ray
    images are imported once per machine; ``$KUBERAY_CONTAINERD_ROOT`` overrides."""
    base = os.environ.get("KUBERAY_CONTAINERD_ROOT")
    return Path(base) if base else Path.home() / ".cache" / "kuberay" / "containerd"


IP_FORWARD = Path("/proc/sys/net/ipv4/ip_forward")
IP_FORWARD_SAVED = Path("/run/kuberay-node.ip_forward")


def _restore_ip_forward() -> None:
    with contextlib.suppress(OSError):
        IP_FORWARD.write_text(IP_FORWARD_SAVED.read_text())
        IP_FORWARD_SAVED.unlink()


def _remove_in_chain() -> None:
    while (
        _sh("iptables", "-D", "INPUT", "-d", POD_CIDR, "-j", IN_CHAIN, check=False).returncode == 0
    ):
        pass
    _sh("iptables", "-F", IN_CHAIN, check=False)
    _sh("iptables", "-X", IN_CHAIN, check=False)


def _remove_fwd_chain() -> None:
    while _sh("iptables", "-D", "FORWARD", "-j", FWD_CHAIN, check=False).returncode == 0:
        pass
    _sh("iptables", "-F", FWD_CHAIN, check=False)
    _sh("iptables", "-X", FWD_CHAIN, check=False)


def _unmount_under(root: Path) -> None:
    prefix = str(root.resolve() if root.exists() else root)
    try:
        mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    except OSError:
        return
    mine = [m for m in mounts if m == prefix or m.startswith(prefix + "/")]
    for m in sorted(set(mine), key=len, reverse=True):
        _sh("umount", "-l", m.encode().decode("unicode_escape"), check=False)


def _remove_veths() -> None:
    """veth ends left on the bridge (their netns are gone with the sandboxes)."""
    out = _sh("ip", "-o", "link", "show", "master", BRIDGE, check=False).stdout
    for line in out.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        _sh("ip", "link", "del", name, check=False)


def _remove_netns() -> None:
    """The pod network namespaces containerd's CRI left in /run/netns (cni-<uuid>)."""
    netns = Path("/run/netns")
    if netns.is_dir():
        for ns in netns.glob("cni-*"):
            _sh("ip", "netns", "delete", ns.name, check=False)


def _kill_pod_processes() -> None:
    """SIGKILL whatever still runs in the kubelet's pod cgroups (containers of a crashed run)."""
    for hierarchy in ("pids", "memory", "cpu,cpuacct", "systemd", "unified"):
        top = Path("/sys/fs/cgroup") / hierarchy / KUBEPODS_CGROUP
        if not top.is_dir():
            continue
        for procs in top.rglob("cgroup.procs"):
            with contextlib.suppress(OSError, ValueError):
                for pid in procs.read_text().split():
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(int(pid), signal.SIGKILL)
        return


def _kill_leftover_node_processes() -> None:
    """containerd, its shims, kubelet and kube-proxy of an earlier run that died uncleanly
    (found by the paths only a real node uses: RUN_DIR, DIR/node/*.yaml|toml)."""
    markers = (
        str(RUN_DIR),
        "/node/containerd.toml",
        "/node/kubelet.yaml",
        "/node/kube-proxy.yaml",
        f"apiserver_forward.py --listen={NODE_IP}:",
    )
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(m in cmdline for m in markers):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)


def _remove_cgroups() -> None:
    _kill_pod_processes()
    time.sleep(0.2)
    for hierarchy in Path("/sys/fs/cgroup").iterdir():
        top = hierarchy / KUBEPODS_CGROUP
        if not top.is_dir():
            continue
        for d in sorted(
            (p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True
        ):
            with contextlib.suppress(OSError):
                d.rmdir()
        with contextlib.suppress(OSError):
            top.rmdir()


def _cleanup_leftovers() -> None:
    """Remove what an earlier real node on this machine left (called holding the lock)."""
    _kill_leftover_node_processes()
    _kill_pod_processes()
    _remove_fwd_chain()
    _remove_in_chain()
    _restore_ip_forward()
    _remove_veths()
    _sh("ip", "link", "del", BRIDGE, check=False)
    for cidr in KWOK_RANGES:
        _sh("ip", "route", "del", "unreachable", cidr, check=False)
    _unmount_under(RUN_DIR)
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    _remove_netns()
    cleanup_after_stop()


def cleanup_leftovers() -> bool:
    """What a real node that died uncleanly left (processes, bridge, routes, chains, mounts,
    cgroups); False when a live real node holds the lock (then nothing is touched)."""
    fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        _cleanup_leftovers()
        kube_proxy = build.binary_path("kube-proxy")
        if kube_proxy.exists():
            _sh(str(kube_proxy), "--cleanup", check=False)
        return True
    finally:
        os.close(fd)


KUBELET_CHAINS = {  # table -> chains the kubelet creates (and never removes)
    "filter": ("KUBE-FIREWALL", "KUBE-KUBELET-CANARY"),
    "nat": ("KUBE-KUBELET-CANARY",),
    "mangle": ("KUBE-IPTABLES-HINT", "KUBE-KUBELET-CANARY"),
}


def _remove_kubelet_chains() -> None:
    for tool in ("iptables", "ip6tables"):
        if shutil.which(tool) is None:
            continue
        for parent in ("INPUT", "OUTPUT"):
            while _sh(tool, "-D", parent, "-j", "KUBE-FIREWALL", check=False).returncode == 0:
                pass
        for table, chains in KUBELET_CHAINS.items():
            for chain in chains:
                _sh(tool, "-t", table, "-F", chain, check=False)
                _sh(tool, "-t", table, "-X", chain, check=False)


def cleanup_after_stop(node_dir: Path | None = None) -> None:
    """Machine-wide leftovers once every node process has exited (cgroups, chains, links)."""
    _remove_cgroups()
    _remove_kubelet_chains()
    logs = Path("/var/log/containers")
    if logs.is_dir():
        for link in logs.iterdir():
            if not link.is_symlink():
                continue
            target = os.readlink(link)
            if not link.exists() or (node_dir is not None and target.startswith(f"{node_dir}/")):
                link.unlink()
