"""The tour ``make run`` prints, run as written on real Ray.

``make run`` (``hack/cluster/run.py``, ``--nodes auto``) starts the same cluster as the session's
shared real-node cluster (``ControlPlane(full=True, real_nodes=1, real_nodes_only=True)``) and the
operator on the host with its ServiceAccount, allowed to dial loopback and the node's pod
network (``run.operator_env``). Here the operator runs that way on the shared cluster, and the
commands of ``run.controller_hint(real=True)`` (the block ``make run`` prints, which the README
shows) run one by one through bash, from the repository root:

* ``kubectl apply -f manifests/samples/...``: must succeed;
* ``kubectl get ... -w   # X becomes Y``: the same command without ``-w`` is repeated until
  its output shows ``Y``;
* ``kubectl logs -l job-name=rayjob-sample``: the job's output, the ten squares;
* ``curl ...``: Ray Serve's answer through the operator's ``-serve-svc`` Service.

The README's tour must hold these same commands (``tests/unit/test_readme_tour.py``).
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from kuberay.kube import Client
from tests.e2e.harness import TIMINGS
from tests.e2e.realcluster import RealCluster, RealIdentity, diagnose_namespace, host_operator
from tests.unit.hack.test_run_operator_env import _run_module

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a real node needs root")

ROOT = Path(__file__).resolve().parents[2]
BECOMES = re.compile(r"#\s*(?:[A-Z ]+?)\s+becomes\s+(\S+)")
SQUARES = "squares: [0, 1, 4, 9, 16, 25, 36, 49, 64, 81]"
SERVE_ANSWER = "hello you, from Ray Serve"
STEP_TIMEOUT = 420.0  # a loaded 2-core machine: three Ray clusters start side by side


def tour_commands(hint: str) -> list[str]:
    """The indented command lines of ``make run``'s next-steps block (comments kept)."""
    return [line.strip() for line in hint.splitlines() if line.startswith("  ")]


def _bash(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


async def _until(
    command: str, env: dict[str, str], wanted: str, explain: Callable[[], Awaitable[str]]
) -> str:
    deadline = time.monotonic() + STEP_TIMEOUT
    while True:
        done = _bash(command, env)
        if done.returncode == 0 and wanted in done.stdout:
            return done.stdout
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{wanted!r} not in the output of `{command}` within {STEP_TIMEOUT:.0f}s; "
                f"last: {done.stdout}{done.stderr}\n{await explain()}"
            )
        await asyncio.sleep(2)


async def test_the_tour_make_run_prints_runs_real_ray(
    real_cluster: RealCluster,
    real_identity: RealIdentity,
    real_admin: Client,
    tmp_path: Path,
) -> None:
    run = _run_module()
    who = run.OperatorIdentity(real_identity.kubeconfig, real_identity.namespace, "tour")
    hint = run.controller_hint(
        real_cluster.kubeconfig, real_cluster.kubectl_path, who, real=True, workdir=tmp_path
    )
    assert run.operator_env({}, real_nodes=1) == {
        "KUBERAY_DASHBOARD_ALLOWED_NETWORKS": "127.0.0.0/8,10.250.0.0/24"
    }
    commands = tour_commands(hint)
    assert commands and commands[0].startswith("export KUBECONFIG="), hint
    env = dict(os.environ)
    env["KUBECONFIG"] = commands[0].split("=", 1)[1]
    began = time.monotonic()

    async def explain() -> str:
        parts = []
        for kind, name in (
            ("RayCluster", "raycluster-sample"),
            ("RayJob", "rayjob-sample"),
            ("RayService", "rayservice-sample"),
        ):
            parts.append(await diagnose_namespace(real_admin, real_cluster, "default", kind, name))
        return "\n".join(parts)

    try:
        async with host_operator("tour", real_cluster, real_identity):
            for command in commands[1:]:
                shown = command.split("#", 1)[0].strip()
                if "-w" in shown.split():
                    match = BECOMES.search(command)
                    assert match, command
                    polled = shown.replace(" -w", "")
                    await _until(polled, env, match[1], explain)
                    TIMINGS.setdefault(f"tour: {polled.split()[2]} -> {match[1]}", []).append(
                        time.monotonic() - began
                    )
                elif " logs " in shown:
                    await _until(shown, env, SQUARES, explain)
                elif shown.startswith("curl "):
                    await _until(shown, env, SERVE_ANSWER, explain)
                else:
                    done = _bash(shown, env)
                    assert done.returncode == 0, f"`{shown}`: {done.stderr}{done.stdout}"
            # clean up while the operator runs (it removes the finalizers)
            for sample in ("rayservice", "rayjob", "raycluster"):
                _bash(
                    f"{real_cluster.kubectl_path} delete --ignore-not-found --wait=false "
                    f"-f manifests/samples/{sample}.yaml",
                    env,
                )
            listing = (
                f"{real_cluster.kubectl_path} get rayclusters,rayjobs,rayservices -n default "
                "-o name"
            )
            deadline = time.monotonic() + 180
            while (left := _bash(listing, env).stdout.strip()) and time.monotonic() < deadline:
                await asyncio.sleep(2)
            assert not left, f"the samples were not deleted: {left}"
    finally:
        for sample in ("rayservice", "rayjob", "raycluster"):
            _bash(
                f"{real_cluster.kubectl_path} delete --ignore-not-found --wait=false "
                f"-f manifests/samples/{sample}.yaml",
                env,
            )
