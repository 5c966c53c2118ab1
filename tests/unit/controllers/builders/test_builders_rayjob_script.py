"""The submitter script as bash runs it.

Every RayJob sample (and RayCronJob job template) yields a script that passes ``bash -n``. The
script is then run by ``/bin/bash -ce`` against stub ``python`` and ``ray`` executables that
record their arguments, to check what a user's Ray cluster would actually receive: the JSON
options arrive as single, parseable arguments equal to the spec's values, the status guard
skips a second submission, and the sidecar form submits exactly once.
"""

from __future__ import annotations

import copy
import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders_testlib import SAMPLES

from kuberay.controllers.builders.submit_command import RayJobBuildError, build_job_submit_command
from kuberay.controllers.builders.submitter import build_submitter_job
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.rayjob.rayjob_cluster import build_rayjob_cluster
from tests.kuberay_samples import requires_kuberay_samples


def _sample_rayjobs() -> list[tuple[str, dict[str, Any]]]:
    jobs = []
    for path in sorted(SAMPLES.glob("*.yaml")):
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if not isinstance(doc, dict):
                continue
            if doc.get("kind") == "RayJob":
                jobs.append((f"{path.name}#{index}", doc))
            elif doc.get("kind") == "RayCronJob":
                template = (doc.get("spec") or {}).get("jobTemplate") or {}
                job = {"metadata": {"name": "cron-29436001"}, "spec": copy.deepcopy(template)}
                jobs.append((f"{path.name}#{index}:jobTemplate", job))
    return jobs


SAMPLE_JOBS = _sample_rayjobs()


def _with_status(rayjob: dict[str, Any]) -> dict[str, Any]:
    job = copy.deepcopy(rayjob)
    name = job["metadata"].get("name") or job["metadata"].get("generateName", "x-") + "abcde"
    job["metadata"].update(name=name, namespace="default", uid="uid-1")
    job["spec"].setdefault("submissionMode", "K8sJobMode")
    job["status"] = {
        "jobId": f"{name}-x7k2m",
        "dashboardURL": f"{name}-bc2df-head-svc.default.svc.cluster.local:8265",
    }
    return job


def _bash_syntax_ok(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-n", "-c", script], capture_output=True, text=True, check=False, timeout=30
    )


@requires_kuberay_samples
def test_every_rayjob_sample_is_covered() -> None:
    assert len(SAMPLE_JOBS) >= 25


@requires_kuberay_samples
@pytest.mark.parametrize("name,rayjob", SAMPLE_JOBS, ids=[n for n, _ in SAMPLE_JOBS])
@pytest.mark.parametrize("mode", ["K8sJobMode", "SidecarMode"])
@pytest.mark.parametrize("restart_gate", [False, True])
def test_sample_command_passes_bash_syntax_check(
    name: str, rayjob: dict[str, Any], mode: str, restart_gate: bool
) -> None:
    job = _with_status(rayjob)
    if mode == "SidecarMode" and not job["spec"].get("rayClusterSpec"):
        pytest.skip("clusterSelector jobs cannot run in SidecarMode")
    gates = {"SidecarSubmitterRestart": restart_gate}
    script = " ".join(build_job_submit_command(job, submission_mode=mode, gates=gates))
    result = _bash_syntax_ok(script)
    assert result.returncode == 0, result.stderr


RUNTIME_ENV = """\
pip: ["requests<3", "emoji"]
env_vars:
  QUOTED: 'say "hi" & <bye> ; exit 1 | true'
  BACKSLASH: 'C:\\path\\n'
  UNICODE: "caf\u00e9"
working_dir: "https://example.com/a b.zip"
"""


