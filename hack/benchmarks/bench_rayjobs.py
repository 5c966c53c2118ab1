#!/usr/bin/env python3
"""RayJob benchmark: N RayJobs to Complete, and the dashboard stall as numbers.

    python hack/benchmarks/bench_rayjobs.py --rayjobs 50 --out hack/bench-results/rayjobs-50.json

A plain local control plane (etcd + kube-apiserver, audit log on) and ``kuberay-operator``
as a separate process, as ``hack/bench.py`` runs it (defaults: one reconcile worker per
controller, 2 s dashboard timeout). Nothing runs pods here, so this script stands in for
the kubelet, the Job controller and Ray: it marks every pod Running/Ready (a RayJob head's
IP is its fake dashboard's loopback address, one :class:`FakeDashboard` per RayJob on
``127.x.y.z:8265``), completes K8sJobMode submitter Jobs (the fake then knows the job as
SUCCEEDED, as a submitter would have made it) and moves HTTPMode submissions to SUCCEEDED.

Measured:

* ``rayjobs``: N RayJobs, half K8sJobMode, half HTTPMode: seconds from the first create to
  every RayJob Complete; the operator's API requests per RayJob by verb and resource (from
  the apiserver's audit log, the operator's user agent) and its dashboard requests per RayJob;
  reconciles, operator CPU seconds and peak RSS;
* ``stall``: seconds for 50 plain RayClusters to be ``ready`` alone, then again with 50
  RayJobs whose dashboards never answer (every one asked, none answered, while the
  RayClusters converge).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import datetime as dt
import json
import logging
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(ROOT)

import structlog  # noqa: E402

from hack import controlplane  # noqa: E402
from hack.bench import NAMESPACE, Operator, sum_metric  # noqa: E402
from kuberay.kube import Client, KubeError  # noqa: E402
from kuberay.testing import FakeDashboard  # noqa: E402
from kuberay.testing.crds import install_crds  # noqa: E402

IMAGE = "rayproject/ray:2.52.0"
STALL_CLUSTERS = 50
STALL_HUNG = 50
POLL = 0.5
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
"""


def head_spec() -> dict[str, Any]:
    return {
        "rayStartParams": {},
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "ray-head",
                        "image": IMAGE,
                        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                        "ports": [{"name": "dashboard", "containerPort": 8265}],
                    }
                ]
            }
        },
    }


def rayjob(name: str, mode: str) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "entrypoint": "python -c 'print(42)'",
            "submissionMode": mode,
            "rayClusterSpec": {"rayVersion": "2.52.0", "headGroupSpec": head_spec()},
        },
    }


