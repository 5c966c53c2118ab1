"""The monitoring assets against a real Prometheus scraping the operator and real Ray pods.

Prometheus (``hack/build/build_prometheus.py``) runs on 127.0.0.1 with a configuration this module
writes: static targets only, the operator's ``/metrics`` on loopback and the real node's Ray
pods by pod IP (no service discovery; a target elsewhere is refused), and the alert rules of
``manifests/monitoring/rules``. The operator runs on the host with ``--enable-metrics``. In
one namespace:

* RayCluster ``metrics`` (a head and a worker, real Ray) becomes ready; its pods are scraped
  on their ``metrics`` port as the PodMonitor would, labelled with their RayCluster;
* RayCluster ``stuck`` and RayService ``stuck-svc`` never get a pod scheduled (a node
  selector no node has): not provisioned, not ready;
* RayJobs ``ok`` and ``fails`` (HTTPMode, on ``metrics``) end Complete and Failed.

Then every query of every dashboard panel returns series with a value, every dashboard
variable lists what a user picks, every metric KubeRay's operator dashboard queries is
answered, every alert rule evaluates without error, and the alerts a user would see do:
RayJobFailed fires for ``fails``, RayClusterNotProvisioned and RayServiceNotReady are pending
for the stuck objects, KubeRayOperatorDown is silent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kuberay.kube import Client, KubeError
from tests.e2e.harness import OperatorProcess, cluster_pods, node_type, pod_ready, record_timing
from tests.e2e.prometheus import PrometheusProcess, ScrapeJob, allowed_target
from tests.e2e.realcluster import (
    RealCluster,
    RealIdentity,
    diagnose_namespace,
    host_operator,
    real_namespace,
    wait_for,
)

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "manifests" / "monitoring"
DASHBOARDS = sorted((MONITORING / "grafana").glob("*.json"))
KUBERAY_DASHBOARD_METRICS = Path(__file__).with_name("kuberay_operator_dashboard_metrics.txt")
RAY_IMAGE = "rayproject/ray:2.52.0"
OPERATOR_JOB = "kuberay-operator"
#: Grafana's $__rate_interval, as the test substitutes it: the whole scenario's span
RATE_WINDOW = "15m"
RAY_SCRAPE_INTERVAL = "10s"
UNSCHEDULABLE = {"kuberay.test/no-such-node": "true"}


# --------------------------------------------------------------------------- objects


def _container(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "image": RAY_IMAGE,
        "resources": {
            "limits": {"cpu": "1", "memory": "2Gi"},
            "requests": {"cpu": "100m", "memory": "512Mi"},
        },
    }


def raycluster_spec(*, workers: int, node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    """A small RayCluster spec (head + ``workers`` workers), optionally unschedulable."""
    extra = {"nodeSelector": node_selector} if node_selector else {}
    head = _container("ray-head")
    head["ports"] = [
        {"containerPort": 6379, "name": "gcs-server"},
        {"containerPort": 8265, "name": "dashboard"},
        {"containerPort": 10001, "name": "client"},
    ]
    return {
        "rayVersion": "2.52.0",
        "headGroupSpec": {
            "rayStartParams": {},
            "template": {"spec": {"containers": [head], **extra}},
        },
        "workerGroupSpecs": [
            {
                "groupName": "workers",
                "replicas": workers,
                "minReplicas": 0,
                "maxReplicas": max(workers, 1),
                "rayStartParams": {},
                "template": {"spec": {"containers": [_container("ray-worker")], **extra}},
            }
        ],
    }


def rayjob(name: str, ns: str, entrypoint: str) -> dict[str, Any]:
    """An HTTPMode RayJob on the RayCluster ``metrics``."""
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "submissionMode": "HTTPMode",
            "entrypoint": entrypoint,
            "clusterSelector": {"ray.io/cluster": "metrics"},
        },
    }


def stuck_rayservice(ns: str) -> dict[str, Any]:
    serve = {
        "applications": [
            {"name": "app", "import_path": "app.deployment", "route_prefix": "/", "deployments": []}
        ]
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": "stuck-svc", "namespace": ns},
        "spec": {
            "serveConfigV2": yaml.safe_dump(serve),
            "rayClusterConfig": raycluster_spec(workers=0, node_selector=UNSCHEDULABLE),
        },
    }


# --------------------------------------------------------------------------- scenario


@dataclass
class Scenario:
    """What the tests look at: Prometheus, the namespace, the Ray pods scraped."""

    prometheus: PrometheusProcess
    namespace: str
    ray_pods: list[str]


def _operator_job(op: OperatorProcess, namespace: str) -> ScrapeJob:
    # honor_labels: the kuberay_* series keep their object's namespace (as the ServiceMonitor)
    target = (f"127.0.0.1:{op.metrics_port}", {"namespace": namespace, "pod": op.name})
    return ScrapeJob(OPERATOR_JOB, [target], honor_labels=True)


def _ray_job(pods: list[dict[str, Any]]) -> ScrapeJob:
    """The Ray pods' ``metrics`` ports, labelled as the PodMonitor's relabelings label them."""
    targets = []
    for pod in pods:
        labels = pod["metadata"]["labels"]
        port = next(
            p["containerPort"]
            for p in pod["spec"]["containers"][0].get("ports", [])
            if p.get("name") == "metrics"
        )
        targets.append(
            (
                f"{pod['status']['podIP']}:{port}",
                {
                    "namespace": pod["metadata"]["namespace"],
                    "pod": pod["metadata"]["name"],
                    "ray_io_cluster": labels["ray.io/cluster"],
                    "ray_io_node_type": labels["ray.io/node-type"],
                    "ray_io_group": labels["ray.io/group"],
                },
            )
        )
    # Ray's metrics agent exports a node's gauges from its latest report (every few
    # seconds); a scrape more often than that finds some missing (the PodMonitor: 30 s)
    return ScrapeJob("ray-pods", targets, interval=RAY_SCRAPE_INTERVAL)


def _status(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("status") or {}


@pytest.fixture(scope="module")
async def scenario(
    real_cluster: RealCluster,
    real_admin: Client,
    real_identity: RealIdentity,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Scenario]:
    from hack.build import build_prometheus as build

    try:
        binary, _ = build.build()
    except build.BuildError as exc:
        pytest.skip(f"prometheus {build.PROMETHEUS_VERSION} not built here: {exc}")
    ns = await real_namespace(real_admin, "monitoring")
    began = time.monotonic()
    async with host_operator(
        "monitoring-operator", real_cluster, real_identity, extra_args=["--enable-metrics"]
    ) as op:
        prometheus = PrometheusProcess(
            binary,
            tmp_path_factory.mktemp("prometheus"),
            rule_files=[MONITORING / "rules" / "kuberay-alerts.yaml"],
        )
        operator_job = _operator_job(op, real_identity.namespace)
        prometheus.start([operator_job])
        try:
            yield await _run_scenario(real_cluster, real_admin, prometheus, operator_job, ns)
            record_timing("monitoring e2e: scenario", time.monotonic() - began)
        finally:
            prometheus.terminate()
            # the scenario's Ray pods hold the real node's CPU: later real-node tests need it
            with contextlib.suppress(KubeError):
                await real_admin.delete("v1", "Namespace", ns)


async def _run_scenario(
    cluster: RealCluster,
    admin: Client,
    prometheus: PrometheusProcess,
    operator_job: ScrapeJob,
    ns: str,
) -> Scenario:
    async def explain() -> str:
        return await diagnose_namespace(admin, cluster, ns, "RayCluster", "metrics")

    for name, spec in (
        ("metrics", raycluster_spec(workers=1)),
        ("stuck", raycluster_spec(workers=0, node_selector=UNSCHEDULABLE)),
    ):
        meta = {"name": name, "namespace": ns}
        await admin.create(
            {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": meta, "spec": spec}
        )
    await admin.create(stuck_rayservice(ns))

    async def ray_pods_ready() -> list[dict[str, Any]] | None:
        pods = await cluster_pods(admin, ns, "metrics")
        types = sorted(node_type(p) for p in pods)
        if types == ["head", "worker"] and all(pod_ready(p) for p in pods):
            return pods
        return None

    pods: list[dict[str, Any]] = await wait_for("Ray pods ready", ray_pods_ready, 420, explain)

    async def cluster_ready() -> bool:
        rc = await admin.get("ray.io/v1", "RayCluster", "metrics", ns)
        return _status(rc).get("state") == "ready"

    await wait_for("RayCluster metrics ready", cluster_ready, 120, explain)
    prometheus.set_targets([operator_job, _ray_job(pods)])

    await admin.create(rayjob("ok", ns, "python -c \"print('ok')\""))
    await admin.create(rayjob("fails", ns, 'python -c "import sys; sys.exit(3)"'))

    async def jobs_done() -> bool:
        states = []
        for name in ("ok", "fails"):
            job = await admin.get("ray.io/v1", "RayJob", name, ns)
            states.append(_status(job).get("jobDeploymentStatus"))
        return states == ["Complete", "Failed"]

    await wait_for("RayJobs ok Complete, fails Failed", jobs_done, 300, explain)

    async def scraped() -> bool:
        up = prometheus.query('up{job="ray-pods"} == 1')
        # a Ray node's metrics agent reports its node's series a while after it starts
        nodes = prometheus.query('count by (pod) (ray_node_cpu_utilization{job="ray-pods"})')
        durations = prometheus.query("kuberay_job_execution_duration_seconds")
        return len(up) == len(nodes) == len(pods) and len(durations) == 2

    await wait_for("Ray pods and the finished RayJobs scraped", scraped, 180, explain)
    await asyncio.sleep(12)  # another scrape of every target, more rule evaluations
    return Scenario(prometheus, ns, [p["metadata"]["name"] for p in pods])


# --------------------------------------------------------------------------- helpers


def substitute(expr: str, namespace: str) -> str:
    """A panel query with Grafana's variables as a user viewing this namespace sets them."""
    return (
        expr.replace("$__rate_interval", RATE_WINDOW)
        .replace("$job", OPERATOR_JOB)
        .replace("$controller", ".*")
        .replace("$namespace", namespace)
    )


