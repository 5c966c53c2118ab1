#!/usr/bin/env python3
"""Dashboard isolation benchmark: does a crowd of dead dashboards slow a live one?

    python hack/benchmarks/bench_dashboard.py --dead 100 --seconds 20

``--dead`` RayJob owners, each with its own cluster, poll dashboards that never answer (one
fake dashboard stands in for all of them; 2 s timeout, as KubeRay),
one owner polls a healthy fake dashboard; every owner asks for its job status every 3 s (the
RayJob requeue period), as the RayJob controller would. Printed (JSON): how long the healthy
owner's refreshes took from the ask to the outcome (p50, max), how many were made, how many
calls were in flight at most, and the reconcile-side cost of an ask (it never awaits the
network). In KubeRay each dead dashboard blocks a reconcile worker for 2 s; here the asks
return at once and the live owner's refreshes stay fast (the first round can wait one timeout
for a slot when more than ``max_in_flight`` never-seen dashboards are asked at once).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(ROOT)

import structlog  # noqa: E402

from kuberay.controllers.dashboard import (  # noqa: E402
    DashboardClient,
    DashboardPoller,
    DashboardTarget,
    ServeProxyTarget,
)
from kuberay.controllers.dashboard.client import client_at  # noqa: E402
from kuberay.http import OriginPools  # noqa: E402
from kuberay.testing import FakeDashboard  # noqa: E402

REQUEUE = 3.0


class Source:
    def __init__(self, pools: OriginPools, urls: dict[str, str]) -> None:
        self.pools = pools
        self.urls = urls

    async def client_for(self, t: DashboardTarget | ServeProxyTarget) -> DashboardClient:
        assert isinstance(t, DashboardTarget)
        url = self.urls["dead" if t.cluster_name.startswith("dead") else t.cluster_name]
        return client_at(self.pools, url, timeout=2.0)


def target(name: str) -> DashboardTarget:
    return DashboardTarget(namespace="bench", cluster_name=name, head_service=f"{name}-head-svc")


async def run(dead: int, seconds: float, max_in_flight: int) -> dict[str, Any]:
    async with (
        FakeDashboard("127.0.0.201", 0) as dead_dash,
        FakeDashboard("127.0.0.202", 0) as live_dash,
    ):
        pools = OriginPools()
        dead_dash.hang = True
        dead_dash.add_job("job")
        live_dash.add_job("job", status="RUNNING")
        poller = DashboardPoller(
            Source(pools, {"dead": dead_dash.url, "live": live_dash.url}),
            max_in_flight=max_in_flight,
        )
        live_owner = ("bench", "live")
        asked_at: list[float] = []
        latencies: list[float] = []
        ask_costs: list[float] = []
        peak = 0

        def on_result(owner: tuple[str, str]) -> None:
            if owner == live_owner and asked_at:
                latencies.append(time.monotonic() - asked_at.pop())

        poller.on_result = on_result
        deadline = time.monotonic() + seconds
        tick = 0
        try:
            while time.monotonic() < deadline:
                started = time.perf_counter()
                for i in range(dead):
                    poller.job_info(("bench", f"dead-{i}"), target(f"dead-{i}"), "job")
                ask_costs.append((time.perf_counter() - started) / max(dead, 1))
                # A new job id per round: the live outcome changes, so each refresh notifies.
                asked_at[:] = [time.monotonic()]
                poller.job_info(live_owner, target("live"), "job" if tick % 2 else "job-x")
                tick += 1
                peak = max(peak, poller.in_flight)
                await asyncio.sleep(REQUEUE)
        finally:
            await poller.close()
            await pools.close()
        return {
            "dead_owners": dead,
            "max_in_flight": max_in_flight,
            "seconds": seconds,
            "live_refreshes": len(latencies),
            "live_latency_p50_ms": round(statistics.median(latencies) * 1000, 1)
            if latencies
            else None,
            "live_latency_max_ms": round(max(latencies) * 1000, 1) if latencies else None,
            "live_latency_max_after_first_round_ms": round(max(latencies[1:]) * 1000, 1)
            if len(latencies) > 1
            else None,
            "dead_requests_sent": len(dead_dash.requests),
            "peak_calls_in_flight": peak,
            "ask_cost_us": round(statistics.mean(ask_costs) * 1e6, 1) if ask_costs else None,
        }


def main() -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dead", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--max-in-flight", type=int, default=64)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.dead, args.seconds, args.max_in_flight)), indent=2))


if __name__ == "__main__":
    main()