def raycluster(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"rayVersion": "2.52.0", "headGroupSpec": head_spec()},
    }


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class World:
    """The kubelet, Job controller and Ray of this bench (polling the apiserver)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.dashboards: dict[str, FakeDashboard] = {}  # RayJob name -> its fake
        self.readied: set[str] = set()  # pod uids marked ready
        self.completed: set[str] = set()  # submitter Jobs completed
        self.passes = 0

    async def step(self) -> None:
        jobs, _ = await self.client.list_all("ray.io/v1", "RayJob", NAMESPACE)
        by_cluster = {
            (j.get("status") or {}).get("rayClusterName"): j
            for j in jobs
            if (j.get("status") or {}).get("rayClusterName")
        }
        pods, _ = await self.client.list_all("v1", "Pod", NAMESPACE)
        sem = asyncio.Semaphore(16)
        tasks = []
        for i, pod in enumerate(pods):
            meta = pod["metadata"]
            if meta["uid"] in self.readied or meta.get("deletionTimestamp"):
                continue
            labels = meta.get("labels") or {}
            owner = by_cluster.get(labels.get("ray.io/cluster"))
            fake = self.dashboards.get(owner["metadata"]["name"]) if owner else None
            if labels.get("ray.io/node-type") == "head" and owner is not None and fake is None:
                continue  # not ours yet
            ip = fake.host if fake is not None else f"10.9.{i // 250}.{i % 250 + 2}"
            tasks.append(self._ready(sem, pod, ip))
        submitters, _ = await self.client.list_all("batch/v1", "Job", NAMESPACE)
        names = {j["metadata"]["name"]: j for j in jobs}
        for sub in submitters:
            name = sub["metadata"]["name"]
            owner = names.get(name)
            fake = self.dashboards.get(name)
            if name in self.completed or owner is None or fake is None or fake.hang:
                continue
            job_id = (owner.get("status") or {}).get("jobId")
            if job_id and job_id not in fake.jobs:
                fake.add_job(job_id, status="SUCCEEDED")
            tasks.append(self._complete(sem, name))
        for fake in self.dashboards.values():  # HTTPMode: Ray runs what was submitted
            for job_id, job in list(fake.jobs.items()):
                if job["status"] == "PENDING":
                    fake.set_job_status(job_id, "SUCCEEDED")
        await asyncio.gather(*tasks)
        self.passes += 1

    async def _ready(self, sem: asyncio.Semaphore, pod: dict[str, Any], ip: str) -> None:
        status = {
            "phase": "Running",
            "podIP": ip,
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "ContainersReady", "status": "True"},
            ],
        }
        async with sem:
            with contextlib.suppress(KubeError):
                await self.client.patch_status(
                    "v1", "Pod", pod["metadata"]["name"], {"status": status}, NAMESPACE
                )
                self.readied.add(pod["metadata"]["uid"])

    async def _complete(self, sem: asyncio.Semaphore, name: str) -> None:
        now = _now()
        status = {
            "startTime": now,
            "completionTime": now,
            "succeeded": 1,
            "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now},
                {"type": "Complete", "status": "True", "lastTransitionTime": now},
            ],
        }
        async with sem:
            with contextlib.suppress(KubeError):
                await self.client.patch_status(
                    "batch/v1", "Job", name, {"status": status}, NAMESPACE
                )
                self.completed.add(name)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.step()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), POLL)


async def wait_until(what: str, check: Any, timeout: float, op: Operator) -> float:
    began = time.monotonic()
    while not await check():
        op.sample()
        if op.proc.poll() is not None:
            raise RuntimeError(f"operator died; see {op.log}")
        if time.monotonic() - began > timeout:
            raise TimeoutError(f"{what}: not within {timeout:.0f}s")
        await asyncio.sleep(POLL)
    return time.monotonic() - began


async def states(client: Client, kind: str) -> dict[str, str]:
    items, _ = await client.list_all("ray.io/v1", kind, NAMESPACE)
    key = "jobDeploymentStatus" if kind == "RayJob" else "state"
    return {i["metadata"]["name"]: str((i.get("status") or {}).get(key) or "") for i in items}


def audit_counts(path: Path, since: dt.datetime, until: dt.datetime) -> dict[str, int]:
    """The operator's API requests in [since, until] by ``verb resource[/subresource]``."""
    counts: collections.Counter[str] = collections.Counter()
    with path.open() as f:
        for line in f:
            event = json.loads(line)
            if not str(event.get("userAgent", "")).startswith("kuberay-operator"):
                continue
            verb = event.get("verb", "")
            stage = event.get("stage")
            if not (
                stage == "ResponseComplete" or (verb == "watch" and stage == "ResponseStarted")
            ):
                continue
            when = dt.datetime.fromisoformat(
                event["requestReceivedTimestamp"].replace("Z", "+00:00")
            )
            if not since <= when <= until:
                continue
            ref = event.get("objectRef") or {}
            resource = ref.get("resource", event.get("requestURI", ""))
            if ref.get("subresource"):
                resource += "/" + ref["subresource"]
            counts[f"{verb} {resource}"] += 1
    return dict(sorted(counts.items()))


def _bucket_max(after: dict[str, float], before: dict[str, float], controller: str) -> float:
    """The smallest reconcile-time bucket bound holding every reconcile of ``controller``
    between two scrapes."""
    prefix = "controller_runtime_reconcile_time_seconds_bucket{"
    rows = []
    for key, value in after.items():
        if key.startswith(prefix) and f'controller="{controller}"' in key:
            le = re.search(r'le="([^"]+)"', key)
            if le:
                rows.append((float(le.group(1)), value - before.get(key, 0.0)))
    rows.sort()
    total = rows[-1][1] if rows else 0.0
    return next((le for le, count in rows if count >= total), float("inf"))


