"""Operator flags, the Configuration file, and feature-gate wiring."""

from __future__ import annotations

from pathlib import Path

import pytest

from kuberay.cmd.config import ConfigError, OperatorConfig, parse_config
from kuberay.featuregates.kuberay_gates import KUBERAY_FEATURES, new_feature_gate


def parse(*argv: str) -> OperatorConfig:
    cfg, _ = parse_config(list(argv), new_feature_gate())
    return cfg


def test_defaults_match_kuberay() -> None:
    cfg = parse()
    assert cfg.metrics_addr == ":8080"
    assert cfg.probe_addr == ":8082"
    assert cfg.enable_leader_election is True
    assert cfg.leader_election_namespace == ""
    assert cfg.reconcile_concurrency == 4  # not KubeRay's 1: docs/benchmark.md
    assert cfg.watch_namespaces == []
    assert cfg.log_stdout_encoder == "json" and cfg.log_file_encoder == "json"
    assert cfg.batch_scheduler == "" and cfg.enable_batch_scheduler is False
    assert cfg.use_kubernetes_proxy is False and cfg.enable_metrics is False
    assert cfg.qps == 100.0 and cfg.burst == 200


def test_every_flag() -> None:
    cfg = parse(
        "--metrics-addr=:9090",
        "--health-probe-bind-address",
        ":9091",
        "--enable-leader-election=false",
        "--leader-election-namespace=ops",
        "--reconcile-concurrency=4",
        "--watch-namespace=a, b,,c",
        "--log-file-path=/tmp/op.log",
        "--log-file-encoder=console",
        "--log-stdout-encoder=console",
        "--batch-scheduler=yunikorn",
        "--use-kubernetes-proxy",
        "--feature-gates=RayCronJob=true,RayJobDeletionPolicy=false",
        "--enable-metrics",
        "--qps=50.5",
        "--burst=75",
        "--kubeconfig=/k",
        "--forced-cluster-upgrade",
    )
    assert cfg.metrics_addr == ":9090" and cfg.probe_addr == ":9091"
    assert cfg.enable_leader_election is False
    assert cfg.leader_election_namespace == "ops"
    assert cfg.reconcile_concurrency == 4
    assert cfg.watch_namespaces == ["a", "b", "c"]
    assert cfg.log_file_path == "/tmp/op.log"
    assert cfg.log_file_encoder == "console" and cfg.log_stdout_encoder == "console"
    assert cfg.batch_scheduler == "yunikorn"
    assert cfg.use_kubernetes_proxy and cfg.enable_metrics
    assert cfg.qps == 50.5 and cfg.burst == 75
    assert cfg.kubeconfig == "/k"


def test_go_style_single_dash_flags() -> None:
    cfg = parse("-metrics-addr=:1", "-enable-leader-election=false")
    assert cfg.metrics_addr == ":1" and cfg.enable_leader_election is False


