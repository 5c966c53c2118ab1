"""The operator process's log file read back as a log pipeline written for KubeRay would:
every line is one JSON object with controller-runtime's keys, and a RayCluster's reconcile
lines are found by ``RayCluster == {"name", "namespace"}`` (logger ``controllers.RayCluster``,
one ``reconcileID`` per reconcile). The operator watches only a fresh namespace of the shared
apiserver, without leader election."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from kuberay.kube import Client
from kuberay.testing.crds import install_crds
from tests.e2e.harness import OperatorProcess, sample_raycluster
from tests.helpers import eventually

ZAP_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _read(path: Path) -> list[dict[str, Any]]:
    """Each line as JSON, as a shipper parses it (a non-JSON line fails here)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def test_reconcile_lines_found_by_object_keys(
    kclient: Client, kubeconfig_path: Path, tmp_path: Path
) -> None:
    await install_crds(kclient)
    ns = f"t-logs-{uuid.uuid4().hex[:8]}"
    await kclient.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    log_file = tmp_path / "kuberay-operator.log"
    op = OperatorProcess(
        "log-lines",
        kubeconfig_path,
        tmp_path,
        lease_namespace=ns,
        leader_election=False,
        extra_args=[
            f"--watch-namespace={ns}",
            "--log-stdout-encoder=json",
            "--zap-log-level=debug",  # our reconcilers say what they do at debug
            f"--log-file-path={log_file}",
        ],
    ).start()
    try:
        await op.wait_ready(60)
        cluster = sample_raycluster("logged", ns, replicas=1)
        # managed by MultiKueue: the reconciler logs (at debug) that it skips it, each time
        cluster["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
        await kclient.create(cluster)
        key = {"name": "logged", "namespace": ns}

        def reconcile_lines() -> list[dict[str, Any]]:
            return [line for line in _read(log_file) if line.get("RayCluster") == key]

        await eventually(lambda: len(reconcile_lines()) >= 1, timeout=60, message="reconcile lines")
        lines = _read(log_file)
        for line in lines:
            assert {"level", "ts", "msg"} <= set(line), line
            assert ZAP_TS.match(line["ts"]), line
            assert "event" not in line and "timestamp" not in line
        mine = reconcile_lines()
        for line in mine:
            assert line["logger"] in ("controllers.RayCluster", "controllers.NetworkPolicy")
            assert uuid.UUID(line["reconcileID"])
        assert any(line["logger"] == "controllers.RayCluster" for line in mine)
        # the same lines on stdout (after the harness's own header line)
        stdout = [json.loads(x) for x in op.log_path.read_text().splitlines() if x.startswith("{")]
        assert sum(x.get("RayCluster") == key for x in stdout) >= len(mine)
    finally:
        op.terminate()
        await kclient.delete("v1", "Namespace", ns)
