"""``kubectl ray`` against real Ray on the real node: ``create --wait`` brings a generated
cluster to ready, ``session`` forwards the real dashboard through the apiserver,
``log`` copies the head's session logs out of the container, and ``job submit``
uploads a working directory and follows a real job to SUCCEEDED (this test plays the
RayJob controller's one part: pointing the RayJob at its cluster).

Needs root, like every real-node test (one real cluster for this module)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import urllib.request
from pathlib import Path

import pytest

from kuberay.kube import Client, NotFound
from tests.e2e.harness import ROOT, OperatorProcess, free_port
from tests.e2e.realcluster import RealCluster
from tests.e2e.test_real_node import real_operator  # noqa: F401  (module fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a real node needs root")


def _cmd(cluster: RealCluster, ns: str, *argv: str) -> list[str]:
    return [
        sys.executable, "-m", "kuberay.kubectl_ray",
        "--kubeconfig", str(cluster.kubeconfig), "-n", ns, *argv,
    ]  # fmt: skip


async def _run(
    cluster: RealCluster, ns: str, *argv: str, timeout: float = 600
) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *_cmd(cluster, ns, *argv),
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    return int(proc.returncode or 0), out.decode(), err.decode()


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return int(resp.status)
    except OSError:
        return 0


async def _point_rayjob_at(admin: Client, ns: str, job: str, cluster: str) -> None:
    for _ in range(600):
        try:
            await admin.get("ray.io/v1", "RayJob", job, ns)
            break
        except NotFound:
            await asyncio.sleep(0.2)
    await admin.patch_status(
        "ray.io/v1", "RayJob", job, {"status": {"rayClusterName": cluster}}, ns
    )


async def test_create_session_log_and_job_submit_on_real_ray(
    real_cluster: RealCluster,
    real_admin: Client,
    real_operator: OperatorProcess,  # noqa: F811
    rns: str,
    tmp_path: Path,
) -> None:
    code, out, err = await _run(
        real_cluster, rns, "create", "cluster", "rc", "--head-cpu", "500m", "--head-memory", "2Gi",
        "--worker-replicas", "0", "--wait", "--timeout", "300s",
    )  # fmt: skip
    assert code == 0, err
    assert "Ray cluster rc is provisioned" in out

    dashboard, client_port = free_port(), free_port()
    session = await asyncio.create_subprocess_exec(
        *_cmd(real_cluster, rns, "session", "rc", "--dashboard-port", str(dashboard),
              "--client-port", str(client_port)),
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        status = 0
        for _ in range(120):
            status = await asyncio.to_thread(_get, f"http://127.0.0.1:{dashboard}/api/version")
            if status == 200:
                break
            await asyncio.sleep(0.5)
    finally:
        session.terminate()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(session.wait(), 10)
    problems: list[str] = []  # every step runs, so one real-node run reports them all
    if status != 200:
        problems.append(
            "the dashboard did not answer through kubectl ray session: "
            + (await session.stdout.read()).decode()  # type: ignore[union-attr]
            + (await session.stderr.read()).decode()[-2000:]  # type: ignore[union-attr]
        )

    out_dir = tmp_path / "logs"
    out_dir.mkdir()
    code, out, err = await _run(
        real_cluster, rns, "log", "rc", "--out-dir", str(out_dir), "--node-type", "head"
    )
    nodes = list(out_dir.iterdir())
    if code != 0 or len(nodes) != 1:
        problems.append(f"log: {code} {err} {out}")
    elif not (nodes[0] / "stdout.log").exists() or not (
        (nodes[0] / "gcs_server.out").exists() or (nodes[0] / "raylet.out").exists()
    ):
        problems.append(f"log: files {sorted(p.name for p in nodes[0].iterdir())}")

    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "main.py").write_text("print('hello from kubectl ray job submit')\n")
    rayjob = tmp_path / "rayjob.yaml"
    rayjob.write_text(
        "apiVersion: ray.io/v1\nkind: RayJob\nmetadata:\n  name: job1\nspec:\n"
        "  submissionMode: InteractiveMode\n  clusterSelector:\n    ray.io/cluster: rc\n"
    )
    pointer = asyncio.create_task(_point_rayjob_at(real_admin, rns, "job1", "rc"))
    code, out, err = await _run(
        real_cluster, rns, "job", "submit", "-f", str(rayjob), "--working-dir", str(workdir),
        "--", "python", "main.py",
    )  # fmt: skip
    await pointer
    if code != 0 or "hello from kubectl ray job submit" not in out:
        problems.append(f"job submit: {code}\n{out[-2000:]}\n{err[-2000:]}")
    elif "Current status: SUCCEEDED" not in out:
        problems.append(f"job submit status: {out[-1000:]}")
    assert not problems, "\n\n".join(problems)
