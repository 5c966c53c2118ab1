"""Plain pods on a real node (kubelet + containerd + runc, CNI bridge, kube-proxy, CoreDNS): a
pod runs, ``kubectl logs``/``exec``/``port-forward`` work, a ClusterIP Service answers by its
DNS name from another pod, kwok's pod range fails at once, nothing leaves the machine, a
missing image fails without a pull. No operator: the cluster of ``tests/e2e/conftest.py``.

Needs root (network, containerd, mounts) and this machine's packages (hack/node_deps.py).
"""

from __future__ import annotations

import asyncio
import errno
import os
import socket
import subprocess
import time
import urllib.request
from typing import Any

import pytest

from kuberay.kube import Client
from tests.e2e.harness import free_port, pod_ready
from tests.e2e.real_node_support import record, wait_until
from tests.e2e.realcluster import RealCluster

REAL_NODE_IP = "10.250.0.1"  # realnode.NODE_IP: the bridge, the node's and its pods' gateway
RAY_IMAGE = "rayproject/ray:2.52.0"
KWOK_POD_IP = "10.244.3.7"  # inside controlplane.FAKE_POD_CIDR

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a real node needs root")


async def _pod(admin: Client, ns: str, name: str) -> dict[str, Any]:
    return await admin.get("v1", "Pod", name, ns)


def _ray_pod(name: str, ns: str, command: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {
            "terminationGracePeriodSeconds": 1,
            "containers": [
                {
                    "name": "main",
                    "image": RAY_IMAGE,
                    "command": ["bash", "-c", command],
                    "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}},
                    **extra,
                }
            ],
        },
    }


async def _running(admin: Client, ns: str, name: str, timeout: float = 60) -> float:
    async def ready() -> bool:
        return pod_ready(await _pod(admin, ns, name))

    return await wait_until(f"pod {ns}/{name} Ready", ready, timeout)


async def test_real_pod_logs_exec_and_port_forward(
    real_cluster: RealCluster, real_admin: Client, rns: str
) -> None:
    body = _ray_pod(
        "web",
        rns,
        "echo hello-from-$(hostname); exec python3 -m http.server 8000",
        ports=[{"containerPort": 8000}],
        readinessProbe={"tcpSocket": {"port": 8000}, "periodSeconds": 1},
    )
    await real_admin.create(body)
    seconds = record("real pod create -> Ready", await _running(real_admin, rns, "web"))
    pod = await _pod(real_admin, rns, "web")
    assert pod["spec"]["nodeName"] == "kuberay-real-0"
    assert pod["status"]["podIP"].startswith("10.250.0."), pod["status"].get("podIP")
    assert seconds < 60
    assert "hello-from-web" in real_cluster.kubectl("-n", rns, "logs", "web")
    out = real_cluster.kubectl("-n", rns, "exec", "web", "--", "bash", "-c", "id -u; echo $HOME")
    assert out.split() == ["1000", "/home/ray"]

    port = free_port()
    pf = subprocess.Popen(
        [
            str(real_cluster.kubectl_path),
            f"--kubeconfig={real_cluster.kubeconfig}",
            "-n",
            rns,
            "port-forward",
            "pod/web",
            f"{port}:8000",
            "--address=127.0.0.1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        body_text = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
                    body_text = r.read().decode()
                    break
            except OSError:
                await asyncio.sleep(0.3)
        assert "Directory listing" in body_text
    finally:
        pf.terminate()
        pf.wait(10)


async def test_cluster_ip_service_by_dns_name_from_a_pod(
    real_cluster: RealCluster, real_admin: Client, rns: str
) -> None:
    await real_admin.create(
        _ray_pod(
            "server",
            rns,
            "mkdir -p /tmp/w && echo served-by-server > /tmp/w/index.html && "
            "exec python3 -m http.server 8000 -d /tmp/w",
            readinessProbe={"tcpSocket": {"port": 8000}, "periodSeconds": 1},
        )
    )
    await real_admin.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": rns},
            "spec": {"selector": {"app": "server"}, "ports": [{"port": 80, "targetPort": 8000}]},
        }
    )
    await real_admin.create(_ray_pod("client", rns, "exec sleep 3600"))
    await _running(real_admin, rns, "server")
    await _running(real_admin, rns, "client")
    host = f"web.{rns}.svc.cluster.local"
    resolved = real_cluster.kubectl("-n", rns, "exec", "client", "--", "getent", "hosts", host)
    svc = await real_admin.get("v1", "Service", "web", rns)
    assert resolved.split()[0] == svc["spec"]["clusterIP"]

    async def served() -> str:
        out = real_cluster.kubectl(
            "-n",
            rns,
            "exec",
            "client",
            "--",
            "wget",
            "-q",
            "-T",
            "3",
            "-O-",
            f"http://{host}/",
            check=False,
        )
        return out if "served-by-server" in out else ""

    # kube-proxy programs the Service's rules within its sync period
    seconds = await wait_until("service answers", served, 30, 1)
    record("ClusterIP service reachable by name", seconds)
    # the short name through the pod's search path, and the API through its Service
    out = real_cluster.kubectl(
        "-n",
        rns,
        "exec",
        "client",
        "--",
        "python3",
        "-c",
        "import socket; print(socket.gethostbyname('web'), "
        "socket.gethostbyname('kubernetes.default'))",
    )
    assert out.split() == [svc["spec"]["clusterIP"], "10.0.0.1"]