def window(before: dict[str, float], after: dict[str, float]) -> dict[str, Any]:
    """What both controllers did between two scrapes of the operator's metrics."""

    def delta(metric: str, **labels: str) -> float:
        return sum_metric(after, metric, **labels) - sum_metric(before, metric, **labels)

    out: dict[str, Any] = {}
    for c in ("raycluster", "rayjob"):
        n = delta("controller_runtime_reconcile_total", controller=c)
        busy = delta("controller_runtime_reconcile_time_seconds_sum", controller=c)
        waits = delta("workqueue_queue_duration_seconds_count", name=c)
        waited = delta("workqueue_queue_duration_seconds_sum", name=c)
        out[c] = {
            "reconciles": int(n),
            "reconcile_seconds_mean": round(busy / n, 4) if n else None,
            "reconcile_seconds_max_bucket": _bucket_max(after, before, c),
            "queue_wait_seconds_mean": round(waited / waits, 4) if waits else None,
        }
    return out


def dashboard_counts(fakes: list[FakeDashboard]) -> dict[str, int]:
    counts: collections.Counter[str] = collections.Counter()
    for fake in fakes:
        for method, path in fake.requests:
            counts[f"{method} {re.sub(r'/api/jobs/[^/]+', '/api/jobs/{id}', path)}"] += 1
    return dict(sorted(counts.items()))


