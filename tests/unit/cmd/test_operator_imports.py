"""What the operator imports to start: only what its default configuration uses (its idle
memory is mostly the code it loaded). A fresh interpreter imports the entry module and the
controllers' setup (what ``kuberay-operator`` imports before it runs, webhooks off and
every default gate), then reports which of the packages needed only later, or only when
switched on, are loaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

#: Loaded only when used (kubernetes-asyncio: never, only tests use it), the typed API
#: and its validators (first RayCluster, RayJob or RayService reconciled), RayCronJob
#: schedules (cron_converter, dateutil), the webhook server, the gated controllers.
LAZY = (
    "kubernetes_asyncio",
    "cattrs",
    "cron_converter",
    "dateutil",
    "kuberay.api.v1.convert",
    "kuberay.api.v1.defaults",
    "kuberay.api.v1.raycluster_types",
    "kuberay.api.v1.validation.raycluster",
    "kuberay.webhooks.server",
    "kuberay.webhooks.admission",
    "kuberay.controllers.raycronjob",
    # the reconcilers (and the builders they call): with the first object of their kind
    "kuberay.controllers.raycluster.reconciler",
    "kuberay.controllers.rayjob.reconciler",
    "kuberay.controllers.rayservice.reconciler",
    "kuberay.controllers.builders.pod",
    "kuberay.controllers.builders.service",
    "kuberay.controllers.batchscheduler.volcano",
    "kuberay.controllers.networkpolicy",
    "kuberay.controllers.mtls",
    "kuberay.historyserver",
    # never at start-up: aiohttp (the apiserver client is kuberay.http, the metrics
    # and probe server a small asyncio one; the first dashboard dialled loads it) and what
    # structlog's console renderer would import when installed
    "aiohttp",
    "yarl",
    "multidict",
    # prometheus-client's servers and push-gateway client (lean_imports)
    "http.server",
    "http.client",
    "wsgiref.simple_server",
    "urllib.request",
    "email",
    "rich",
    "colorama",
    "pygments",
    # PyYAML: a kubeconfig file, --config, a RayService's serveConfigV2 or a RayJob's
    # runtimeEnvYAML (in-cluster, an operator without those never parses YAML)
    "yaml",
)

PROBE = """
import json, sys
from kuberay.cmd.lean_imports import slim_process
slim_process()  # what kuberay-operator's main does first
import kuberay.cmd.operator_run, kuberay.controllers.setup
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_start_up_imports_none_of_the_lazily_needed_packages() -> None:
    loaded = _loaded(PROBE)
    assert "kuberay.controllers.raycluster.setup" in loaded  # the probe did import them
    assert sorted(m for m in loaded if m.split(".")[0] in LAZY or m.startswith(LAZY)) == []


def test_the_lazy_parts_load_when_used() -> None:
    loaded = _loaded(
        PROBE.replace(
            "print(",
            "from kuberay.api.v1 import validation\n"
            "validation.validate_raycluster({'metadata': {'name': 'a'}, 'spec': {}})\n"
            "print(",
        )
    )
    assert {"cattrs", "kuberay.api.v1.validation.raycluster", "kuberay.api.v1.convert"} <= loaded


def test_prometheus_client_works_without_its_servers_and_the_real_modules_stay_importable() -> None:
    code = """
import json, sys
from kuberay.cmd.lean_imports import NotLoaded, slim_process
slim_process()
import prometheus_client
registry = prometheus_client.CollectorRegistry()
prometheus_client.Counter("probe_total", "a probe", ["code"], registry=registry).labels("200").inc()
text = prometheus_client.generate_latest(registry).decode()
try:
    prometheus_client.start_http_server(0)
    refused = ""
except NotLoaded as exc:
    refused = str(exc)
loaded_before = "http.server" in sys.modules
import http.server, urllib.request
print(json.dumps([text, refused, loaded_before, hasattr(http.server.BaseHTTPRequestHandler,
    "handle_one_request"), callable(urllib.request.urlopen)]))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    text, refused, loaded_before, real_server, real_request = json.loads(
        done.stdout.splitlines()[-1]
    )
    assert 'probe_total{code="200"} 1.0' in text  # metrics and exposition as always
    assert "not loaded in kuberay-operator" in refused and "/metrics" in refused
    assert not loaded_before
    assert real_server and real_request  # a later import gets the standard library's modules


def test_registered_controllers_load_their_reconcilers_with_their_first_request() -> None:
    code = """
import asyncio, json, sys
from kubernetes_asyncio.client import Configuration
from prometheus_client import CollectorRegistry
from kuberay.cmd.config import parse_config
from kuberay.controllers.setup import register_all
from kuberay.featuregates.kuberay_gates import new_feature_gate
from kuberay.kube import Client
from kuberay.reconcile import Manager
from kuberay.reconcile.options import ManagerOptions

async def main():
    cfg = Configuration()
    cfg.host = "http://127.0.0.1:9"
    mgr = Manager(Client(cfg), ManagerOptions(), registry=CollectorRegistry())
    gates = new_feature_gate()
    config, _ = parse_config([], gates)
    names = register_all(mgr, config.controller_config(), gates, env={})
    reconcilers = ["kuberay.controllers.%s.reconciler" % n for n in names]
    before = [m for m in reconcilers if m in sys.modules]
    built = type(mgr.controllers[0].reconciler.get()).__name__
    after = [m for m in reconcilers if m in sys.modules]
    print(json.dumps([names, before, built, after]))

asyncio.run(main())
"""
    names, before, built, after = json.loads(_run(code))
    assert names == ["raycluster", "rayjob", "rayservice"]
    assert before == []  # registering watches imports no reconciler
    assert built == "RayClusterReconciler"
    assert after == ["kuberay.controllers.raycluster.reconciler"]  # only the one asked for


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]
