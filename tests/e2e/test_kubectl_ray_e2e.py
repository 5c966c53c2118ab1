"""The ``kubectl ray`` walkthrough of docs/kubectl-ray.md on a full cluster (scheduler, kwok
nodes) with the operator as its own process, the CLI run as a separate process too: create a
cluster and wait for it, list it, then ask ``why`` about one the scheduler cannot place."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from kuberay.kube import Client
from tests.e2e.conftest import E2ECluster
from tests.e2e.harness import ROOT, OperatorProcess
from tests.helpers import eventually


async def kubectl_ray(cluster: E2ECluster, ns: str, *argv: str) -> tuple[int, str, str]:
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig), "PYTHONPATH": str(ROOT)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kuberay.kubectl_ray",
        "-n",
        ns,
        *argv,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    return int(proc.returncode or 0), out.decode(), err.decode()


async def test_readme_walkthrough(
    e2e_cluster: E2ECluster, shared_operator: OperatorProcess, admin: Client, ns: str
) -> None:
    code, out, err = await kubectl_ray(
        e2e_cluster, ns, "create", "cluster", "demo", "--worker-replicas", "2", "--wait",
        "--timeout", f"{int(e2e_cluster.timeout(120))}s",
    )  # fmt: skip
    assert code == 0, err
    assert out == "Created Ray cluster: demo\nRay cluster demo is provisioned\n"

    code, out, _ = await kubectl_ray(e2e_cluster, ns, "get", "cluster")
    row = out.splitlines()[1].split()
    assert row[:4] == ["demo", ns, "2", "2"] and "ready" in row

    code, out, _ = await kubectl_ray(e2e_cluster, ns, "why", "raycluster/demo")
    assert code == 0 and out.startswith(f"RayCluster {ns}/demo is ready.")

    code, _, err = await kubectl_ray(
        e2e_cluster, ns, "create", "cluster", "big", "--head-cpu", "5000"
    )
    assert code == 0, err

    async def diagnosed() -> dict[str, Any] | None:
        _, text, _ = await kubectl_ray(e2e_cluster, ns, "why", "raycluster/big", "-o", "json")
        doc: dict[str, Any] = json.loads(text)
        return doc if doc["findings"] and doc["findings"][0]["reason"] == "Unschedulable" else None

    doc = await eventually(diagnosed, timeout=e2e_cluster.timeout(60), interval=1.0)
    assert doc["ready"] is False
    assert "Insufficient cpu" in doc["summary"]  # the real scheduler's message

    code, out, _ = await kubectl_ray(e2e_cluster, ns, "delete", "demo", "big", "-y")
    assert code == 0
    assert out == "Deleted raycluster demo\nDeleted raycluster big\n"
