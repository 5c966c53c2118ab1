"""Completion against the real apiserver: ``__complete`` (cobra's protocol), the
``kubectl_complete-ray`` executable kubectl runs, and the bash script driving it."""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kuberay.kube import Client
from kuberay.kubectl_ray.completion import complete
from tests.integration.kubectl_ray.conftest import Cli

BIN = Path(sys.executable).parent


def cluster(name: str, ns: str) -> dict[str, Any]:
    container = {"name": "ray-head", "image": "rayproject/ray:2.52.0"}
    template = {"spec": {"containers": [container]}}
    group = {"groupName": "gpus", "rayStartParams": {}, "template": template, "replicas": 0}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": template},
            "workerGroupSpecs": [group],
        },
    }


async def comp(cli: Cli, *words: str) -> tuple[list[str], str]:
    out = io.StringIO()
    argv = ["--kubeconfig", str(cli.kubeconfig), "-n", cli.namespace, *words]
    assert await complete(argv, out) == 0
    lines = out.getvalue().splitlines()
    return lines[:-1], lines[-1]


@pytest.fixture
async def clusters(cli: Cli, kclient: Client, namespace: str) -> Cli:
    for name in ("alpha", "beta"):
        await kclient.create(cluster(name, namespace))
    await kclient.create(
        {"apiVersion": "ray.io/v1", "kind": "RayJob",
         "metadata": {"name": "nightly", "namespace": namespace},
         "spec": {"entrypoint": "python x.py", "clusterSelector": {"ray.io/cluster": "alpha"}}}
    )  # fmt: skip
    return cli


async def test_complete_names_flags_and_commands(clusters: Cli, namespace: str) -> None:
    cli = clusters
    assert await comp(cli, "get", "cluster", "") == (["alpha", "beta"], ":4")
    assert await comp(cli, "why", "a") == (["alpha"], ":4")
    assert await comp(cli, "log", "rayjob/") == (["rayjob/nightly"], ":4")
    assert await comp(cli, "why", "rayj") == (["rayjob/"], ":6")  # no space after the slash
    assert await comp(cli, "get", "job", "") == (["nightly"], ":4")
    assert await comp(cli, "scale", "cluster", "b") == (["beta"], ":4")
    assert await comp(cli, "get", "workergroup", "") == (["gpus"], ":4")
    assert await comp(cli, "get", "nodes", "-c", "") == (["alpha", "beta"], ":4")
    names, _ = await comp(cli, "get", "cluster", "-n", "")
    assert namespace in names and "kube-system" in names
    assert await comp(cli, "ge") == (["get"], ":4")
    subs, _ = await comp(cli, "get", "")
    assert {"cluster", "job", "service", "cronjob", "workergroup", "nodes", "token"} <= set(subs)
    flags, _ = await comp(cli, "get", "job", "--")
    assert {"--all-namespaces", "--output", "--context", "--server", "--as"} <= set(flags)
    assert await comp(cli, "get", "job", "-o", "") == (["json", "yaml", "wide", "name"], ":4")
    assert await comp(cli, "log", "alpha", "--node-type", "w") == (["worker"], ":4")
    assert await comp(cli, "completion", "") == (["bash", "fish", "zsh"], ":4")
    assert await comp(cli, "render", "-f", "") == ([], ":0")  # files
    contexts, _ = await comp(cli, "get", "cluster", "--context", "")
    assert contexts  # the test kubeconfig's context
    # a cluster that cannot be reached: no candidates, no error
    dead = await comp(cli, "--server", "https://127.0.0.1:1", "get", "cluster", "")
    assert dead == ([], ":4")


async def test_kubectl_complete_executable_and_bash_script(clusters: Cli, namespace: str) -> None:
    exe = BIN / "kubectl_complete-ray"
    if not exe.exists():
        pytest.skip("kubectl_complete-ray not installed (make deps installs it)")
    env = {
        **os.environ,
        "KUBECONFIG": str(clusters.kubeconfig),
        "PATH": f"{BIN}:{os.environ['PATH']}",
    }

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)

    # what kubectl runs for `kubectl ray get cluster -n NS <TAB>`
    done = await asyncio.to_thread(run, str(exe), "get", "cluster", "-n", namespace, "")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["alpha", "beta", ":4"]

    script = await asyncio.to_thread(run, str(BIN / "kubectl-ray"), "completion", "bash")
    assert script.returncode == 0 and "complete -F" in script.stdout
    bash = shutil.which("bash")
    assert bash is not None
    probe = (
        script.stdout + f'\nCOMP_WORDS=(kubectl-ray get cluster -n {namespace} "b"); COMP_CWORD=5\n'
        "_kubectl_ray_complete\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    shell = await asyncio.to_thread(run, bash, "--norc", "-c", probe)
    assert shell.stdout.splitlines() == ["beta"], shell.stderr
    for name in ("zsh", "fish"):
        text = (await asyncio.to_thread(run, str(BIN / "kubectl-ray"), "completion", name)).stdout
        assert "kubectl-ray __complete" in text