async def test_kwok_pod_ips_fail_at_once(real_cluster: RealCluster, rns: str) -> None:
    """The kwok pod range has an unreachable route while the cluster runs: nothing leaves."""
    began = time.monotonic()
    with socket.socket() as s:
        s.settimeout(5)
        with pytest.raises(OSError) as info:
            s.connect((KWOK_POD_IP, 8265))
    assert info.value.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH), info.value
    assert time.monotonic() - began < 1.0
    out = subprocess.run(
        ["ip", "route", "show", "type", "unreachable"], capture_output=True, text=True
    )
    assert "10.244.0.0/16" in out.stdout, out.stdout


async def test_pods_cannot_reach_off_machine(
    real_cluster: RealCluster, real_admin: Client, rns: str
) -> None:
    """From a pod: kwok's range and an outside address are refused locally, at once."""
    await real_admin.create(_ray_pod("probe", rns, "exec sleep 3600"))
    await _running(real_admin, rns, "probe")
    script = (
        "import socket, time, sys\n"
        "for ip in sys.argv[1:]:\n"
        "    s = socket.socket(); s.settimeout(5); t = time.monotonic()\n"
        "    try:\n"
        "        s.connect((ip, 80)); print(ip, 'connected')\n"
        "    except OSError as e:\n"
        "        print(ip, e.errno, round(time.monotonic() - t, 2))\n"
    )
    out = real_cluster.kubectl(
        "-n", rns, "exec", "probe", "--", "python3", "-c", script, KWOK_POD_IP, "192.0.2.123"
    )
    for line in out.strip().splitlines():
        ip, code, seconds = line.split()
        assert code != "connected", line
        assert float(seconds) < 1.0, f"{ip}: not refused at once ({line})"


async def test_missing_image_fails_locally_without_a_pull(
    real_cluster: RealCluster, real_admin: Client, rns: str
) -> None:
    """No registry is dialled: containerd's pulls go to a closed local port."""
    body = _ray_pod("nopull", rns, "true")
    body["spec"]["containers"][0]["image"] = "docker.io/library/not-built-here:1.0"
    await real_admin.create(body)

    async def pull_failed() -> str:
        pod = await _pod(real_admin, rns, "nopull")
        for status in (pod.get("status") or {}).get("containerStatuses") or ():
            waiting = (status.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in ("ErrImagePull", "ImagePullBackOff"):
                return str(waiting.get("message"))
        return ""

    await wait_until("image pull fails", pull_failed, 60)
    message = await pull_failed()
    assert "127.0.0.1:9" in message, message
