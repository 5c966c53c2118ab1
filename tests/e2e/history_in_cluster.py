"""The history server deployed as a user deploys it, and reached as a user reaches it.

* :func:`deployed_history_server`: the server image (``make images``; imported into the real
  node's containerd on demand: the node does not import it at start) and
  ``manifests/historyserver`` applied with ``kubectl apply -k``, its storage ConfigMap
  ``historyserver-storage`` holding the store's env file values (the store listens on the
  node's bridge address, so the pod reaches it); yields once the Deployment is available and
  removes everything after.
* :func:`history_open`: ``kubectl ray history open NAME --kind rayjob`` running, which
  port-forwards through the apiserver to the server's pod and prints the session's URL; yields
  the forwarded base URL while the command keeps forwarding, then stops it (Ctrl-C).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from kuberay.kube import Client
from tests.e2e.realcluster import RealCluster

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "manifests" / "historyserver"
NAMESPACE = "ray-system"
DEPLOYMENT = "historyserver-demo"
READY_TIMEOUT = 240.0


def storage_config_map(store_env: Mapping[str, str]) -> dict[str, Any]:
    """``historyserver-storage`` with the store's settings (what storage.example.yaml shows)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "historyserver-storage", "namespace": NAMESPACE},
        "data": dict(store_env),
    }


async def _available(admin: Client) -> bool:
    deployment = await admin.get("apps/v1", "Deployment", DEPLOYMENT, NAMESPACE)
    return int((deployment.get("status") or {}).get("availableReplicas") or 0) >= 1


@contextlib.asynccontextmanager
async def deployed_history_server(
    cluster: RealCluster, admin: Client, store_env: Mapping[str, str]
) -> AsyncIterator[None]:
    """``manifests/historyserver`` running on the real node over the store (module doc)."""
    from hack.release import images

    archives = await asyncio.to_thread(images.ensure, ("server",))
    await asyncio.to_thread(cluster.cp.real_node.import_images, archives)
    cluster.kubectl("create", "namespace", NAMESPACE, check=False)
    await admin.apply(storage_config_map(store_env), field_manager="kuberay-e2e", force=True)
    cluster.kubectl("apply", "--server-side", "-k", str(MANIFESTS))
    try:
        deadline = time.monotonic() + READY_TIMEOUT
        while not await _available(admin):
            if time.monotonic() > deadline:
                pods = cluster.kubectl("get", "pods", "-n", NAMESPACE, "-o", "wide", check=False)
                events = cluster.kubectl("get", "events", "-n", NAMESPACE, check=False)
                logs = cluster.kubectl(
                    "logs", "-n", NAMESPACE, f"deployment/{DEPLOYMENT}", "--tail=50", check=False
                )
                raise AssertionError(
                    f"the history server Deployment not available in {READY_TIMEOUT:.0f}s\n"
                    f"{pods}\n{events}\n{logs}"
                )
            await asyncio.sleep(1)
        yield
    finally:
        cluster.kubectl("delete", "--ignore-not-found", "-k", str(MANIFESTS), check=False)
        cluster.kubectl(
            "delete", "configmap", "-n", NAMESPACE, "historyserver-storage", check=False
        )


@contextlib.asynccontextmanager
async def history_open(
    cluster: RealCluster, namespace: str, rayjob: str, workdir: Path
) -> AsyncIterator[tuple[str, str]]:
    """``kubectl ray history open`` (module doc): yields ``(base URL, printed URL)``."""
    log = workdir / "history-open.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kuberay.kubectl_ray",
                "history",
                "open",
                rayjob,
                "--kind",
                "rayjob",
                "-n",
                namespace,
                f"--kubeconfig={cluster.kubeconfig}",
            ],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
        )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 90)
        printed = line.decode().strip()
        assert printed.startswith("http://127.0.0.1:"), (
            f"kubectl ray history open printed {printed!r} (exit {proc.poll()}); "
            f"stderr: {log.read_text(errors='replace')[-2000:]}"
        )
        base = printed.split("/enter_cluster/", 1)[0]
        yield base, printed
        assert proc.poll() is None, log.read_text(errors="replace")[-2000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
