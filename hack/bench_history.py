"""Benchmark the history server on a synthetic store (numbers for docs; never a test).

    python hack/bench_history.py --sessions N --tasks M --out FILE [--kuberay-go-server BIN]

1. Starts moto's S3 server on 127.0.0.1 (``hack/cluster/object_store.py``) and fills it in KubeRay's
   layout: N session markers (``cluster-metadata/...``, RayClusters and RayJobs over ten
   namespaces), ten of them (the newest) with M tasks each in Ray 2.60's event shapes (per
   task one TASK_DEFINITION, three TASK_LIFECYCLE and one TASK_PROFILE event, as the recorded
   2.60 run sends them), plus node and driver-job events, in JSONL files of at most
   ``--events-per-file`` events under ``<node>/job_events/<job>/`` and ``<node>/node_events/``.
2. Starts ``kuberay-history-server`` over it (127.0.0.1, a free port) and measures:

   * ``server_ready_seconds``: from starting the process until ``/readz`` answers;
   * ``clusters_list_ms``: the first ``/clusters`` (the listing of the N markers), and
     ``clusters_list_warm_ms`` the median of ten more;
   * ``cold_open_seconds``: ``/enter_cluster`` of an M-task session, then
     ``/api/v0/tasks?detail=1&limit=10000`` read whole, both counted;
   * ``warm_tasks_p50_ms``/``warm_tasks_p99_ms``: ``--warm-requests`` more of that request;
   * ``rss_mib``: the server's RSS once the ten M-task sessions were opened.

   Before any server runs, ``store_fetch_seconds`` is the time to GET every object of one
   M-task session from the store (16 at a time, the server's read concurrency) without
   decoding anything: the part of a cold open that is the store's, which no server reading
   the same objects goes below.

3. With ``--kuberay-go-server BIN`` (a KubeRay history server binary you provide; this
   project neither contains nor builds one) the same store is served by it too, and the
   same keys are reported prefixed ``kuberay_go_`` (``null`` without it). It needs a
   Kubernetes API: a local control plane (``hack/controlplane.py``) is started for it and
   passed as ``--kubeconfigs``, with the project's CRDs installed (no RayCluster exists, so
   every stored session is dead to it). It listens on ``:8080`` (hard-coded upstream), which
   must be free. ``--kuberay-go-warm-requests`` bounds its warm requests (it decodes the
   whole session on each one).

Everything listens on and dials 127.0.0.1 only. The JSON also records the store's size and
how long filling it took.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(ROOT)

import aiohttp  # noqa: E402
import orjson  # noqa: E402

from hack.bench_history_store import (  # noqa: E402
    BIG_SESSIONS,
    big_session_objects,
    cluster_of,
    session_name,
)
from hack.cluster.object_store import ObjectStoreServer, stop_process_group  # noqa: E402
from kuberay.historyserver.layout import Layout  # noqa: E402
from kuberay.historyserver.storage.config import open_store, storage_settings  # noqa: E402

TASKS_URL = "/api/v0/tasks?detail=1&limit=10000"
PUT_CONCURRENCY = 16
METRIC_KEYS = (
    "server_ready_seconds",
    "cold_open_seconds",
    "warm_tasks_p50_ms",
    "warm_tasks_p99_ms",
    "clusters_list_ms",
    "clusters_list_warm_ms",
    "rss_mib",
)


async def fill_store(
    env: dict[str, str], sessions: int, tasks: int, per_file: int
) -> dict[str, Any]:
    """Put the synthetic store; returns what was put, how long it took and (``first_keys``)
    the keys of big session 0."""
    started = time.monotonic()
    first_keys: list[str] = []
    store = await open_store(storage_settings(env=env))
    gate = asyncio.Semaphore(PUT_CONCURRENCY)
    count = size = 0

    async def put(key: str, body: bytes) -> None:
        nonlocal count, size
        async with gate:
            await store.put(key, body)
        count += 1
        size += len(body)

    try:
        markers = [
            put(Layout(cluster_of(i)).session_marker_key(session_name(i)), b"")
            for i in range(sessions)
        ]
        await asyncio.gather(*markers)
        for i in range(min(BIG_SESSIONS, sessions)):
            objects = big_session_objects(i, tasks, per_file)
            if i == 0:
                first_keys = [key for key, _ in objects]
            await asyncio.gather(*(put(k, b) for k, b in objects))
    finally:
        await store.close()
    return {
        "objects": count,
        "bytes": size,
        "fill_seconds": round(time.monotonic() - started, 2),
        "first_keys": first_keys,
    }


async def store_fetch_seconds(env: dict[str, str], keys: list[str]) -> float:
    """Wall time to GET ``keys`` (16 at a time), bytes discarded."""
    store = await open_store(storage_settings(env=env))
    gate = asyncio.Semaphore(16)

    async def get(key: str) -> int:
        async with gate:
            return len(await store.get(key))

    try:
        started = time.monotonic()
        await asyncio.gather(*(get(k) for k in keys))
        return round(time.monotonic() - started, 3)
    finally:
        await store.close()


# ----- measuring a server -------------------------------------------------------------------


def free_port() -> int:
    """A port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mib(pid: int) -> float:
    """``VmRSS`` of ``pid`` in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds ``pid`` has used (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1))
    return ordered[rank]


async def wait_ready(base: str, popen: subprocess.Popen[bytes], timeout: float) -> None:
    """Poll ``/readz`` every 10 ms until it answers 200."""
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            if popen.poll() is not None:
                raise RuntimeError(f"the server exited with code {popen.returncode}")
            with suppress(aiohttp.ClientError, OSError):
                async with http.get(base + "/readz", timeout=aiohttp.ClientTimeout(total=1)) as r:
                    if r.status == 200:
                        return
            await asyncio.sleep(0.01)
    raise RuntimeError(f"{base} not ready after {timeout:.0f}s")


async def measure(
    start: Callable[[], subprocess.Popen[bytes]],
    base: str,
    sessions: int,
    warm_requests: int,
) -> dict[str, Any]:
    """Start a server with ``start`` and take the numbers (see the module doc)."""
    t0 = time.monotonic()
    popen = start()
    try:
        await wait_ready(base, popen, timeout=120)
        out: dict[str, Any] = {
            "server_ready_seconds": round(time.monotonic() - t0, 3),
            "server_ready_cpu_seconds": round(cpu_seconds(popen.pid), 2),
            "load_average_at_start": os.getloadavg(),
        }
        timeout = aiohttp.ClientTimeout(total=600)
        async with aiohttp.ClientSession(timeout=timeout) as plain:
            t = time.monotonic()
            async with plain.get(base + "/clusters") as r:
                listed = await r.json()
            out["clusters_list_ms"] = round((time.monotonic() - t) * 1000, 1)
            out["clusters_listed"] = len(listed)
            warm_lists = []
            for _ in range(10):
                t = time.monotonic()
                async with plain.get(base + "/clusters") as r:
                    await r.read()
                warm_lists.append((time.monotonic() - t) * 1000)
            out["clusters_list_warm_ms"] = round(statistics.median(warm_lists), 1)
        opened: list[float] = []
        opened_cpu: list[float] = []
        for i in range(min(BIG_SESSIONS, sessions)):
            c = cluster_of(i)
            kind, name = (c.owner_kind, c.owner_name) if c.owner_kind else ("raycluster", c.name)
            enter = f"{base}/enter_cluster/{c.namespace}/{kind}/{name}/{session_name(i)}"
            jar = aiohttp.CookieJar(unsafe=True)
            async with aiohttp.ClientSession(cookie_jar=jar, timeout=timeout) as http:
                cpu = cpu_seconds(popen.pid)
                t = time.monotonic()
                async with http.get(enter) as r:
                    await r.read()
                    if r.status != 200:
                        raise RuntimeError(f"{enter}: {r.status}")
                async with http.get(base + TASKS_URL) as r:
                    body = await r.read()
                    if r.status != 200:
                        raise RuntimeError(f"{TASKS_URL}: {r.status} {body[:200]!r}")
                opened.append(time.monotonic() - t)
                opened_cpu.append(cpu_seconds(popen.pid) - cpu)
                if i == 0:
                    out["tasks_answer_bytes"] = len(body)
                    out["tasks_returned"] = len(orjson.loads(body)["data"]["result"]["result"])
                    warm = []
                    for _ in range(warm_requests):
                        t = time.monotonic()
                        async with http.get(base + TASKS_URL) as r:
                            await r.read()
                        warm.append((time.monotonic() - t) * 1000)
                    out["warm_tasks_p50_ms"] = round(percentile(warm, 0.50), 1)
                    out["warm_tasks_p99_ms"] = round(percentile(warm, 0.99), 1)
        out["cold_open_seconds"] = round(opened[0], 3)
        out["cold_open_all_seconds"] = [round(x, 3) for x in opened]
        out["cold_open_server_cpu_seconds"] = [round(x, 2) for x in opened_cpu]
        out["rss_mib"] = rss_mib(popen.pid)
        out["load_average_at_end"] = os.getloadavg()
        return out
    finally:
        stop_process_group(popen, timeout=10)


def ours(env: dict[str, str], log: Path) -> tuple[Callable[[], subprocess.Popen[bytes]], str]:
    """How to start our server over the store, and its base URL."""
    port = free_port()
    binary = Path(sys.executable).with_name("kuberay-history-server")
    cmd = [str(binary), "--listen", f"127.0.0.1:{port}", "--log-format", "console"]

    def start() -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            return subprocess.Popen(
                cmd,
                env={**os.environ, **env},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    return start, f"http://127.0.0.1:{port}"


def kuberay_go(
    binary: Path, env: dict[str, str], kubeconfig: Path, log: Path
) -> tuple[Callable[[], subprocess.Popen[bytes]], str]:
    """How to start KubeRay's server (``binary``) over the store: it listens on ``:8080``."""
    cmd = [str(binary), "--storage-backend=s3", f"--kubeconfigs={kubeconfig}"]

    def start() -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            return subprocess.Popen(
                cmd,
                env={**os.environ, **env},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    return start, "http://127.0.0.1:8080"


# ----- main ---------------------------------------------------------------------------------


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=1000, help="stored sessions (N)")
    p.add_argument("--tasks", type=int, default=10000, help="tasks in each of ten sessions (M)")
    p.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    p.add_argument("--kuberay-go-server", type=Path, default=None, help="KubeRay's binary")
    p.add_argument("--warm-requests", type=int, default=100)
    p.add_argument("--kuberay-go-warm-requests", type=int, default=100)
    p.add_argument("--events-per-file", type=int, default=10000)
    p.add_argument("--workdir", type=Path, default=None, help="default: a temporary dir")
    return p.parse_args(argv)


