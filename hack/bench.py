#!/usr/bin/env python3
"""Scale benchmark: N RayClusters (1 head + 2 workers) on the full local cluster.

    python hack/bench.py --clusters 100 --out bench-100.json

Starts a full local cluster (etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, kwok fake nodes) in a temp dir, installs the CRDs, runs
``kuberay-operator`` as a separate process, creates N RayClusters and measures:

* ``seconds_to_all_pods``: create of the first CR -> every Ray pod exists;
* ``seconds_to_all_ready``: -> every RayCluster has ``status.state == ready``;
* ``reconciles_per_second``: the operator's reconciles over that window;
* ``api_requests_per_cluster``: the operator's API requests by verb, divided by N;
* ``quiet_resync_writes``: writes made by a restarted operator whose initial list
  re-reconciles every (unchanged) cluster - must be 0;
* ``operator_peak_rss_mib`` and ``operator_cpu_seconds`` (of the first operator run).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "hack"))

import aiohttp  # noqa: E402
import controlplane  # noqa: E402

from kuberay.kube import Client  # noqa: E402
from tests.crds import install_crds  # noqa: E402

NAMESPACE = "bench"
IMAGE = "rayproject/ray:2.52.0"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def raycluster(name: str) -> dict[str, Any]:
    container = {
        "name": "ray",
        "image": IMAGE,
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [container]}},
            },
            "workerGroupSpecs": [
                {
                    "groupName": "workers",
                    "replicas": 2,
                    "minReplicas": 0,
                    "maxReplicas": 4,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [container]}},
                }
            ],
        },
    }


class Operator:
    """The operator as a child process with its metrics endpoint."""

    def __init__(self, kubeconfig: Path, log: Path, args: list[str]) -> None:
        self.metrics_port = free_port()
        self.log = log
        env = dict(os.environ)
        env.setdefault("RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV", "300")
        cmd = [
            sys.executable,
            "-m",
            "kuberay.cmd.operator",
            f"--kubeconfig={kubeconfig}",
            "--enable-leader-election=false",
            f"--metrics-addr=127.0.0.1:{self.metrics_port}",
            f"--health-probe-bind-address=127.0.0.1:{free_port()}",
            f"--watch-namespace={NAMESPACE}",
            "--log-stdout-encoder=json",
            "--zap-log-level=error",
            *args,
        ]
        self.proc = subprocess.Popen(
            cmd, stdout=log.open("ab"), stderr=subprocess.STDOUT, cwd=ROOT, env=env
        )
        self.peak_rss_kib = 0

    def sample(self) -> None:
        """Track peak RSS (VmHWM already is the peak)."""
        try:
            text = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return
        m = re.search(r"VmHWM:\s+(\d+) kB", text)
        if m:
            self.peak_rss_kib = max(self.peak_rss_kib, int(m.group(1)))

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    async def metrics(self) -> dict[str, float]:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{self.metrics_port}/metrics") as resp,
        ):
            text = await resp.text()
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line.startswith("#") or not line:
                continue
            name, _, value = line.rpartition(" ")
            with contextlib.suppress(ValueError):
                out[name] = float(value)
        return out

    async def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"operator exited {self.proc.returncode}; see {self.log}")
            try:
                await self.metrics()
                return
            except aiohttp.ClientError:
                await asyncio.sleep(0.2)
        raise TimeoutError("operator metrics endpoint never came up")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def sum_metric(metrics: dict[str, float], prefix: str, **labels: str) -> float:
    total = 0.0
    for key, value in metrics.items():
        if not key.startswith(prefix + "{") and key != prefix:
            continue
        if all(f'{k}="{v}"' in key for k, v in labels.items()):
            total += value
    return total


def by_verb(metrics: dict[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in metrics.items():
        if key.startswith("kuberay_rest_client_requests_by_verb_total{"):
            verb = re.search(r'verb="([^"]+)"', key)
            if verb:
                out[verb.group(1)] = out.get(verb.group(1), 0.0) + value
    return out


async def run(n: int, workdir: Path, operator_args: list[str]) -> dict[str, Any]:
    cp = controlplane.ControlPlane(workdir / "cluster", full=True, fake_nodes=max(4, n // 250 + 1))
    cp.start()
    client = await Client.from_kubeconfig(cp.kubeconfig, qps=0)
    op: Operator | None = None
    try:
        await install_crds(client)
        await client.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        )
        op = Operator(cp.kubeconfig, workdir / "operator.log", operator_args)
        await op.wait_ready()
        names = [f"rc-{i:05d}" for i in range(n)]
        start = time.monotonic()
        sem = asyncio.Semaphore(32)

        async def create(name: str) -> None:
            async with sem:
                await client.create(raycluster(name))

        await asyncio.gather(*(create(x) for x in names))
        created_s = time.monotonic() - start
        t_pods = t_ready = None
        while t_ready is None:
            op.sample()
            if op.proc.poll() is not None:
                raise RuntimeError(f"operator died; see {op.log}")
            if t_pods is None:
                pods, _ = await client.list_all(
                    "v1", "Pod", NAMESPACE, label_selector="ray.io/cluster"
                )
                if len(pods) >= 3 * n:
                    t_pods = time.monotonic() - start
            clusters, _ = await client.list_all("ray.io/v1", "RayCluster", NAMESPACE)
            ready = sum(1 for c in clusters if (c.get("status") or {}).get("state") == "ready")
            if ready == n:
                t_ready = time.monotonic() - start
            else:
                await asyncio.sleep(1.0)
            if time.monotonic() - start > 3600:
                raise TimeoutError(f"only {ready}/{n} ready after an hour")
        metrics = await op.metrics()
        reconciles = sum_metric(metrics, "controller_runtime_reconcile_total")
        verbs = by_verb(metrics)
        pods, _ = await client.list_all("v1", "Pod", NAMESPACE, label_selector="ray.io/cluster")
        await asyncio.sleep(5.0)
        op.sample()
        cpu = op.cpu_seconds()
        peak = op.peak_rss_kib
        op.stop()

        # Quiet resync: a fresh operator re-reconciles every unchanged cluster.
        op = Operator(cp.kubeconfig, workdir / "operator-restart.log", operator_args)
        await op.wait_ready()
        resync_start = time.monotonic()
        while True:
            m = await op.metrics()
            done = sum_metric(m, "controller_runtime_reconcile_total")
            if done >= n:
                break
            if time.monotonic() - resync_start > 1800:
                raise TimeoutError("restarted operator did not reconcile every cluster")
            await asyncio.sleep(1.0)
        await asyncio.sleep(3.0)
        m = await op.metrics()
        restart_verbs = by_verb(m)
        writes = sum(restart_verbs.get(v, 0.0) for v in ("create", "update", "patch", "delete"))
        return {
            "clusters": n,
            "pods": len(pods),
            "create_requests_seconds": round(created_s, 2),
            "seconds_to_all_pods": round(t_pods or t_ready, 2),
            "seconds_to_all_ready": round(t_ready, 2),
            "reconciles": int(reconciles),
            "reconciles_per_second": round(reconciles / t_ready, 2),
            "api_requests_per_cluster": {v: round(c / n, 2) for v, c in sorted(verbs.items())},
            "quiet_resync_reconciles": int(sum_metric(m, "controller_runtime_reconcile_total")),
            "quiet_resync_seconds": round(time.monotonic() - resync_start, 2),
            "quiet_resync_writes": int(writes),
            "quiet_resync_requests": {v: int(c) for v, c in sorted(restart_verbs.items())},
            "operator_peak_rss_mib": round(peak / 1024, 1),
            "operator_cpu_seconds": round(cpu, 2),
            "operator_args": operator_args,
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
        }
    finally:
        if op is not None:
            op.stop()
        await client.close()
        cp.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dir", type=Path, default=None, help="work dir (default: a temp dir)")
    parser.add_argument("operator_args", nargs="*", help="extra kuberay-operator flags (after --)")
    args = parser.parse_args()
    workdir = args.dir or Path(tempfile.mkdtemp(prefix="kuberay-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    report = asyncio.run(run(args.clusters, workdir, args.operator_args))
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
