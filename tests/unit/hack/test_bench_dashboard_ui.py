"""The dashboard UI benchmark's reading of what the page measured
(``hack/benchmarks/bench_dashboard_ui.py``): list pages, phases, the window check."""

from __future__ import annotations

from typing import Any

from hack.benchmarks.bench_dashboard_ui import breakdown, raycluster


def _page() -> dict[str, Any]:
    base = "http://127.0.0.1:1/apis/ray.io/v1/namespaces/bench/rayclusters?limit=500"
    return {
        "resources": [
            {"name": "http://127.0.0.1:1/dashboard/config.json", "start": 90.0,
             "requestStart": 91.0, "responseStart": 99.0, "end": 100.0, "bytes": 900},
            {"name": base + "&pretty=false", "start": 110.0, "requestStart": 111.0,
             "responseStart": 160.0, "end": 210.0, "bytes": 1_000_000},
            {"name": base + "&pretty=false&continue=x", "start": 220.0, "requestStart": 221.0,
             "responseStart": 250.0, "end": 300.0, "bytes": 1_000_000},
        ],
        "first": {"dom": 340.0, "painted": 400.04, "rows": 100},
        "all": {"dom": 420.0, "painted": 900.0},
        "frames": [
            {"start": 330.0, "duration": 70.0, "styleAndLayoutStart": 380.0, "scripts": [
                {"duration": 30.0}, {"duration": 15.0}]},
            {"start": 410.0, "duration": 490.0, "styleAndLayoutStart": 500.0, "scripts": []},
        ],
        "rows": 1000, "window_height": 1000, "body_top": 150.0, "row_height": 36.0,
        "fcp": 50.0, "html_end": 10.0, "dom_content_loaded": 80.0, "js_heap": 9 << 20,
    }  # fmt: skip


def test_the_phases_are_read_from_the_list_pages_and_the_marks() -> None:
    got = breakdown(_page())
    assert got["first_paint_ms"] == 400.0 and got["all_rows_painted_ms"] == 900.0
    assert got["list_start_ms"] == 110.0 and got["list_end_ms"] == 300.0
    assert got["config_end_ms"] == 100.0
    assert got["list_pages"] == [
        {"first_byte_ms": 49.0, "body_ms": 50.0, "bytes": 1_000_000},
        {"first_byte_ms": 29.0, "body_ms": 50.0, "bytes": 1_000_000},
    ]
    assert got["list_to_rows_ms"] == 40.0 and got["rows_to_paint_ms"] == 60.0
    assert got["all_rows_to_paint_ms"] == 480.0
    assert got["rows_the_window_holds"] == 24  # ceil(850 / 36)
    assert got["longest_frame"] == {
        "start_ms": 410.0,
        "duration_ms": 490.0,
        "script_ms": 0,
        "style_and_layout_ms": 400.0,
    }
    assert got["js_heap_mib"] == 9.0


def test_the_clusters_carry_the_status_the_table_shows() -> None:
    from datetime import UTC, datetime

    body, status = raycluster(7, datetime(2026, 1, 1, tzinfo=UTC))
    assert body["metadata"] == {
        "name": "rc-0007",
        "namespace": "bench",
        "labels": {"team": "team-0", "app.kubernetes.io/part-of": "bench"},
    }
    assert status["state"] == "suspended" and status["availableWorkerReplicas"] == 0
    ready = raycluster(1, datetime(2026, 1, 1, tzinfo=UTC))[1]
    assert ready["state"] == "ready" and ready["desiredCPU"] == "3"
    assert ready["desiredWorkerReplicas"] == ready["availableWorkerReplicas"] == 2
    assert "state" not in raycluster(13, datetime(2026, 1, 1, tzinfo=UTC))[1]  # provisioning