async def _run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    store = ObjectStoreServer(workdir / "store", "127.0.0.1")
    info = store.start()
    try:
        env = info.env()
        filled = await fill_store(env, args.sessions, args.tasks, args.events_per_file)
        filled["store_fetch_seconds"] = await store_fetch_seconds(env, filled.pop("first_keys"))
        print(f"store filled: {filled}", flush=True)
        start, base = ours(env, workdir / "server.log")
        result: dict[str, Any] = await measure(start, base, args.sessions, args.warm_requests)
        print(f"ours: {result}", flush=True)
        go: dict[str, Any] | None = None
        if args.kuberay_go_server is not None:
            go = await _measure_go(args, env, workdir)
            print(f"kuberay go: {go}", flush=True)
        for key in METRIC_KEYS:
            result[f"kuberay_go_{key}"] = go.get(key) if go else None
        result.update(
            sessions=args.sessions,
            tasks_per_session=args.tasks,
            big_sessions=min(BIG_SESSIONS, args.sessions),
            warm_requests=args.warm_requests,
            kuberay_go_warm_requests=args.kuberay_go_warm_requests if go else None,
            store=filled,
            kuberay_go_server=str(args.kuberay_go_server) if args.kuberay_go_server else None,
            kuberay_go_extra=go,
            machine={
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "platform": platform.platform(),
            },
            measured_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
        return result
    finally:
        store.stop()


async def _measure_go(
    args: argparse.Namespace, env: dict[str, str], workdir: Path
) -> dict[str, Any]:
    from hack import controlplane
    from kuberay.kube import Client
    from kuberay.testing.crds import install_crds

    cp = controlplane.ControlPlane(workdir / "controlplane")
    cp.start()
    try:
        client = await Client.from_kubeconfig(cp.kubeconfig, qps=0)
        try:  # KubeRay's server asks for RayClusters to tell live from dead sessions
            await install_crds(client)
        finally:
            await client.close()
        start, base = kuberay_go(args.kuberay_go_server, env, cp.kubeconfig, workdir / "go.log")
        return await measure(start, base, args.sessions, args.kuberay_go_warm_requests)
    finally:
        cp.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, write ``--out``; 0 on success."""
    args = _parse(argv)
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        result = asyncio.run(_run(args, workdir))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print(json.dumps({k: result.get(k) for k in METRIC_KEYS}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
