"""KubeRay's flags and env vars, their defaults, and one-line errors."""

from __future__ import annotations

import pytest

from kuberay.historyserver.collector.config import ConfigError, parse_options

ENV = {"RAY_CLUSTER_NAME": "raycluster-hs", "STORAGE_BACKEND": "s3", "RAY_ROLE": "Head"}


def test_defaults_match_kuberay() -> None:
    o = parse_options([], ENV)
    assert (o.role, o.cluster_namespace, o.events_port, o.dashboard_address) == (
        "Head",
        "default",
        8084,
        "http://localhost:8265",
    )
    assert o.event_data_dir == "/tmp/ray/event-data"
    assert (o.event_rotation_interval, o.event_max_file_size, o.event_max_disk) == (
        300.0,
        100 << 20,
        200 << 20,
    )
    assert (o.event_compression, o.enable_event_collector, o.enable_log_collector) == (
        False,
        True,
        True,
    )
    assert (o.poll_interval, o.tmp_root, o.dashboard_port) == (30.0, "/tmp/ray", "8265")
    assert o.events_hosts == ("127.0.0.1", "::1")
    assert parse_options([], {k: v for k, v in ENV.items() if k != "RAY_ROLE"}).role == "Worker"


def test_go_style_flags_and_env_precedence() -> None:
    o = parse_options(
        [
            "-role=worker",
            "--ray-cluster-name",
            "from-flag",
            "--event-rotation-interval=1m30s",
            "--event-compression-enabled",
            "--enable-log-collector=false",
            "--owner-kind=RayJob",
            "--owner-name=job-a",
        ],
        {
            "RAY_CLUSTER_NAME": "from-env",
            "STORAGE_BACKEND": "GCS",
            "RAY_COLLECTOR_POLL_INTERVAL": "10s",
            "RAY_COLLECTOR_ADDITIONAL_ENDPOINTS": " /api/v0/tasks?limit=1 , /nodes?view=summary",
            "RAY_COLLECTOR_EVENTS_HOST": "0.0.0.0",
        },
    )
    assert (o.role, o.cluster_name, o.storage_backend) == ("Worker", "from-env", "gcs")
    assert (o.event_rotation_interval, o.event_compression, o.enable_log_collector) == (
        90.0,
        True,
        False,
    )
    assert (o.owner_kind, o.owner_name, o.poll_interval) == ("rayjob", "job-a", 10.0)
    assert o.additional_endpoints == ("/api/v0/tasks?limit=1", "/nodes?view=summary")
    assert o.events_hosts == ("0.0.0.0",)


def test_bad_tunable_env_warns_and_keeps_the_default() -> None:
    o = parse_options([], ENV | {"RAY_COLLECTOR_EVENT_MAX_DISK_MB": "lots", "EVENTS_PORT": "x"})
    assert o.event_max_disk == 200 << 20 and o.events_port == 8084
    assert len(o.warnings) == 2 and all("\n" not in w for w in o.warnings)


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        ([], {"STORAGE_BACKEND": "s3"}, "invalid ray-cluster-name ''"),
        ([], ENV | {"RAY_CLUSTER_NAME": "Bad_Name"}, "invalid ray-cluster-name"),
        ([], ENV | {"STORAGE_BACKEND": "localtest"}, "unsupported storage backend 'localtest'"),
        ([], ENV | {"RAY_ROLE": "boss"}, "invalid role 'boss'"),
        ([], ENV | {"OWNER_KIND": "rayjob"}, "must be provided together"),
        ([], ENV | {"OWNER_KIND": "deployment", "OWNER_NAME": "x"}, "unsupported owner-kind"),
        (["--enable-event-collector=false", "--enable-log-collector=0"], ENV, "at least one"),
        (["--event-rotation-interval=soon"], ENV, "invalid --event-rotation-interval"),
        (["--no-such-flag=1"], ENV, "unknown arguments"),
    ],
)
def test_bad_settings_fail_with_one_line(
    argv: list[str], env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_options(argv, env)
    assert "\n" not in str(info.value)
