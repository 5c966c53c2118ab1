"""kubectl-style tables and ages."""

from __future__ import annotations

import pytest

from kuberay.kubectl_ray.output import format_table, human_duration


def test_table_matches_kubectl_layout() -> None:
    # KubeRay's own expected output for get nodes (pods of two clusters).
    text = format_table(
        ["Name", "CPUs", "Cluster", "Type", "Worker Group", "Age"],
        [
            ["pod-1", "1", "cluster-1", "head", "", "60m"],
            ["pod-2", "1", "cluster-1", "worker", "group-2", "120m"],
        ],
    )
    assert text == (
        "NAME    CPUS   CLUSTER     TYPE     WORKER GROUP   AGE\n"
        "pod-1   1      cluster-1   head                    60m\n"
        "pod-2   1      cluster-1   worker   group-2        120m\n"
    )


def test_no_rows_prints_nothing() -> None:
    assert format_table(["Name"], []) == ""


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (5, "5s"),
        (119, "119s"),
        (150, "2m30s"),
        (180, "3m"),
        (3600, "60m"),
        (7200, "120m"),
        (3 * 3600, "3h"),
        (4 * 3600 + 60 * 5, "4h5m"),
        (30 * 3600, "30h"),
        (3 * 86400 + 3600, "3d1h"),
        (30 * 86400, "30d"),
        (3 * 365 * 86400, "3y"),
        (3 * 365 * 86400 + 86400 * 2, "3y2d"),
        (10 * 365 * 86400, "10y"),
    ],
)
def test_human_duration(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text
