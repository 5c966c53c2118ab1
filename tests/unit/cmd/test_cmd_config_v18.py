"""KubeRay v1.8's operator settings: ``allowedNodeLabels`` (node label delivery) and the node
event forwarder's switch and filters, as flags and as Configuration file fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from kuberay.cmd.config import ConfigError, OperatorConfig, parse_config
from kuberay.controllers.config import NodeEventFilter
from kuberay.featuregates.kuberay_gates import new_feature_gate


def parse(*argv: str) -> OperatorConfig:
    cfg, _ = parse_config(list(argv), new_feature_gate())
    return cfg


def test_off_and_empty_by_default() -> None:
    cfg = parse()
    assert cfg.allowed_node_labels == []
    assert cfg.controller_config().node_event_forwarder is None


def test_flags() -> None:
    cfg = parse(
        "--allowed-node-labels=topology.kubernetes.io/zone, nvidia.com/gpu.clique",
        "--enable-node-event-forwarder",
        "--node-event-forwarder-sources=node-problem-detector",
        "--node-event-forwarder-reasons=XIDError,KernelDeadlock",
        "--node-event-forwarder-types=Warning",
    )
    assert cfg.allowed_node_labels == ["topology.kubernetes.io/zone", "nvidia.com/gpu.clique"]
    assert cfg.controller_config().node_event_forwarder == NodeEventFilter(
        sources=frozenset({"node-problem-detector"}),
        reasons=frozenset({"XIDError", "KernelDeadlock"}),
        types=frozenset({"Warning"}),
    )
    assert parse("--enable-node-event-forwarder").controller_config().node_event_forwarder == (
        NodeEventFilter()
    )


def test_config_file_fields(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: config.ray.io/v1alpha1\nkind: Configuration\n"
        "allowedNodeLabels: [topology.kubernetes.io/zone]\n"
        "enableNodeEventForwarder: true\n"
        "nodeEventForwarderReasons: [XIDError]\n"
        "nodeEventForwarderTypes: [Warning, Normal]\n"
    )
    cfg, warnings = parse_config([f"--config={path}"], new_feature_gate())
    assert warnings == []
    assert cfg.allowed_node_labels == ["topology.kubernetes.io/zone"]
    only = cfg.controller_config().node_event_forwarder
    assert only == NodeEventFilter(
        reasons=frozenset({"XIDError"}), types=frozenset({"Warning", "Normal"})
    )


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["--node-event-forwarder-types=Warning,Critical"],
            'invalid event type "Critical": must be one of "Normal", "Warning"',
        ),
        (["--node-event-forwarder-types=warning"], 'invalid event type "warning"'),
    ],
)
def test_unknown_event_type_stops_the_operator(argv: list[str], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        parse(*argv)


def test_config_file_lists_must_hold_strings(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("allowedNodeLabels: [1, 2]\n")
    with pytest.raises(ConfigError, match="allowedNodeLabels must be a list of strings"):
        parse_config([f"--config={path}"], new_feature_gate())
