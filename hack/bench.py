#!/usr/bin/env python3
"""Scale benchmark: N RayClusters (1 head + 2 workers) on the full local cluster.

    python hack/bench.py --clusters 100 --out ours-100.json
    python hack/bench.py --clusters 100 --out go-100.json --label "KubeRay-Go N=100" \\
        --operator-cmd /path/to/kuberay-operator   # any operator binary, e.g. KubeRay's
    python hack/bench.py --clusters 100 --out raw-100.json --raw
    python hack/bench.py --compare go-100.json ours-100.json raw-100.json

Each run starts a fresh full local cluster (etcd, kube-apiserver with an audit log,
kube-controller-manager, kube-scheduler, kwok fake nodes) in a work dir, installs the
CRDs and runs ``--operator-cmd`` (default: this repo's operator) with the same flags
for any operator (``--kubeconfig``, also ``$KUBECONFIG``; metrics/probe addresses,
no leader election, ``--watch-namespace``, ``--reconcile-concurrency``, ``--qps``,
``--burst``) under its own client-cert user, so the apiserver's audit log counts its
requests the same way whatever the operator is written in. Keys of the JSON report:

* ``seconds_to_all_pods`` / ``seconds_to_all_ready``: from the first RayCluster create
  until every Ray pod exists / every RayCluster has ``status.state == ready``;
* ``raw_seconds_to_all_pods`` (``--raw``): no operator; a plain client with the same
  user, qps and burst creates the same head Service and pods for each RayCluster;
* ``request_budget_seconds``: the least time the counted in-budget requests (all but
  Events) need through a token bucket of the configured qps/burst;
* ``operator_idle_rss_mib`` (no clusters, ``--idle-seconds`` after ready),
  ``operator_peak_rss_mib``, ``rss_mib_per_managed_pod`` ((peak - idle) / pods),
  ``operator_cpu_seconds`` (create -> all ready), all of the operator's process tree;
* ``requests_by_verb_resource``: the operator's requests (audit log), whole first run;
* ``quiet_resync_writes``: writes of a restarted operator (another user) whose initial
  list re-reconciles every unchanged cluster - must be 0;
* ``apiserver_cpu_seconds`` / ``apiserver_peak_rss_mib``, ``load_average_*``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(ROOT)

import aiohttp  # noqa: E402

from hack import controlplane  # noqa: E402
from hack.benchmarks import bench_report  # noqa: E402
from kuberay.kube import Client  # noqa: E402
from kuberay.kube.errors import AlreadyExists, Gone, TransportError  # noqa: E402

NAMESPACE = "bench"
IMAGE = "rayproject/ray:2.52.0"
OPERATOR_USER = "kuberay-bench-operator"
RESTART_USER = "kuberay-bench-operator-restart"
IDENTITIES = {
    "bench-operator": (OPERATOR_USER, ("system:masters",)),
    "bench-operator-restart": (RESTART_USER, ("system:masters",)),
}
AUDIT_POLICY = f"""apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [{OPERATOR_USER}, {RESTART_USER}]
- level: None
"""
DEFAULT_OPERATOR_CMD = f"{sys.executable} -m kuberay.cmd.operator"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def raycluster(name: str) -> dict[str, Any]:
    """The benched RayCluster: 1 head + 2 workers, tiny requests."""
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


# ----------------------------------------------------------------- /proc of a process tree


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            out.setdefault(ppid, []).append(int(entry.name))
    return out


def tree_pids(root: int) -> list[int]:
    """``root`` and all its live descendants."""
    children = _children()
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo.extend(children.get(pid, ()))
    return pids


def cpu_seconds(pids: list[int]) -> float:
    """utime + stime (+ reaped children's) of ``pids``."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
    return total / ticks


def status_kib(pids: list[int], field: str) -> int:
    """Sum of ``field`` (VmRSS, VmHWM) over ``pids`` in KiB."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    total += int(line.split()[1])
    return total


class Operator:
    """An operator command as a child process (own process group) with its endpoints."""

    def __init__(self, cmd: str, kubeconfig: Path, log: Path, flags: list[str]) -> None:
        self.metrics_port = free_port()
        self.probe_port = free_port()
        self.log = log
        env = dict(os.environ, KUBECONFIG=str(kubeconfig))
        env.setdefault("RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV", "300")
        argv = [
            *shlex.split(cmd),
            f"--kubeconfig={kubeconfig}",
            "--enable-leader-election=false",
            f"--metrics-addr=127.0.0.1:{self.metrics_port}",
            f"--health-probe-bind-address=127.0.0.1:{self.probe_port}",
            f"--watch-namespace={NAMESPACE}",
            "--log-stdout-encoder=json",
            "--zap-log-level=error",
            *flags,
        ]
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            argv,
            stdout=log.open("ab"),
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
        self.peak_rss_kib = 0

    def pids(self) -> list[int]:
        return tree_pids(self.proc.pid)

    def sample(self) -> None:
        """Track the tree's peak RSS (sampled sum, or the root's VmHWM if higher)."""
        pids = self.pids()
        self.peak_rss_kib = max(
            self.peak_rss_kib, status_kib(pids, "VmRSS"), status_kib(pids[:1], "VmHWM")
        )

    def rss_mib(self) -> float:
        return status_kib(self.pids(), "VmRSS") / 1024

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pids())

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

    async def wait_ready(self, timeout: float = 120) -> float:
        """Wait for ``/readyz`` 200; seconds since the process started."""
        deadline = time.monotonic() + timeout
        url = f"http://127.0.0.1:{self.probe_port}/readyz"
        async with aiohttp.ClientSession() as http:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"operator exited {self.proc.returncode}; see {self.log}")
                with contextlib.suppress(aiohttp.ClientError):
                    async with http.get(url) as resp:
                        if resp.status == 200:
                            return time.monotonic() - self.started
                await asyncio.sleep(0.05)
        raise TimeoutError(f"operator not ready in {timeout}s; see {self.log}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, 9)
                self.proc.wait()


def sum_metric(metrics: dict[str, float], prefix: str) -> float:
    return sum(v for k, v in metrics.items() if k == prefix or k.startswith(prefix + "{"))


# ----------------------------------------------------------------- progress by watch


class Progress:
    """Ray pods that exist and RayClusters that are ready, kept by watches."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.pods: set[str] = set()
        self.ready: set[str] = set()
        self.tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self.tasks = [
            asyncio.create_task(self._follow("v1", "Pod", True, self._pod)),
            asyncio.create_task(self._follow("ray.io/v1", "RayCluster", False, self._cluster)),
        ]

    async def stop(self) -> None:
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    def _pod(self, etype: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        if "ray.io/cluster" not in (meta.get("labels") or {}):
            return
        if etype == "DELETED":
            self.pods.discard(meta["name"])
        else:
            self.pods.add(meta["name"])

    def _cluster(self, etype: str, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        if etype != "DELETED" and (obj.get("status") or {}).get("state") == "ready":
            self.ready.add(name)
        else:
            self.ready.discard(name)

    async def _follow(
        self,
        api_version: str,
        kind: str,
        metadata_only: bool,
        handle: Callable[[str, dict[str, Any]], None],
    ) -> None:
        rv: str | None = None
        while True:
            try:
                if rv is None:
                    items, rv = await self.client.list_all(
                        api_version, kind, NAMESPACE, metadata_only=metadata_only
                    )
                    for item in items:
                        handle("ADDED", item)
                async for ev in self.client.watch(
                    api_version,
                    kind,
                    NAMESPACE,
                    resource_version=rv,
                    timeout_seconds=300,
                    metadata_only=metadata_only,
                ):
                    rv = ev.object.get("metadata", {}).get("resourceVersion") or rv
                    if ev.type != "BOOKMARK":
                        handle(ev.type, ev.object)
            except Gone:
                rv = None
            except asyncio.CancelledError:
                raise
            except Exception:  # keep following; the run has its own timeout
                await asyncio.sleep(1.0)


# ----------------------------------------------------------------- raw floor


async def raw_objects(raw: Client, cluster: dict[str, Any]) -> None:
    """What the operator creates for one cluster, sent with a plain client."""
    from kuberay.controllers.builders.pod import build_head_pod, build_worker_pod
    from kuberay.controllers.builders.service import build_head_service

    objs = [build_head_service(cluster), build_head_pod(cluster)]
    objs += [build_worker_pod(cluster, "workers", replica_index=i) for i in range(2)]
    await asyncio.gather(*(_create_retrying(raw, o) for o in objs))


async def _create_retrying(raw: Client, obj: dict[str, Any]) -> None:
    """Create ``obj``; retry a transport error (a loaded apiserver may time a create out
    after storing it: a retry then finds it there, as an operator's next reconcile would)."""
    meta = obj["metadata"]
    if meta.get("generateName"):  # fixed name: a retry must not make a second pod
        meta["name"] = meta.pop("generateName") + secrets.token_hex(3)[:5]
    for attempt in range(5):
        try:
            await raw.create(obj)
            return
        except AlreadyExists:
            return
        except TransportError:
            if attempt == 4:
                raise
            await asyncio.sleep(1.0)


# ----------------------------------------------------------------- one run


def audit_args(workdir: Path) -> list[str]:
    policy = workdir / "audit-policy.yaml"
    policy.write_text(AUDIT_POLICY)
    return [
        f"--audit-policy-file={policy}",
        f"--audit-log-path={workdir / 'audit.log'}",
        "--audit-log-format=json",
        "--audit-log-mode=blocking",
    ]


def audit_counts(workdir: Path, user: str) -> dict[str, int]:
    path = workdir / "audit.log"
    if not path.exists():
        return {}
    with path.open("rb") as f:
        return bench_report.count_requests(f, [user])


async def run(opts: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    n: int = opts.clusters
    flags = [
        f"--reconcile-concurrency={opts.reconcile_concurrency}",
        f"--qps={opts.qps:g}",
        f"--burst={opts.burst}",
        *opts.operator_args,
    ]
    cp = controlplane.ControlPlane(
        workdir / "cluster",
        full=True,
        fake_nodes=max(4, n // 250 + 1),
        extra_clients=IDENTITIES,
        extra_apiserver_args=audit_args(workdir),
    )
    cp.start()
    api_pid = cp.pids()["kube-apiserver"]
    etcd_pid = cp.pids()["etcd"]
    client = await Client.from_kubeconfig(cp.kubeconfig, qps=0)
    op: Operator | None = None
    progress = Progress(client)
    report: dict[str, Any] = {
        "label": opts.label or ("raw" if opts.raw else ""),
        "operator": "raw" if opts.raw else opts.operator_cmd,
        "clusters": n,
        "reconcile_concurrency": opts.reconcile_concurrency,
        "qps": opts.qps,
        "burst": opts.burst,
        "load_average_start": round(os.getloadavg()[0], 2),
    }
    try:
        await install_crds_and_namespace(client)
        kubeconfig = cp.component_kubeconfig("bench-operator")
        raw: Client | None = None
        if opts.raw:
            raw = await Client.from_kubeconfig(kubeconfig, qps=opts.qps, burst=opts.burst)
        else:
            op = Operator(opts.operator_cmd, kubeconfig, workdir / "operator.log", flags)
            report["operator_start_to_ready_seconds"] = round(await op.wait_ready(), 2)
            await asyncio.sleep(opts.idle_seconds)
            op.sample()
            report["operator_idle_rss_mib"] = round(op.rss_mib(), 1)
        progress.start()
        cpu0 = op.cpu_seconds() if op else 0.0
        api_cpu0, etcd_cpu0 = cpu_seconds([api_pid]), cpu_seconds([etcd_pid])
        start = time.monotonic()
        sem = asyncio.Semaphore(32)
        raw_tasks: list[asyncio.Task[None]] = []

        async def create(name: str) -> None:
            async with sem:
                created = await client.create(raycluster(name))
            if raw is not None:
                raw_tasks.append(asyncio.create_task(raw_objects(raw, created)))

        await asyncio.gather(*(create(f"rc-{i:05d}") for i in range(n)))
        report["create_requests_seconds"] = round(time.monotonic() - start, 2)
        t_pods = t_ready = None
        last_sample = 0.0
        while t_pods is None or (t_ready is None and not opts.raw):
            now = time.monotonic()
            if op is not None:
                if op.proc.poll() is not None:
                    raise RuntimeError(f"operator died; see {op.log}")
                if now - last_sample >= 0.5:
                    op.sample()
                    last_sample = now
            if t_pods is None and len(progress.pods) >= 3 * n:
                t_pods = now - start
            if t_ready is None and len(progress.ready) >= n:
                t_ready = now - start
            if now - start > opts.timeout:
                raise TimeoutError(
                    f"{len(progress.pods)}/{3 * n} pods, {len(progress.ready)}/{n} ready "
                    f"after {opts.timeout}s"
                )
            await asyncio.sleep(0.1)
        for t in raw_tasks:
            t.result()  # surface a failed raw create
        if opts.raw:
            report["raw_seconds_to_all_pods"] = round(t_pods, 2)
        else:
            report["seconds_to_all_pods"] = round(t_pods, 2)
            report["seconds_to_all_ready"] = round(t_ready or 0.0, 2)
        assert op is None or t_ready is not None
        report["apiserver_cpu_seconds"] = round(cpu_seconds([api_pid]) - api_cpu0, 2)
        report["etcd_cpu_seconds"] = round(cpu_seconds([etcd_pid]) - etcd_cpu0, 2)
        report["apiserver_peak_rss_mib"] = round(status_kib([api_pid], "VmHWM") / 1024, 1)
        report["pods"] = len(progress.pods)
        if op is not None:
            report["operator_cpu_seconds"] = round(op.cpu_seconds() - cpu0, 2)
            await asyncio.sleep(opts.settle_seconds)
            op.sample()
            report["operator_peak_rss_mib"] = round(op.peak_rss_kib / 1024, 1)
            if n:  # an idle run manages no pod: its peak over idle is not per pod
                report["rss_mib_per_managed_pod"] = round(
                    max(0.0, report["operator_peak_rss_mib"] - report["operator_idle_rss_mib"])
                    / (3 * n),
                    4,
                )
            with contextlib.suppress(Exception):
                report["reconciles"] = int(
                    sum_metric(await op.metrics(), "controller_runtime_reconcile_total")
                )
            op.stop()
            op = None
            report.update(await quiet_resync(opts, cp, workdir, flags, n))
        if raw is not None:
            await raw.close()
        requests = audit_counts(workdir, OPERATOR_USER)
        report["requests_by_verb_resource"] = requests
        report["request_budget_seconds"] = round(
            bench_report.budget_seconds(
                bench_report.in_budget_requests(requests), opts.qps, opts.burst
            ),
            2,
        )
        report["load_average_end"] = round(os.getloadavg()[0], 2)
        report["python"] = sys.version.split()[0]
        report["cpus"] = os.cpu_count()
        return report
    finally:
        await progress.stop()
        if op is not None:
            op.stop()
        await client.close()
        cp.stop()


async def install_crds_and_namespace(client: Client) -> None:
    from kuberay.testing.crds import install_crds

    await install_crds(client, timeout=300)
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})


async def quiet_resync(
    opts: argparse.Namespace, cp: Any, workdir: Path, flags: list[str], n: int
) -> dict[str, Any]:
    """A fresh operator (another user) over the unchanged world: its writes must be 0.

    Done when its reconcile counter reaches ``n`` (or, if it serves no such metric,
    after ``--settle-seconds`` more without new requests in the audit log)."""
    kubeconfig = cp.component_kubeconfig("bench-operator-restart")
    op = Operator(opts.operator_cmd, kubeconfig, workdir / "operator-restart.log", flags)
    try:
        await op.wait_ready()
        began = time.monotonic()
        reconciles = 0.0
        while time.monotonic() - began < min(opts.timeout, 1800):
            try:
                reconciles = sum_metric(await op.metrics(), "controller_runtime_reconcile_total")
            except aiohttp.ClientError:
                reconciles = 0.0
            if reconciles >= n:
                break
            await asyncio.sleep(1.0)
        seconds = time.monotonic() - began
        await asyncio.sleep(opts.settle_seconds)
    finally:
        op.stop()
    requests = audit_counts(workdir, RESTART_USER)
    return {
        "quiet_resync_reconciles": int(reconciles),
        "quiet_resync_seconds": round(seconds, 2),
        "quiet_resync_writes": bench_report.writes(requests),
        "quiet_resync_requests": requests,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--label", default="", help="column heading in --compare")
    parser.add_argument("--dir", type=Path, default=None, help="work dir (default: a temp dir)")
    parser.add_argument("--operator-cmd", default=DEFAULT_OPERATOR_CMD, help="operator command")
    parser.add_argument("--raw", action="store_true", help="no operator: plain-client floor")
    parser.add_argument("--reconcile-concurrency", type=int, default=1)
    parser.add_argument("--qps", type=float, default=100.0)
    parser.add_argument("--burst", type=int, default=200)
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--settle-seconds", type=float, default=5.0)
    parser.add_argument("--timeout", type=float, default=3600.0, help="create -> ready limit")
    parser.add_argument("--compare", nargs="+", type=Path, metavar="REPORT.json")
    parser.add_argument("operator_args", nargs="*", help="extra operator flags (after --)")
    args = parser.parse_args()
    if args.compare:
        reports = [json.loads(p.read_text()) for p in args.compare]
        print(bench_report.render_table(reports))
        return 0
    if args.out is None:
        parser.error("--out is required for a run")
    workdir = args.dir or Path(tempfile.mkdtemp(prefix="kuberay-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    report = asyncio.run(run(args, workdir))
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    if args.dir is None:
        # A temp dir of a run that finished (etcd data, audit log: 100 MiB at N=1000) goes;
        # a failed run's stays for its logs.
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
