"""``make run``'s nodes (``hack/cluster/run_nodes.py``, ``hack/cluster/run.py``): real Ray by
default where the machine allows it, one line when it does not, what to do next, and a named
reason for a pod that cannot be scheduled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hack.cluster import run_nodes
from tests.unit.hack.test_run_operator_env import _run_module


def test_auto_runs_the_real_node_alone_and_falls_back_when_blocked() -> None:
    plan, why = run_nodes.plan_nodes("auto", None)
    assert (plan.real_nodes, plan.real_nodes_only, plan.fallback, why) == (1, True, True, None)
    plan, why = run_nodes.plan_nodes("auto", "not root (x)")
    assert plan == run_nodes.KWOK
    assert why is not None and why.startswith("run: no real node: not root (x); ")
    assert "kwok fake nodes and run no Ray" in why and "\n" not in why


def test_real_insists_kwok_and_both_need_no_check() -> None:
    plan, _ = run_nodes.plan_nodes("real", None)
    assert (plan.real_nodes, plan.real_nodes_only, plan.fallback) == (1, True, False)
    with pytest.raises(ValueError, match="no real node on this machine: not root"):
        run_nodes.plan_nodes("real", "not root")
    assert run_nodes.plan_nodes("kwok", "anything") == (run_nodes.KWOK, None)
    plan, _ = run_nodes.plan_nodes("both", None)
    assert (plan.real_nodes, plan.real_nodes_only) == (1, False)
    with pytest.raises(ValueError, match="--nodes must be one of"):
        run_nodes.plan_nodes("many", None)


def test_blockers(tmp_path: Path) -> None:
    cg = tmp_path / "cgroup"
    cg.mkdir()
    (cg / "cgroup.controllers").write_text("cpu memory\n")

    def which(_name: str) -> str | None:
        return "/usr/bin/dpkg-query"

    assert run_nodes.real_node_blocker(euid=0, cgroup_root=cg, which=which) is None
    assert "not root" in str(run_nodes.real_node_blocker(euid=1000, cgroup_root=cg, which=which))
    missing = run_nodes.real_node_blocker(euid=0, cgroup_root=tmp_path / "no", which=which)
    assert missing is not None and "no cgroup file system" in missing
    no_dpkg = run_nodes.real_node_blocker(euid=0, cgroup_root=cg, which=lambda _n: None)
    assert no_dpkg is not None and "not a Debian system" in no_dpkg


def test_fallback_line_is_one_line() -> None:
    line = run_nodes.fallback_line(RuntimeError("containerd did not start\nlong log tail"))
    assert line.startswith("run: the real node did not start (containerd did not start);")
    assert "\n" not in line


def _pod(name: str, cpu: str, memory: str, node: str = "", unschedulable: str = "") -> Any:
    status: dict[str, Any] = {"phase": "Running" if node else "Pending"}
    if unschedulable:
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": unschedulable,
            }
        ]
    return {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "nodeName": node or None,
            "containers": [{"resources": {"requests": {"cpu": cpu, "memory": memory}}}],
        },
        "status": status,
    }


NODE = {"metadata": {"name": "real-node"}, "status": {"allocatable": {"cpu": "2", "memory": "4Gi"}}}
MESSAGE = "0/1 nodes are available: 1 Insufficient cpu."


def test_an_unschedulable_pod_is_named_with_what_it_asks_and_what_is_free() -> None:
    pods = [
        _pod("head", "1500m", "1Gi", node="real-node"),
        _pod("done", "2", "1Gi", node="real-node"),
        _pod("worker", "1", "2Gi", unschedulable=MESSAGE),
    ]
    pods[1]["status"]["phase"] = "Succeeded"  # finished pods hold nothing
    ((key, line),) = run_nodes.explain_pending(pods, [NODE])
    assert key == f"uid-worker|{MESSAGE}"
    assert line == (
        f"run: pod default/worker cannot be scheduled: {MESSAGE} It asks for cpu 1, memory "
        "2.0Gi; node real-node has cpu 0.5 of 2, memory 3.0Gi of 4.0Gi free."
    )


def test_the_watcher_says_each_reason_once() -> None:
    pending = [_pod("worker", "1", "2Gi", unschedulable=MESSAGE)]
    bound = [_pod("head", "1500m", "1Gi", node="real-node")]
    answers = {
        "/api/v1/pods?fieldSelector=status.phase%3DPending": {"items": pending},
        "/api/v1/pods?fieldSelector=spec.nodeName%21%3D": {"items": bound},
        "/api/v1/nodes": {"items": [NODE]},
    }
    said: list[str] = []
    watcher = run_nodes.PendingWatcher(answers.__getitem__, out=said.append)
    assert len(watcher.poll_once()) == 1
    assert watcher.poll_once() == []  # the same reason is not repeated
    pending[0]["status"]["conditions"][0]["message"] = "0/1 nodes: 1 Insufficient memory."
    assert len(watcher.poll_once()) == 1
    assert len(said) == 2


def test_next_steps_show_real_ray_only_with_a_real_node(tmp_path: Path) -> None:
    run = _run_module()
    who = run.OperatorIdentity(tmp_path / "op.kubeconfig", "ray-system", "the operator's SA")
    real = run.controller_hint(
        tmp_path / "kubeconfig", Path("kubectl"), who, real=True, workdir=tmp_path
    )
    assert f"export KUBECONFIG={tmp_path / 'kubeconfig'}" in real
    for sample in ("raycluster", "rayjob", "rayservice"):
        assert f"kubectl apply -f manifests/samples/{sample}.yaml" in real
        assert (run.ROOT / "manifests" / "samples" / f"{sample}.yaml").is_file()
    assert "kubectl logs -l job-name=rayjob-sample" in real and "curl " in real
    assert "/metrics" in real and "Ctrl-C" in real
    kwok = run.controller_hint(
        tmp_path / "kubeconfig", Path("kubectl"), who, real=False, workdir=tmp_path
    )
    assert "rayjob.yaml" not in kwok and "run no Ray" in kwok


def test_a_process_forked_while_the_watcher_runs_starts_cleanly() -> None:
    """make run forks the operator while the watcher thread runs: the child must not print
    an ignored exception from threading's after-fork clean-up (a thread attribute named
    ``_stop`` once shadowed ``Thread._stop``)."""
    import subprocess
    import sys

    watcher = run_nodes.PendingWatcher(lambda _path: {"items": []}, interval=0.05)
    watcher.start()
    try:
        done = subprocess.run(
            [sys.executable, "-c", "pass"],
            preexec_fn=lambda: None,  # the fork path, as run.py's parent-death hook takes
            capture_output=True,
            timeout=30,
        )
    finally:
        watcher.stop()
        watcher.join(5)
    assert done.returncode == 0
    assert b"Exception ignored" not in done.stderr, done.stderr.decode()
    assert not watcher.is_alive()
