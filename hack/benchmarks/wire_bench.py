#!/usr/bin/env python3
"""Wire benchmark: status-update conflicts over every sample RayCluster, and the
requests of an idle operator.

    python hack/benchmarks/wire_bench.py --out wire.json [--settle 150] [--idle 600] [--bare]

Starts a full local cluster (kwok nodes make pods Running + Ready), runs
``kuberay-operator`` as a process (as ``hack/bench.py`` does) and measures:

* ``conflicts``: 409 answers by verb (``update`` includes status writes) while
  every RayCluster of KubeRay's samples (``$KUBERAY_SAMPLES_DIR``, default
  ``../shared/reference/kuberay-samples``: see ``tests/kuberay_samples.py``; the repository
  does not carry them) is created and reconciled for
  ``--settle`` seconds;
* ``idle_requests``: the requests by verb of a fresh operator over ``--idle``
  seconds once its caches are synced, watching an empty namespace.

``--bare`` runs etcd + kube-apiserver only (no controllers, no nodes: pods never
run), where most watched kinds see no event at all -- the apiserver then sends no
bookmarks, which is the worst case for idle watches.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(ROOT)

from hack import (  # noqa: E402
    bench,
    controlplane,
)
from kuberay.kube import ApiError, Client  # noqa: E402
from kuberay.testing.crds import install_crds  # noqa: E402
from tests.kuberay_samples import KUBERAY_SAMPLES as SAMPLES  # noqa: E402

IDLE_NAMESPACE = "idle"


def sample_clusters(namespace: str) -> list[dict[str, Any]]:
    """Every RayCluster document of the samples, renamed ``s<i>-<name>`` into ``namespace``."""
    out: list[dict[str, Any]] = []
    for path in sorted(SAMPLES.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "RayCluster":
                doc["metadata"]["namespace"] = namespace
                name = f"s{len(out)}-{doc['metadata']['name']}"[:50].rstrip("-")
                doc["metadata"]["name"] = name
                out.append(doc)
    return out


def by_verb_code(metrics: dict[str, float]) -> dict[str, float]:
    """``verb/code`` -> count, from ``kuberay_rest_client_requests_by_verb_total``."""
    out: dict[str, float] = {}
    for key, value in metrics.items():
        if key.startswith("kuberay_rest_client_requests_by_verb_total{"):
            verb = re.search(r'verb="([^"]+)"', key)
            code = re.search(r'code="([^"]+)"', key)
            if verb and code:
                k = f"{verb.group(1)}/{code.group(1)}"
                out[k] = out.get(k, 0.0) + value
    return out


def diff(after: dict[str, float], before: dict[str, float]) -> dict[str, int]:
    return {
        k: int(v - before.get(k, 0.0)) for k, v in sorted(after.items()) if v > before.get(k, 0)
    }


async def run(
    workdir: Path, settle: float, idle: float, args: list[str], *, bare: bool = False
) -> dict[str, Any]:
    cp = controlplane.ControlPlane(workdir / "cluster", full=not bare)
    cp.start()
    client = await Client.from_kubeconfig(cp.kubeconfig, qps=0)
    op: bench.Operator | None = None
    report: dict[str, Any] = {"operator_args": args, "cluster": "bare" if bare else "full"}
    try:
        await install_crds(client)
        for ns in (bench.NAMESPACE, IDLE_NAMESPACE):
            await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        if settle > 0:
            op = bench.Operator(
                bench.DEFAULT_OPERATOR_CMD, cp.kubeconfig, workdir / "operator.log", args
            )
            await op.wait_ready()
            clusters = sample_clusters(bench.NAMESPACE)
            rejected = 0
            for doc in clusters:
                try:
                    await client.create(doc)
                except ApiError:
                    rejected += 1
            await asyncio.sleep(settle)
            metrics = await op.metrics()
            counts = by_verb_code(metrics)
            listed, _ = await client.list_all("ray.io/v1", "RayCluster", bench.NAMESPACE)
            report.update(
                clusters=len(clusters) - rejected,
                ready=sum(1 for c in listed if (c.get("status") or {}).get("state") == "ready"),
                reconciles=int(bench.sum_metric(metrics, "controller_runtime_reconcile_total")),
                conflicts={k: int(v) for k, v in counts.items() if k.endswith("/409")},
                requests=dict(sorted((k, int(v)) for k, v in counts.items())),
            )
            op.stop()
            op = None
        if idle > 0:
            idle_args = [a for a in args if not a.startswith("--watch-namespace")]
            idle_args.append(f"--watch-namespace={IDLE_NAMESPACE}")
            op = bench.Operator(
                bench.DEFAULT_OPERATOR_CMD, cp.kubeconfig, workdir / "operator-idle.log", idle_args
            )
            await op.wait_ready()
            await asyncio.sleep(10.0)  # caches synced, startup requests done
            before = by_verb_code(await op.metrics())
            start = time.monotonic()
            await asyncio.sleep(idle)
            after = by_verb_code(await op.metrics())
            report["idle_seconds"] = round(time.monotonic() - start, 1)
            report["idle_requests"] = diff(after, before)
    finally:
        if op is not None:
            op.stop()
        await client.close()
        cp.stop()
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--settle", type=float, default=150.0, help="seconds (0: skip)")
    parser.add_argument("--idle", type=float, default=600.0, help="seconds (0: skip)")
    parser.add_argument("--bare", action="store_true", help="etcd + apiserver only")
    parser.add_argument("--dir", type=Path, default=None, help="work dir (default: a temp dir)")
    parser.add_argument("operator_args", nargs="*", help="extra kuberay-operator flags (after --)")
    a = parser.parse_args()
    if a.settle > 0 and not SAMPLES.is_dir():
        print(f"--settle needs KubeRay's samples: {SAMPLES} is not a directory", file=sys.stderr)
        return 2
    workdir = a.dir or Path(tempfile.mkdtemp(prefix="kuberay-wire-"))
    workdir.mkdir(parents=True, exist_ok=True)
    report = asyncio.run(run(workdir, a.settle, a.idle, a.operator_args, bare=a.bare))
    a.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