def panel_queries() -> list[tuple[str, str, str]]:
    """(dashboard file, panel title, expr) of every panel target."""
    out = []
    for path in DASHBOARDS:
        for panel in json.loads(path.read_text())["panels"]:
            for target in panel.get("targets", []):
                out.append((path.name, panel["title"], target["expr"]))
    return out


def _finite(result: list[dict[str, Any]]) -> bool:
    return any(math.isfinite(float(s["value"][1])) for s in result)


# --------------------------------------------------------------------------- tests


async def test_every_dashboard_panel_query_returns_series(scenario: Scenario) -> None:
    queries = panel_queries()
    empty = []
    for dashboard, title, expr in queries:
        result = scenario.prometheus.query(substitute(expr, scenario.namespace))
        if not _finite(result):
            empty.append(f"{dashboard} / {title}: {expr} -> {result}")
    assert empty == [], "\n".join(empty)
    assert len(queries) >= 40


async def test_dashboard_variables_offer_the_operator_controllers_and_namespace(
    scenario: Scenario,
) -> None:
    values: dict[str, list[str]] = {}
    for path in DASHBOARDS:
        for variable in json.loads(path.read_text())["templating"]["list"]:
            if variable["type"] != "query":
                continue
            match = re.fullmatch(r"label_values\((.*), (\w+)\)", variable["definition"])
            assert match, variable["definition"]
            selector = match.group(1).replace("$job", OPERATOR_JOB)
            values[variable["name"]] = scenario.prometheus.api(
                f"label/{match.group(2)}/values", **{"match[]": selector}
            )
    assert OPERATOR_JOB in values["job"]
    assert {"raycluster", "rayjob", "rayservice"} <= set(values["controller"])
    assert scenario.namespace in values["namespace"]


