#!/usr/bin/env python3
"""API server benchmark: what ``kuberay-apiserver``'s proxy adds to a list and a GET.

    python hack/benchmarks/bench_apiserver.py [--clusters 1000] [--lists 40] [--gets 400] \\
        [--out hack/bench-results/apiserver-proxy.json] [--profile FILE.svg] \\
        [--baseline-checkout DIR]

A plain local control plane (etcd + kube-apiserver, ``kuberay.testing.envtest``), the ray.io
CRDs, ``--clusters`` RayClusters (``tests/samples/raycluster.minimal.yaml``, renamed) in
namespace ``bench``, then ``kuberay-apiserver`` as a subprocess (``python -m kuberay.apiserver``
of this checkout, as ``make run`` starts it) on 127.0.0.1 in caller mode, over the admin
kubeconfig. The caller is the ServiceAccount ``make run`` makes
(``hack/cluster/apiserver_local.user_rbac``), with a TokenRequest token.

One aiohttp session per path, keep-alive, the same headers (``Accept: application/json``,
``Accept-Encoding: identity`` so that both paths carry the same bytes; ``--gzip`` lets the
direct path ask for gzip instead, as client-go does):

* ``direct``: the kube-apiserver with the ServiceAccount's token (the caller's own identity);
* ``proxy``: the API server with the same token;
* ``direct_admin_cert``: the kube-apiserver with the admin client certificate (reference);
* ``proxy_baseline`` (with ``--baseline-checkout DIR``): a second API server, of the
  ``kuberay`` package in DIR (e.g. ``git archive`` of an older commit), with the same token:
  a before/after comparison under the same load.

Measured, the paths taking turns in each round (so the machine's load drifts over all
of them alike): ``--lists`` LISTs of every RayCluster in the namespace and ``--gets`` GETs of
one, each timed from the request to the last body byte; median and p90 per path, the proxy's
overhead over ``direct`` (list: percent of the median; GET: milliseconds of the median), the
goal (≤ 10 % and ≤ 2 ms), CPU milliseconds per request of each API server and of this
process as each path's caller (TLS to the kube-apiserver or plain HTTP to the proxy), the
load average before and after. ``--profile FILE``: ``py-spy record`` of the API server over the
measurement (needs py-spy): a flame graph for ``FILE.svg``, else collapsed stacks.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(ROOT)

import aiohttp  # noqa: E402
import yaml  # noqa: E402

from hack import controlplane  # noqa: E402
from hack.cluster import apiserver_local  # noqa: E402
from kuberay.kube import Client  # noqa: E402
from kuberay.testing.crds import install_crds  # noqa: E402

NAMESPACE = "bench"
SAMPLE = ROOT / "tests" / "samples" / "raycluster.minimal.yaml"
LIST_GOAL_PERCENT = 10.0
GET_GOAL_MS = 2.0
CREATE_CONCURRENCY = 32
WARMUP = 3
#: The path through ``--baseline-checkout``'s API server.
BASELINE = "proxy_baseline"


def summary(samples: Sequence[float]) -> dict[str, float]:
    """Median, p90 (nearest rank), min and max of ``samples`` (seconds) in milliseconds."""
    ordered = sorted(samples)
    rank = max(0, -(-9 * len(ordered) // 10) - 1)  # ceil(0.9 n) - 1
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 3),
        "p90_ms": round(ordered[rank] * 1000, 3),
        "min_ms": round(ordered[0] * 1000, 3),
        "max_ms": round(ordered[-1] * 1000, 3),
    }


def verdict(
    lists: Mapping[str, Mapping[str, float]], gets: Mapping[str, Mapping[str, float]]
) -> dict[str, Any]:
    """The proxy's overhead over ``direct`` (list: percent of the median; GET: ms of the
    median) and whether it meets the goal (judged on the figures as reported)."""
    list_pct = round((lists["proxy"]["median_ms"] / lists["direct"]["median_ms"] - 1) * 100, 1)
    get_ms = round(gets["proxy"]["median_ms"] - gets["direct"]["median_ms"], 3)
    return {
        "list_overhead_percent": list_pct,
        "list_p90_overhead_percent": round(
            (lists["proxy"]["p90_ms"] / lists["direct"]["p90_ms"] - 1) * 100, 1
        ),
        "get_median_overhead_ms": get_ms,
        "get_p90_overhead_ms": round(gets["proxy"]["p90_ms"] - gets["direct"]["p90_ms"], 3),
        "goal": {
            "list_overhead_percent_max": LIST_GOAL_PERCENT,
            "get_median_overhead_ms_max": GET_GOAL_MS,
        },
        "goal_met": list_pct <= LIST_GOAL_PERCENT and get_ms <= GET_GOAL_MS,
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def create_clusters(client: Client, n: int) -> None:
    """``n`` RayClusters ``rc-0000``... in :data:`NAMESPACE`, created ``CREATE_CONCURRENCY``
    at a time."""
    body = yaml.safe_load(SAMPLE.read_text())
    gate = asyncio.Semaphore(CREATE_CONCURRENCY)

    async def one(i: int) -> None:
        obj = json.loads(json.dumps(body))
        obj["metadata"] = {"name": f"rc-{i:04d}", "namespace": NAMESPACE}
        async with gate:
            await client.create(obj)

    await asyncio.gather(*(one(i) for i in range(n)))


async def caller_token(client: Client) -> str:
    """A one-hour token of ``make run``'s API server user (made here)."""
    for doc in apiserver_local.user_rbac():
        await client.apply(doc, field_manager="kuberay-bench", force=True)
    sa, ns = apiserver_local.USER_SA, apiserver_local.USER_NAMESPACE
    answer = await client.request(
        "POST",
        f"/api/v1/namespaces/{ns}/serviceaccounts/{sa}/token",
        verb="create",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    return str(answer["status"]["token"])


Fetch = Callable[[str], Awaitable[tuple[int, int, str]]]


def fetcher(session: aiohttp.ClientSession, base: str, headers: Mapping[str, str]) -> Fetch:
    """``GET base+path``: (status, body bytes, Content-Encoding), the body read whole."""

    async def fetch(path: str) -> tuple[int, int, str]:
        async with session.get(base + path, headers=dict(headers), auto_decompress=False) as resp:
            body = await resp.read()
            return resp.status, len(body), resp.headers.get("Content-Encoding", "")

    return fetch


@dataclasses.dataclass
class Rounds:
    """What :func:`rounds` measured, by path: seconds per request, this process's CPU
    seconds over all of them (the caller's share: TLS or not, parsing), and the (bytes,
    encoding) of the last answer."""

    times: dict[str, list[float]]
    client_cpu: dict[str, float]
    shape: dict[str, tuple[int, str]]


async def rounds(fetches: Mapping[str, Fetch], path: str, n: int) -> Rounds:
    """``n`` rounds (after :data:`WARMUP`) in which every path GETs ``path`` once, in turn
    (the first path of a round rotates)."""
    names = list(fetches)
    out = Rounds({name: [] for name in names}, dict.fromkeys(names, 0.0), {})
    for i in range(WARMUP + n):
        order = names[i % len(names) :] + names[: i % len(names)]
        for name in order:
            cpu, began = time.process_time(), time.perf_counter()
            status, size, encoding = await fetches[name](path)
            took, cpu = time.perf_counter() - began, time.process_time() - cpu
            if status != 200:
                raise RuntimeError(f"{name} GET {path}: {status}")
            out.shape[name] = (size, encoding)
            if i >= WARMUP:
                out.times[name].append(took)
                out.client_cpu[name] += cpu
    return out


def _commit() -> str:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() or "unknown"


def _start_server(
    workdir: Path, kubeconfig: Path, checkout: Path
) -> tuple[apiserver_local.LocalApiServer, int]:
    """``kuberay-apiserver`` of ``checkout`` on a free loopback port; it and its pid."""
    workdir.mkdir(parents=True, exist_ok=True)
    server = apiserver_local.LocalApiServer(
        workdir, f"127.0.0.1:{controlplane.free_port()}", kubeconfig, checkout=checkout
    )
    server.start(os.environ)
    return server, int((workdir / apiserver_local.PID_FILE).read_text())


def _spy(pid: int, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            *(_py_spy(), "record", "-p", str(pid), "-o", str(out)),
            *("--rate", "250", "--format", _profile_format(out)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )


async def _prepare(client: Client, clusters: int) -> float:
    """The CRDs, the namespace and ``clusters`` RayClusters; seconds the creates took."""
    await install_crds(client)
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    began = time.monotonic()
    await create_clusters(client, clusters)
    return time.monotonic() - began


async def measure(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Control plane, RayClusters, the API server(s), the rounds; the report."""
    cp = controlplane.ControlPlane(workdir / "cluster")
    cp.start()
    client = await Client.from_kubeconfig(cp.kubeconfig, qps=0, user_agent="kuberay-bench")
    servers: dict[str, tuple[apiserver_local.LocalApiServer, int]] = {}
    spy: subprocess.Popen[bytes] | None = None
    sessions: list[aiohttp.ClientSession] = []
    try:
        created = await _prepare(client, args.clusters)
        token = await caller_token(client)
        servers["proxy"] = _start_server(workdir / "proxy", cp.kubeconfig, ROOT)
        if args.baseline_checkout:
            servers[BASELINE] = _start_server(
                workdir / BASELINE, cp.kubeconfig, args.baseline_checkout.resolve()
            )
        if args.profile:
            spy = _spy(servers["proxy"][1], args.profile)
            await asyncio.sleep(1.0)

        assert cp.certs is not None  # started
        trust = ssl.create_default_context(cafile=str(cp.certs.serving_ca))
        bearer = {"Authorization": f"Bearer {token}"}
        common = {"Accept": "application/json", "Accept-Encoding": "identity"}
        direct_common = {**common, "Accept-Encoding": "gzip"} if args.gzip else common

        def session(ssl_context: ssl.SSLContext | None = None) -> aiohttp.ClientSession:
            connector = aiohttp.TCPConnector(limit=1, ssl=ssl_context or True)
            sessions.append(aiohttp.ClientSession(connector=connector))
            return sessions[-1]

        fetches = {
            "direct": fetcher(session(trust), cp.server, {**direct_common, **bearer}),
            **{
                name: fetcher(session(), server.url, {**common, **bearer})
                for name, (server, _) in servers.items()
            },
            "direct_admin_cert": fetcher(session(cp.ssl_context()), cp.server, direct_common),
        }
        collection = f"/apis/ray.io/v1/namespaces/{NAMESPACE}/rayclusters"
        load_start = [round(x, 2) for x in os.getloadavg()]
        cpu0 = {name: cpu_seconds(pid) for name, (_, pid) in servers.items()}
        listed = await rounds(fetches, collection, args.lists)
        cpu1 = {name: cpu_seconds(pid) for name, (_, pid) in servers.items()}
        got = await rounds(fetches, f"{collection}/rc-{args.clusters // 2:04d}", args.gets)
        cpu2 = {name: cpu_seconds(pid) for name, (_, pid) in servers.items()}
        load_end = [round(x, 2) for x in os.getloadavg()]
        lists = {name: summary(times) for name, times in listed.times.items()}
        gets = {name: summary(times) for name, times in got.times.items()}
        return {
            "label": args.label,
            "commit": _commit(),
            "baseline_checkout": str(args.baseline_checkout or "") or None,
            "clusters": args.clusters,
            "seconds_to_create_clusters": round(created, 1),
            "lists": args.lists,
            "gets": args.gets,
            "auth_mode": "caller",
            "direct_accept_encoding": direct_common["Accept-Encoding"],
            "list_answer_bytes": {name: size for name, (size, _) in listed.shape.items()},
            "list_answer_encoding": {
                name: enc or "identity" for name, (_, enc) in listed.shape.items()
            },
            "get_answer_bytes": {name: size for name, (size, _) in got.shape.items()},
            "list": lists,
            "get": gets,
            **verdict(lists, gets),
            "kuberay_apiserver_cpu_ms_per_list": {
                name: round((cpu1[name] - cpu0[name]) * 1000 / (args.lists + WARMUP), 1)
                for name in servers
            },
            "kuberay_apiserver_cpu_ms_per_get": {
                name: round((cpu2[name] - cpu1[name]) * 1000 / (args.gets + WARMUP), 3)
                for name in servers
            },
            "client_cpu_ms_per_list": {
                name: round(cpu * 1000 / args.lists, 1) for name, cpu in listed.client_cpu.items()
            },
            "client_cpu_ms_per_get": {
                name: round(cpu * 1000 / args.gets, 3) for name, cpu in got.client_cpu.items()
            },
            "cpus": os.cpu_count(),
            "load_average_start": load_start,
            "load_average_end": load_end,
            "profile": str(args.profile) if args.profile else None,
        }
    finally:
        for each in sessions:
            await each.close()
        if spy is not None:
            spy.send_signal(2)  # SIGINT: py-spy writes its file
            with contextlib.suppress(subprocess.TimeoutExpired):
                spy.wait(60)
        for server, _ in servers.values():
            server.stop()
        await client.close()
        cp.stop()


def _profile_format(path: Path) -> str:
    """py-spy's output format for ``path``: a flame graph for ``.svg``, else collapsed
    stacks (one line per stack, then its sample count)."""
    return "flamegraph" if path.suffix == ".svg" else "raw"


def _py_spy() -> str:
    found = shutil.which(
        "py-spy", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    )
    if not found:
        raise SystemExit("--profile needs py-spy (pip install py-spy)")
    return found


def run_and_report(
    measure: Callable[[argparse.Namespace, Path], Coroutine[Any, Any, dict[str, Any]]],
    args: argparse.Namespace,
    name: str,
) -> int:
    """Run ``measure`` in a fresh work dir (kept with ``args.keep``), print its report as JSON
    and write it to ``args.out`` when given; the exit code (0)."""
    workdir = Path(tempfile.mkdtemp(prefix=f"kuberay-bench-{name}-"))
    try:
        report = asyncio.run(measure(args, workdir))
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the flags, measure, print (and write) the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--lists", type=int, default=40, help="LIST rounds")
    parser.add_argument("--gets", type=int, default=400, help="GET rounds")
    parser.add_argument("--gzip", action="store_true", help="the direct paths ask for gzip")
    parser.add_argument("--label", default="")
    parser.add_argument("--profile", type=Path, help="py-spy flame graph of the API server")
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--baseline-checkout",
        type=Path,
        help=f"also measure the API server of this checkout (path {BASELINE!r})",
    )
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs)")
    args = parser.parse_args(argv)
    return run_and_report(measure, args, "apiserver")


if __name__ == "__main__":
    sys.exit(main())
