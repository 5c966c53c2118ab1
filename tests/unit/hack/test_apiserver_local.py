"""``make run``'s API server (``hack/cluster/apiserver_local.py``): the command line the server
accepts, the printed token line, the process started, answering and stopped, and ``make run``'s
part (the user applied, the server started, how to reach it printed)."""

from __future__ import annotations

import os
import shlex
import types
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from hack.cluster import apiserver_local
from kuberay.apiserver.options import CALLER, parse_options
from kuberay.testing._base import free_port

#: A kubeconfig whose apiserver nothing answers: the server starts without reaching it.
UNREACHABLE = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: admin}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def test_the_command_line_is_caller_mode_on_loopback_over_the_kubeconfig() -> None:
    cmd = apiserver_local.command(
        "127.0.0.1:8888", Path("/run dir/kubeconfig"), history_server_url="http://127.0.0.1:5"
    )
    assert cmd[1:3] == ["-m", "kuberay.apiserver"]
    options = parse_options(cmd[3:])
    assert (options.http_host, options.http_port) == ("127.0.0.1", 8888)
    assert options.auth_mode == CALLER
    assert options.kubeconfig == "/run dir/kubeconfig"
    assert options.history_server_url == "http://127.0.0.1:5"
    assert "--history-server-url" not in apiserver_local.command("127.0.0.1:1", Path("k"))


def test_the_printed_token_line_asks_for_the_bound_service_accounts_token() -> None:
    kubeconfig = Path("/home/me/my run/kubeconfig")
    text = apiserver_local.hint(
        "http://127.0.0.1:8888", Path("/v/bin/kubectl"), kubeconfig, Path("/w")
    )
    line = next(x for x in text.splitlines() if x.strip().startswith("TOKEN=$("))
    words = shlex.split(line.strip()[len("TOKEN=$(") : -1])
    assert words == [
        "/v/bin/kubectl",
        "--kubeconfig",
        str(kubeconfig),
        "create",
        "token",
        "kuberay-apiserver-user",
        "-n",
        "default",
    ]
    assert "http://127.0.0.1:8888/apis/ray.io/v1/namespaces/default/rayclusters" in text
    assert "/w/apiserver.url" in text
    docs = {d["kind"]: d for d in apiserver_local.user_rbac()}
    subject = docs["ClusterRoleBinding"]["subjects"][0]
    assert (subject["name"], subject["namespace"]) == (words[5], words[7])
    assert docs["ClusterRoleBinding"]["roleRef"]["name"] == docs["ClusterRole"]["metadata"]["name"]


def test_the_server_answers_writes_its_url_and_stops(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(UNREACHABLE)
    server = apiserver_local.LocalApiServer(tmp_path, f"127.0.0.1:{free_port()}", kubeconfig)
    try:
        url = server.start()
        assert (tmp_path / "apiserver.url").read_text() == url + "\n"
        assert apiserver_local.healthy(url)
        pid = int((tmp_path / "kuberay-apiserver.pid").read_text())
        with pytest.raises(urllib.error.HTTPError) as refused:  # the admin's token is not used
            urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                f"{url}/apis/ray.io/v1/rayclusters", timeout=10
            )
        assert refused.value.code == 401
    finally:
        server.stop()
    assert not (tmp_path / "apiserver.url").exists()
    assert not apiserver_local.healthy(url)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_make_runs_part_applies_the_user_then_starts_and_prints_how_to_reach_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(UNREACHABLE)
    cp = types.SimpleNamespace(dir=tmp_path, kubeconfig=kubeconfig, history_server_proc=None)
    applied: list[Mapping[str, Any]] = []
    listen = f"127.0.0.1:{free_port()}"
    server = apiserver_local.start_for_run(cp, applied.append, listen, Path("/v/bin/kubectl"))
    try:
        assert [d["kind"] for d in applied] == [
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
        ]
        assert "--history-server-url" not in server.command
        assert apiserver_local.healthy(f"http://{listen}")
        err = capsys.readouterr().err
        assert f"run: KubeRay API server at http://{listen} (caller mode" in err
        assert f"/v/bin/kubectl --kubeconfig {kubeconfig} create token" in err
    finally:
        server.stop()


def test_make_run_prints_the_dashboards_url() -> None:
    text = apiserver_local.hint("http://127.0.0.1:8888", None, Path("k"), Path("/w"))
    assert "http://127.0.0.1:8888/dashboard/" in text