async def test_kuberay_operator_dashboard_metrics_are_answered(scenario: Scenario) -> None:
    names = [
        line.strip()
        for line in KUBERAY_DASHBOARD_METRICS.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    missing = [n for n in names if not scenario.prometheus.query(f'{n}{{job="{OPERATOR_JOB}"}}')]
    assert missing == []
    assert len(names) >= 13


async def test_ray_pods_are_scraped_with_their_raycluster(scenario: Scenario) -> None:
    selector = f'namespace="{scenario.namespace}"'
    result = scenario.prometheus.query(
        f"count by (ray_io_cluster, pod) (ray_node_cpu_utilization{{{selector}}})"
    )
    history = scenario.prometheus.query(
        f"count_over_time(ray_node_cpu_utilization{{{selector}}}[3m])"
    )
    assert sorted(s["metric"]["pod"] for s in result) == sorted(scenario.ray_pods), history
    assert {s["metric"]["ray_io_cluster"] for s in result} == {"metrics"}


async def test_alert_rules_evaluate_and_fire_for_what_went_wrong(scenario: Scenario) -> None:
    groups = scenario.prometheus.api("rules", type="alert")["groups"]
    rules = [r for g in groups for r in g["rules"]]
    rule_names = yaml.safe_load((MONITORING / "rules" / "kuberay-alerts.yaml").read_text())
    expected = {r["alert"] for g in rule_names["groups"] for r in g["rules"]}
    assert {r["name"] for r in rules} == expected
    broken = [f"{r['name']}: {r.get('lastError')}" for r in rules if r["health"] != "ok"]
    assert broken == []

    ns = scenario.namespace
    alerts = {
        (a["labels"]["alertname"], a["labels"].get("name", ""), a["state"])
        for a in scenario.prometheus.api("alerts")["alerts"]
        if a["labels"].get("namespace", ns) == ns
    }
    assert ("RayJobFailed", "fails", "firing") in alerts
    assert ("RayClusterNotProvisioned", "stuck", "pending") in alerts
    assert ("RayServiceNotReady", "stuck-svc", "pending") in alerts
    names = {a[0] for a in alerts}
    assert "KubeRayOperatorDown" not in names and "RayJobRetrying" not in names
    assert not {n for n, obj, _ in alerts if obj in ("metrics", "ok")}


async def test_only_loopback_and_real_node_pods_are_scraped(scenario: Scenario) -> None:
    targets = scenario.prometheus.api("targets")["activeTargets"]
    addresses = {t["scrapeUrl"].split("/")[2] for t in targets}
    assert addresses and all(allowed_target(a) for a in addresses), addresses
    assert {t["health"] for t in targets} == {"up"}
