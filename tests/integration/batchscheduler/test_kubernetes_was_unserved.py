"""The KubernetesWAS gate on an apiserver that does not serve scheduling.k8s.io/v1alpha2
(kube-apiserver v1.36.3 with its default flags, as the shared test control plane runs):
like KubeRay, the operator refuses to start and says why."""

from __future__ import annotations

from pathlib import Path

from kuberay.cmd.config import parse_config
from kuberay.cmd.operator_run import run
from kuberay.controllers.batchscheduler.kubernetes_was import unavailable_reason
from kuberay.featuregates.kuberay_gates import new_feature_gate
from kuberay.kube import Client


async def test_discovery_reports_the_missing_api(kclient: Client) -> None:
    reason = await unavailable_reason(kclient)
    assert reason.startswith(
        "no served scheduling.k8s.io API version available for kubernetes-was-v1alpha2: "
        "scheduling.k8s.io/v1alpha2 API is not available: "
    )
    assert "404" in reason


async def test_operator_with_the_gate_exits_1(kubeconfig_path: Path) -> None:
    gates = new_feature_gate()
    cfg, _ = parse_config(
        [
            f"--kubeconfig={kubeconfig_path}",
            "--feature-gates=KubernetesWAS=true",
            # outside a cluster leader election needs a namespace; not what this test is about
            "--enable-leader-election=false",
            "--metrics-addr=127.0.0.1:0",
            "--health-probe-bind-address=127.0.0.1:0",
        ],
        gates,
    )
    assert await run(cfg, gates) == 1
