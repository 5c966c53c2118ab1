"""The operator's process-wide tweaks (kuberay.cmd.lean_imports) happen only when its
``main`` asks for them, and a prometheus-client that imports other names from the modules
it is given placeholders for still loads (whole), with a log line saying so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _last_line(code: str, *args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    return done.returncode, done.stdout, done.stderr


def test_importing_the_operator_modules_changes_nothing_process_wide() -> None:
    code = """
import json, sys
from asyncio import sslproto
before = sslproto.SSLProtocol.max_size
import kuberay.cmd.operator, kuberay.cmd.operator_run, kuberay.cmd.lean_imports
import kuberay.kube.transport, kuberay.kube.sockets
import prometheus_client
print(json.dumps([before, sslproto.SSLProtocol.max_size,
                  prometheus_client.start_http_server.__module__]))
"""
    code_, out, err = _last_line(code)
    assert code_ == 0, err
    before, after, server_module = json.loads(out.splitlines()[-1])
    assert after == before == 256 * 1024  # asyncio's own TLS read buffer
    assert server_module == "prometheus_client.exposition"  # the real server, no placeholder


def test_slim_process_caps_tls_buffers_and_leaves_prometheus_without_its_servers() -> None:
    code = """
import json
from asyncio import sslproto
from kuberay.cmd.lean_imports import NotLoaded, TLS_READ_BUFFER, slim_process
notes = slim_process()
import prometheus_client
try:
    prometheus_client.push_to_gateway("localhost:1", job="x", registry=None)
    refused = False
except NotLoaded:
    refused = True
print(json.dumps([notes, sslproto.SSLProtocol.max_size == TLS_READ_BUFFER, refused]))
"""
    code_, out, err = _last_line(code)
    assert code_ == 0, err
    assert json.loads(out.splitlines()[-1]) == [[], True, True]


def test_a_prometheus_client_importing_other_names_loads_whole_and_the_operator_says_so(
    tmp_path: Path,
) -> None:
    # As if a prometheus-client release imported a name the placeholders do not provide:
    # the placeholder for http.server lacks BaseHTTPRequestHandler, which it imports.
    code = """
import sys
from kuberay.cmd import lean_imports
lean_imports.PROMETHEUS_SERVER_MODULES = {"http.server": ()}
from kuberay.cmd.operator import main
code = main(sys.argv[1:])
import http.server, prometheus_client
assert http.server.BaseHTTPRequestHandler.__module__ == "http.server"  # the real one
assert prometheus_client.start_http_server.__module__ == "prometheus_client.exposition"
print("exit", code)
"""
    missing = tmp_path / "no-kubeconfig"
    code_, out, err = _last_line(code, "--kubeconfig", str(missing), "--log-stdout-encoder=json")
    assert code_ == 0, err
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    notes = [line for line in lines if "prometheus-client imported whole" in line["msg"]]
    assert len(notes) == 1 and "BaseHTTPRequestHandler" in notes[0]["msg"], out
    assert out.splitlines()[-1] == "exit 1"  # then it ran on (and stopped: no kubeconfig)
