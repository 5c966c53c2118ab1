"""hack/benchmarks/bench_report.py: audit-log counting, request-budget math, the comparison."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any


def _report() -> ModuleType:
    from hack.benchmarks import bench_report

    return bench_report


def _event(
    audit_id: str,
    verb: str,
    resource: str,
    *,
    user: str = "op",
    subresource: str = "",
    stage: str = "ResponseComplete",
) -> str:
    ref: dict[str, Any] = {"resource": resource, "namespace": "bench"}
    if subresource:
        ref["subresource"] = subresource
    return json.dumps(
        {
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "auditID": audit_id,
            "stage": stage,
            "verb": verb,
            "requestURI": f"/api/v1/namespaces/bench/{resource}",
            "user": {"username": user},
            "objectRef": ref,
        }
    )


def test_counts_requests_of_the_given_users_by_verb_and_resource() -> None:
    r = _report()
    lines = [
        _event("a", "create", "pods"),
        _event("b", "create", "pods"),
        _event("c", "update", "rayclusters", subresource="status"),
        _event("d", "create", "pods", user="admin"),  # someone else's request
        "not json at all",
        _event("e", "create", "events", user="op-2"),
    ]
    assert r.count_requests(lines, ["op"]) == {
        "create pods": 2,
        "update rayclusters/status": 1,
    }
    assert r.count_requests(lines, ["op", "op-2"])["create events"] == 1


def test_a_watch_logged_at_start_and_at_completion_counts_once() -> None:
    r = _report()
    lines = [
        _event("w", "watch", "pods", stage="ResponseStarted"),
        _event("w", "watch", "pods", stage="ResponseComplete"),
        _event("l", "list", "pods"),
    ]
    assert r.count_requests(lines, ["op"]) == {"list pods": 1, "watch pods": 1}


def test_non_resource_requests_are_keyed_by_path() -> None:
    r = _report()
    line = json.dumps(
        {
            "auditID": "x",
            "verb": "get",
            "requestURI": "/version?timeout=32s",
            "user": {"username": "op"},
        }
    )
    assert r.count_requests([line.encode()], ["op"]) == {"get /version": 1}


def test_writes_and_in_budget_requests() -> None:
    r = _report()
    requests = {
        "create pods": 30,
        "create events": 40,
        "patch events": 5,
        "update rayclusters/status": 10,
        "list pods": 2,
        "watch pods": 2,
    }
    assert r.writes(requests) == 85
    # Events go through their own client and bucket; everything else shares one.
    assert r.in_budget_requests(requests) == 44


def test_budget_is_token_bucket_math() -> None:
    r = _report()
    assert r.budget_seconds(150, 100, 200) == 0.0  # within the initial burst
    assert r.budget_seconds(1200, 100, 200) == 10.0
    assert r.budget_seconds(8200, 50, 200) == 160.0
    assert r.budget_seconds(10_000, 0, 200) == 0.0  # qps 0: unthrottled


def test_table_has_one_column_per_report_and_writes_per_cluster() -> None:
    r = _report()
    go = {
        "label": "KubeRay-Go N=100",
        "clusters": 100,
        "seconds_to_all_pods": 10.1,
        "operator_idle_rss_mib": 37.5,
        "requests_by_verb_resource": {
            "create pods": 300,
            "create services": 100,
            "create events": 300,
            "update rayclusters/status": 200,
            "patch events": 100,
            "list pods": 3,
        },
    }
    raw = {"operator": "raw", "clusters": 100, "raw_seconds_to_all_pods": 4.44}
    table = r.render_table([go, raw])
    lines = table.splitlines()
    assert lines[0] == "| | KubeRay-Go N=100 | raw N=100 |"
    # the raw floor fills the pods row of a raw report
    assert "| seconds to all pods | 10.1 | 4.4 |" in lines
    assert "| idle RSS (no clusters, 30 s) | 37.5 MiB | - |" in lines
    assert lines[-1] == "| writes per cluster (audit log) | 7 create + 2 update + 1 patch | - |"
    ours = {"operator": "/venv/bin/python -m kuberay.cmd.operator", "clusters": 5}
    go = {"operator": "/cache/kuberay-go/kuberay-operator --foo", "clusters": 5}
    assert r.render_table([ours, go]).splitlines()[0] == "| | ours N=5 | kuberay-operator N=5 |"
    # rows no report has are left out
    assert not any(line.startswith("| peak RSS") for line in lines)