def test_deprecated_enable_batch_scheduler_means_volcano() -> None:
    assert parse("--enable-batch-scheduler").batch_scheduler == "volcano"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--reconcile-concurrency=0"], "reconcile-concurrency"),
        (["--reconcile-concurrency=x"], "reconcile-concurrency"),
        (["--qps=fast"], "qps"),
        (["--enable-leader-election=maybe"], "enable-leader-election"),
        (["--log-stdout-encoder=xml"], "log-stdout-encoder"),
        (["--batch-scheduler=slurm"], "slurm"),
        (["--batch-scheduler=volcano", "--enable-batch-scheduler"], "enable-batch-scheduler"),
        (["--feature-gates=KubernetesWAS=true", "--batch-scheduler=volcano"], "KubernetesWAS"),
        (["--feature-gates=NoSuchGate=true"], "NoSuchGate"),
        (["--feature-gates=RayCronJob=yes"], "RayCronJob"),
        (["--no-such-flag"], "no-such-flag"),
        (["--zap-log-level=loud"], "loud"),
    ],
)
def test_bad_flags_give_one_clear_line(argv: list[str], needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse(*argv)
    message = str(info.value)
    assert needle in message
    assert "\n" not in message


def test_feature_gates_have_kuberay_names_defaults_and_stages() -> None:
    gates = new_feature_gate()
    expected = {
        "RayClusterStatusConditions": (True, "Beta"),
        "RayJobDeletionPolicy": (True, "Beta"),
        "RayMultiHostIndexing": (True, "Beta"),
        "RayServiceIncrementalUpgrade": (True, "Beta"),
        "RayCronJob": (False, "Alpha"),
        "SidecarSubmitterRestart": (False, "Alpha"),
        "RayClusterNetworkPolicy": (False, "Alpha"),
        "GCSFaultToleranceEmbeddedStorage": (False, "Alpha"),
        "RayClusterMTLS": (False, "Alpha"),
        "RayClusterHistoryServer": (False, "Alpha"),
        "KubernetesWAS": (False, "Alpha"),
        "NodeLabelDelivery": (False, "Alpha"),  # KubeRay v1.8
    }
    assert {k: (v.default, str(v.stage)) for k, v in KUBERAY_FEATURES.items()} == expected
    assert gates.as_dict() == {k: v[0] for k, v in expected.items()}
    parse_config(["--feature-gates=RayCronJob=true"], gates)
    assert gates.enabled("RayCronJob")


def test_config_file_wins_over_flags_except_gates_and_encoders(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        """
apiVersion: config.ray.io/v1alpha1
kind: Configuration
metricsAddr: ":7000"
probeAddr: ":7001"
enableLeaderElection: false
reconcileConcurrency: 3
watchNamespace: "x,y"
qps: 10
burst: 20
logStdoutEncoder: json
headSidecarContainers:
- name: fluentbit
  image: fluent/fluent-bit:1.9.6
defaultPodLabels: {team: ml}
someFutureField: true
"""
    )
    gates = new_feature_gate()
    cfg, warnings = parse_config(
        [
            f"--config={path}",
            "--metrics-addr=:1",  # ignored: the file decides
            "--log-stdout-encoder=console",  # still read from the command line
            "--feature-gates=RayCronJob=true",
        ],
        gates,
    )
    assert cfg.metrics_addr == ":7000" and cfg.probe_addr == ":7001"
    assert cfg.enable_leader_election is False
    assert cfg.reconcile_concurrency == 3
    assert cfg.watch_namespaces == ["x", "y"]
    assert cfg.qps == 10.0 and cfg.burst == 20
    assert cfg.log_stdout_encoder == "console"
    assert cfg.head_sidecar_containers[0]["name"] == "fluentbit"
    assert cfg.default_pod_labels == {"team": "ml"}
    assert gates.enabled("RayCronJob")
    assert any("someFutureField" in w for w in warnings)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("apiVersion: v1\nkind: ConfigMap\n", "config.ray.io/v1alpha1"),
        ("qps: fast\n", "qps"),
        ("reconcileConcurrency: true\n", "reconcileConcurrency"),
        ("[1, 2", "YAML"),
        ("batchScheduler: slurm\n", "slurm"),
    ],
)
def test_bad_config_file(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(content)
    with pytest.raises(ConfigError) as info:
        parse(f"--config={path}")
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--config"):
        parse(f"--config={tmp_path / 'nope.yaml'}")


@pytest.mark.parametrize(
    ("argv", "scheduler"),
    [
        (["--batch-scheduler=volcano"], "volcano"),
        (["--enable-batch-scheduler"], "volcano"),
        (["--batch-scheduler=yunikorn"], "yunikorn"),
        (["--batch-scheduler=scheduler-plugins"], "scheduler-plugins"),
        (["--batch-scheduler=kai-scheduler"], "kai-scheduler"),
    ],
)
def test_every_kuberay_batch_scheduler_is_accepted(argv: list[str], scheduler: str) -> None:
    from kuberay.cmd.config import refuse_unimplemented

    gates = new_feature_gate()
    cfg, _ = parse_config(argv, gates)
    refuse_unimplemented(cfg, gates)  # no ConfigError: the plugin exists
    assert cfg.batch_scheduler == scheduler


def test_batch_scheduler_from_config_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: config.ray.io/v1alpha1\nkind: Configuration\nbatchScheduler: yunikorn\n"
    )
    assert parse(f"--config={path}").batch_scheduler == "yunikorn"


def test_kubernetes_was_gate_alone_is_accepted() -> None:
    """The gate is implemented now: on its own it passes the config checks (whether the
    apiserver serves scheduling.k8s.io/v1alpha2 is checked at start-up)."""
    from kuberay.cmd.config import refuse_unimplemented

    gates = new_feature_gate()
    cfg, _ = parse_config(["--feature-gates=KubernetesWAS=true"], gates)
    refuse_unimplemented(cfg, gates)
    assert gates.enabled("KubernetesWAS") and cfg.batch_scheduler == ""