def _rich_rayjob(mode: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "rich", "namespace": "default", "uid": "uid-1"},
        "spec": {
            "submissionMode": mode,
            "entrypoint": "  python -c 'import sys; print(sys.argv)' \"a b\" $HOME\n",
            "runtimeEnvYAML": RUNTIME_ENV,
            "metadata": {"owner": 'a"b', "note": "x < y & z"},
            "entrypointNumCpus": 0.5,
            "entrypointResources": '{"Custom": 1}',
            "rayClusterSpec": {
                "rayVersion": "2.55.0",
                "headGroupSpec": {
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "ray-head",
                                    "image": "rayproject/ray:2.55.0",
                                    "ports": [{"name": "dashboard", "containerPort": 9123}],
                                }
                            ]
                        }
                    }
                },
            },
        },
        "status": {"jobId": "rich-x7k2m", "dashboardURL": "rich-head-svc.default.svc:8265"},
    }


_STUB = """#!/bin/bash
printf '%s\\0' "$(basename "$0")" "$@" >> "$CALLS"
printf '\\n' >> "$CALLS"
if [ "$(basename "$0")" = ray ] && [ "$2" = status ]; then exit "${STATUS_RC:-1}"; fi
exit 0
"""


def _run_script(tmp_path: Path, args: list[str], status_rc: int) -> list[list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("python", "ray"):
        stub = bin_dir / tool
        stub.write_text(_STUB)
        stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    calls = tmp_path / "calls"
    calls.write_bytes(b"")
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "CALLS": str(calls),
        "STATUS_RC": str(status_rc),
        "HOME": "/home/ray",
    }
    result = subprocess.run(
        args, env=env, capture_output=True, text=True, check=False, timeout=30, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    records = calls.read_bytes().split(b"\0\n")
    return [r.decode().split("\0") for r in records if r]


def _option(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def _submitter_container(mode: str, gates: dict[str, bool]) -> dict[str, Any]:
    """The container that runs the script: the sidecar, or the submitter Job's container 0."""
    job = _rich_rayjob(mode)
    options = BuildOptions()
    cluster = build_rayjob_cluster(job, "rich-bc2df", gates=gates, options=options)
    if mode == "SidecarMode":
        head = cluster["spec"]["headGroupSpec"]["template"]["spec"]
        container: dict[str, Any] = head["containers"][-1]
        return container
    submitter = build_submitter_job(job, cluster, gates=gates, options=options)
    container = submitter["spec"]["template"]["spec"]["containers"][0]
    return container


@pytest.mark.skipif(os.name != "posix", reason="needs bash")
def test_k8s_job_mode_script_submits_once_with_the_spec_values(tmp_path: Path) -> None:
    container = _submitter_container("K8sJobMode", {})
    calls = _run_script(tmp_path, [*container["command"], *container["args"]], status_rc=1)
    tools = [c[0] for c in calls]
    assert tools == ["python", "ray", "ray", "ray"]
    assert "http://rich-head-svc.default.svc:8265/api/gcs_healthz" in calls[0][2]
    assert calls[1][1:3] == ["job", "status"]
    submit = calls[2]
    assert submit[1:3] == ["job", "submit"]
    assert _option(submit, "--address") == "http://rich-head-svc.default.svc:8265"
    assert "--no-wait" in submit
    runtime_env = json.loads(_option(submit, "--runtime-env-json"))
    assert runtime_env == yaml.safe_load(RUNTIME_ENV)
    assert json.loads(_option(submit, "--metadata-json")) == {"owner": 'a"b', "note": "x < y & z"}
    assert _option(submit, "--submission-id") == "rich-x7k2m"
    assert _option(submit, "--entrypoint-num-cpus") == "0.500000"
    assert json.loads(_option(submit, "--entrypoint-resources")) == {"Custom": 1}
    # The entrypoint is shell code, expanded by the submitter's bash like a user would expect.
    entry = submit[submit.index("--") + 1 :]
    assert entry == ["python", "-c", "import sys; print(sys.argv)", "a b", "/home/ray"]
    assert calls[3][1:3] == ["job", "logs"]
    assert calls[3][-2:] == ["--follow", "rich-x7k2m"]


@pytest.mark.skipif(os.name != "posix", reason="needs bash")
def test_k8s_job_mode_retry_does_not_submit_a_known_job_again(tmp_path: Path) -> None:
    container = _submitter_container("K8sJobMode", {})
    calls = _run_script(tmp_path, [*container["command"], *container["args"]], status_rc=0)
    assert [c[1:3] for c in calls[1:]] == [["job", "status"], ["job", "logs"]]


@pytest.mark.skipif(os.name != "posix", reason="needs bash")
def test_sidecar_script_submits_to_localhost_and_blocks(tmp_path: Path) -> None:
    container = _submitter_container("SidecarMode", {})
    calls = _run_script(tmp_path, [*container["command"], *container["args"]], status_rc=0)
    assert [c[0] for c in calls] == ["python", "ray"]
    assert "http://localhost:9123/api/gcs_healthz" in calls[0][2]
    submit = calls[1]
    assert _option(submit, "--address") == "http://127.0.0.1:9123"
    assert "--no-wait" not in submit
    assert json.loads(_option(submit, "--runtime-env-json")) == yaml.safe_load(RUNTIME_ENV)


@pytest.mark.skipif(os.name != "posix", reason="needs bash")
def test_sidecar_restart_gate_guards_resubmission(tmp_path: Path) -> None:
    gates = {"SidecarSubmitterRestart": True}
    container = _submitter_container("SidecarMode", gates)
    assert container["restartPolicy"] == "OnFailure"
    calls = _run_script(tmp_path, [*container["command"], *container["args"]], status_rc=0)
    assert [c[1:3] for c in calls[1:]] == [["job", "status"], ["job", "logs"]]


@pytest.mark.skipif(os.name != "posix", reason="needs bash")
def test_dollar_in_runtime_env_is_expanded_by_the_submitter_shell(tmp_path: Path) -> None:
    """KubeRay double-quotes the JSON (Go ``strconv.Quote``), so bash expands ``$VAR`` in it.

    Reproduced on purpose (the command is byte-compatible with KubeRay's).
    """
    job = _rich_rayjob("K8sJobMode")
    job["spec"]["runtimeEnvYAML"] = "env_vars: {A: 'home=$HOME'}"
    cluster = build_rayjob_cluster(job, "rich-bc2df", gates={}, options=BuildOptions())
    submitter = build_submitter_job(job, cluster, gates={}, options=BuildOptions())
    container = submitter["spec"]["template"]["spec"]["containers"][0]
    calls = _run_script(tmp_path, [*container["command"], *container["args"]], status_rc=1)
    runtime_env = json.loads(_option(calls[2], "--runtime-env-json"))
    assert runtime_env == {"env_vars": {"A": "home=/home/ray"}}


def test_sidecar_port_falls_back_to_the_given_default() -> None:
    job = _rich_rayjob("SidecarMode")
    job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0].pop("ports")
    command = build_job_submit_command(
        job, submission_mode="SidecarMode", gates={}, head_dashboard_port=8000
    )
    assert command[command.index("--address") + 1] == "http://127.0.0.1:8000"


def test_other_modes_have_no_submit_command() -> None:
    with pytest.raises(RayJobBuildError, match="unsupported submission mode"):
        build_job_submit_command(_rich_rayjob("HTTPMode"), submission_mode="HTTPMode", gates={})


def test_login_shell_switch_changes_the_submitter_shell() -> None:
    job = _rich_rayjob("K8sJobMode")
    cluster = build_rayjob_cluster(job, "rich-bc2df", gates={}, options=BuildOptions())
    login = BuildOptions.from_env({"ENABLE_LOGIN_SHELL": "true"})
    plain = build_submitter_job(job, cluster, gates={}, options=BuildOptions())
    with_login = build_submitter_job(job, cluster, gates={}, options=login)
    assert plain["spec"]["template"]["spec"]["containers"][0]["command"][1] == "-ce"
    assert with_login["spec"]["template"]["spec"]["containers"][0]["command"][1] == "-cel"
