"""``make run`` as a user sees it: ``hack/cluster/run.py`` brings up the full local cluster, the
operator and KubeRay's API server, ``kubectl apply`` of the sample RayCluster goes ready, the
printed ``kubectl create token`` line gives a token that lists it through the API server, Ctrl-C
stops everything.
Run with ``--nodes kwok`` (``make run NODES=kwok``): the session's real-node tests hold the
machine's one real node.

Needs the local launcher, so it is skipped when ``KUBERAY_TEST_KUBECONFIG`` is set.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shlex
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import KUBECONFIG_ENV
from tests.e2e.harness import ROOT, SAMPLE, record_timing, tail

RUN_PY = ROOT / "hack" / "cluster" / "run.py"
START_TIMEOUT = 120.0
STOP_TIMEOUT = 60.0


def _term_with_parent() -> Callable[[], None] | None:
    """preexec_fn: SIGTERM run.py (it then stops its cluster) if pytest dies first."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def preexec() -> None:
        prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG

    return preexec


def _wait_for(what: str, check: Callable[[], object], timeout: float, log: Path) -> object:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not within {timeout:.0f}s; run.py output:\n{tail(log)}")
        time.sleep(0.2)


def _kubectl() -> Path | None:
    """hack/cluster/kubectl.py's pick (the venv's kubectl, else one on PATH), no install."""
    from hack.cluster import kubectl

    found: Path | None = kubectl.find_kubectl(install=False)
    return found


@pytest.fixture
def run_py(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path, Path]]:
    if os.environ.get(KUBECONFIG_ENV):
        pytest.skip(f"needs the local launcher (unset {KUBECONFIG_ENV})")
    workdir = tmp_path / "run"
    log = tmp_path / "run.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            # kwok nodes: the real node belongs to the e2e session's shared cluster
            [sys.executable, str(RUN_PY), "--dir", str(workdir), "--nodes", "kwok"],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_term_with_parent(),
        )
    try:
        yield proc, workdir, log
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_make_run_sample_goes_ready_and_ctrl_c_stops_all(
    run_py: tuple[subprocess.Popen[bytes], Path, Path],
) -> None:
    proc, workdir, log = run_py
    began = time.monotonic()

    def started() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"run.py exited with {proc.returncode}:\n{tail(log)}")
        return "controller started" in log.read_text(errors="replace")

    _wait_for("the operator leading", started, START_TIMEOUT, log)
    record_timing("make run: start -> operator reconciling", time.monotonic() - began)
    text = log.read_text(errors="replace")
    match = re.search(r"^export KUBECONFIG=(\S+)$", text, re.MULTILINE)
    assert match, text
    kubeconfig = match.group(1)
    assert Path(kubeconfig) == workdir / "kubeconfig"
    assert "runs as system:serviceaccount:" in text, "the operator should not be cluster-admin"

    kubectl = _kubectl()
    api = _Kubectl(kubectl, kubeconfig) if kubectl is not None else _DirectApi(workdir)
    applied = time.monotonic()
    api.apply_sample()

    def ready() -> bool:
        rc = api.get("/apis/ray.io/v1/namespaces/default/rayclusters/raycluster-minimal")
        return (rc.get("status") or {}).get("state") == "ready"

    _wait_for("raycluster-minimal ready", ready, 120, log)
    record_timing(f"make run: {api.name} apply sample -> ready", time.monotonic() - applied)
    pods = api.get(
        "/api/v1/namespaces/default/pods?labelSelector=ray.io/cluster%3Draycluster-minimal"
    )
    phases = sorted(p["status"].get("phase") for p in pods["items"])
    assert phases == ["Running", "Running"], phases
    _list_through_the_apiserver(text, workdir, api)

    stopping = time.monotonic()
    proc.send_signal(signal.SIGINT)  # what Ctrl-C delivers to run.py
    code = proc.wait(STOP_TIMEOUT)
    record_timing("make run: Ctrl-C -> all stopped", time.monotonic() - stopping)
    out = log.read_text(errors="replace")
    assert code == 0, out[-3000:]
    assert out.index("run: operator stopped") < out.index("run: cluster stopped"), out[-3000:]
    assert "released lease" in out
    leftovers = [
        line
        for pid in os.listdir("/proc")
        if pid.isdigit()
        for line in [_cmdline(int(pid))]
        if str(workdir) in line
    ]
    assert not leftovers, leftovers
    assert not (workdir / "kubeconfig").exists()
    assert not (workdir / "apiserver.url").exists()


def _list_through_the_apiserver(text: str, workdir: Path, api: _Kubectl | _DirectApi) -> None:
    """The printed API server URL answers ``/healthz``; the printed token command's token lists
    the sample through it; no token is 401."""
    match = re.search(r"^run: KubeRay API server at (\S+) ", text, re.MULTILINE)
    assert match, text
    url = match.group(1)
    assert (workdir / "apiserver.url").read_text().strip() == url
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{url}/healthz", timeout=10) as resp:
        assert resp.status == 200
    command = re.search(r"^  TOKEN=\$\((.+)\)$", text, re.MULTILINE)
    assert command, text
    token = api.token(shlex.split(command.group(1)))
    path = "/apis/ray.io/v1/namespaces/default/rayclusters"
    req = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {token}"})
    with opener.open(req, timeout=30) as resp:
        names = [rc["metadata"]["name"] for rc in json.loads(resp.read())["items"]]
    assert "raycluster-minimal" in names, names
    with pytest.raises(urllib.error.HTTPError) as refused:
        opener.open(url + path, timeout=30)
    assert refused.value.code == 401


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace")


class _Kubectl:
    """What the user does: kubectl with the printed KUBECONFIG."""

    name = "kubectl"

    def __init__(self, kubectl: Path, kubeconfig: str) -> None:
        self.kubectl = kubectl
        self.env = dict(os.environ, KUBECONFIG=kubeconfig)

    def _run(self, *args: str) -> str:
        done = subprocess.run(
            [str(self.kubectl), *args], env=self.env, capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    def apply_sample(self) -> None:
        self._run("apply", "-f", str(SAMPLE))

    def get(self, path: str) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self._run("get", "--raw", path))
        return result

    def token(self, command: list[str]) -> str:
        """Run the printed ``kubectl ... create token ...`` command; its token."""
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, f"{shlex.join(command)}: {done.stderr}"
        return done.stdout.strip()


class _DirectApi:
    """The same requests without kubectl (none installed): the admin client cert in DIR."""

    name = "API"

    def __init__(self, workdir: Path) -> None:
        certs = workdir / "certs"
        self.ctx = ssl.create_default_context(cafile=str(certs / "serving-ca.crt"))
        self.ctx.load_cert_chain(str(certs / "admin.crt"), str(certs / "admin.key"))
        config = yaml.safe_load((workdir / "kubeconfig").read_text())
        self.server = str(config["clusters"][0]["cluster"]["server"])

    def _call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.server + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=30, context=self.ctx) as resp:
            result: dict[str, Any] = json.loads(resp.read())
            return result

    def apply_sample(self) -> None:
        body = yaml.safe_load(SAMPLE.read_text())
        self._call("POST", "/apis/ray.io/v1/namespaces/default/rayclusters", body)

    def get(self, path: str) -> dict[str, Any]:
        return self._call("GET", path)

    def token(self, command: list[str]) -> str:
        """What the printed ``create token NAME -n NS`` asks for, as a TokenRequest."""
        where = command.index("token")
        name, namespace = command[where + 1], command[command.index("-n") + 1]
        answer = self._call(
            "POST",
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
        )
        return str(answer["status"]["token"])