async def run(n: int, workdir: Path, operator_args: list[str]) -> dict[str, Any]:
    policy = workdir / "audit-policy.yaml"
    policy.write_text(AUDIT_POLICY)
    audit = workdir / "audit.log"
    cp = controlplane.ControlPlane(
        workdir / "cluster",
        extra_apiserver_args=[f"--audit-policy-file={policy}", f"--audit-log-path={audit}"],
    )
    cp.start()
    client = await Client.from_kubeconfig(cp.kubeconfig, qps=0, user_agent="kuberay-bench")
    world = World(client)
    stop = asyncio.Event()
    op: Operator | None = None
    net = random.randint(20, 250)
    fakes: list[FakeDashboard] = []
    try:
        await install_crds(client)
        await client.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        )
        op = Operator(cp.kubeconfig, workdir / "operator.log", operator_args)
        await op.wait_ready()
        loop_task = asyncio.create_task(world.run(stop))

        # ---- N RayJobs to Complete
        names = [f"job-{i:04d}" for i in range(n)]
        for i, name in enumerate(names):
            fake = FakeDashboard(f"127.{net}.{i // 250}.{i % 250 + 2}", 8265)
            await fake.start()
            fakes.append(fake)
            world.dashboards[name] = fake
        since = dt.datetime.now(dt.UTC)
        start = time.monotonic()
        for i, name in enumerate(names):
            await client.create(rayjob(name, "HTTPMode" if i % 2 else "K8sJobMode"))

        async def all_complete() -> bool:
            got = await states(client, "RayJob")
            return sum(1 for x in names if got.get(x) == "Complete") == n

        await wait_until("all RayJobs Complete", all_complete, 1800, op)
        t_complete = time.monotonic() - start
        until = dt.datetime.now(dt.UTC)
        metrics = await op.metrics()
        reconciles = {
            c: int(sum_metric(metrics, "controller_runtime_reconcile_total", controller=c))
            for c in ("rayjob", "raycluster")
        }
        cpu = op.cpu_seconds()
        await asyncio.sleep(2.0)  # let the audit log flush
        api = audit_counts(audit, since, until)
        rayjobs = {
            "rayjobs": n,
            "modes": {"K8sJobMode": (n + 1) // 2, "HTTPMode": n // 2},
            "seconds_to_all_complete": round(t_complete, 2),
            "api_requests_per_rayjob": {k: round(v / n, 2) for k, v in api.items()},
            "api_requests_per_rayjob_total": round(sum(api.values()) / n, 2),
            "dashboard_requests_per_rayjob": {
                k: round(v / n, 2) for k, v in dashboard_counts(fakes).items()
            },
            "reconciles": reconciles,
            "operator_cpu_seconds": round(cpu, 2),
        }

        # ---- stall: 50 RayClusters alone, beside 50 hanging-dashboard RayJobs, alone again
        async def converge(prefix: str) -> dict[str, Any]:
            clusters = [f"{prefix}-{i:02d}" for i in range(STALL_CLUSTERS)]
            assert op is not None
            before = await op.metrics()
            began = time.monotonic()
            for name in clusters:
                await client.create(raycluster(name))

            async def ready() -> bool:
                got = await states(client, "RayCluster")
                return all(got.get(x) == "ready" for x in clusters)

            await wait_until(f"{prefix} RayClusters ready", ready, 900, op)
            seconds = time.monotonic() - began
            return {"seconds": round(seconds, 2), **window(before, await op.metrics())}

        alone = await converge("alone")
        hung_names = [f"hung-{i:02d}" for i in range(STALL_HUNG)]
        hung: list[FakeDashboard] = []
        for i, name in enumerate(hung_names):
            fake = FakeDashboard(f"127.{net}.200.{i + 2}", 8265)
            fake.hang = True
            await fake.start()
            hung.append(fake)
            world.dashboards[name] = fake
            await client.create(rayjob(name, "HTTPMode" if i % 2 else "K8sJobMode"))

        async def all_asked() -> bool:
            return all(f.requests_to("/api/jobs/") for f in hung)

        await wait_until("every hanging dashboard asked", all_asked, 600, op)
        asked_before = sum(len(f.requests) for f in hung)
        beside = await converge("beside")
        asked_after = sum(len(f.requests) for f in hung)
        hung_states = await states(client, "RayJob")
        for name in hung_names:  # the RayJobs go (their finalizer: one bounded stop)
            await client.delete("ray.io/v1", "RayJob", name, NAMESPACE)

        async def hung_gone() -> bool:
            got = await states(client, "RayJob")
            return not any(x in got for x in hung_names)

        await wait_until("hanging RayJobs deleted", hung_gone, 300, op)
        for fake in hung:
            await fake.stop()
        again = await converge("again")
        stall = {
            "rayclusters": STALL_CLUSTERS,
            "hanging_rayjobs": STALL_HUNG,
            "rayclusters_ready_alone": alone,
            "rayclusters_ready_beside_hanging_rayjobs": beside,
            "rayclusters_ready_alone_after_the_rayjobs_were_deleted": again,
            "hanging_dashboard_requests_during_convergence": asked_after - asked_before,
            "hanging_dashboard_requests_answered": 0,
            "hanging_rayjobs_by_state": dict(
                collections.Counter(hung_states.get(x, "") for x in hung_names)
            ),
        }
        op.sample()
        stop.set()
        await loop_task
        return {
            "rayjobs": rayjobs,
            "stall": stall,
            "operator_peak_rss_mib": round(op.peak_rss_kib / 1024, 1),
            "operator_args": operator_args,
            "dashboard_timeout_seconds": 2.0,
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        }
    finally:
        stop.set()
        if op is not None:
            op.stop()
        for fake in fakes + [f for f in world.dashboards.values() if f not in fakes]:
            with contextlib.suppress(Exception):
                await fake.stop()
        await client.close()
        cp.stop()


def main() -> int:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rayjobs", type=int, default=50)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dir", type=Path, default=None, help="work dir (default: a temp dir)")
    parser.add_argument("operator_args", nargs="*", help="extra kuberay-operator flags (after --)")
    args = parser.parse_args()
    workdir = args.dir or Path(tempfile.mkdtemp(prefix="kuberay-bench-rayjobs-"))
    workdir.mkdir(parents=True, exist_ok=True)
    report = asyncio.run(run(args.rayjobs, workdir, args.operator_args))
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
