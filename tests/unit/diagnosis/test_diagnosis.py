"""``why``'s rules on hand-made snapshots (no cluster)."""

from __future__ import annotations

import datetime as dt
import io
import tarfile
from pathlib import Path
from typing import Any

from kuberay.diagnosis.rules import Snapshot, check_events, diagnose
from kuberay.kubectl_ray.log import extract
from kuberay.kubectl_ray.why import format_diagnosis

NOW = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)


def cluster(**status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "c", "namespace": "ns", "generation": 1},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [{"name": "ray-head", "image": "ray"}]}},
            }
        },
        "status": status,
    }


def head(
    *, ready: bool = True, labels: dict[str, str] | None = None, **status: Any
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "c-head-x",
            "labels": labels or {"ray.io/cluster": "c", "ray.io/node-type": "head"},
        },
        "spec": {},
        "status": {
            "phase": "Running" if ready else "Pending",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            **status,
        },
    }


def service(selector: dict[str, str]) -> dict[str, Any]:
    return {"spec": {"selector": selector, "ports": [{"name": "dashboard", "port": 8265}]}}


def test_ready_cluster_has_no_errors() -> None:
    snap = Snapshot(
        obj=cluster(state="ready", observedGeneration=1),
        pods=[head()],
        services={"c-head-svc": service({"ray.io/node-type": "head"})},
        now=NOW,
    )
    d = diagnose(snap)
    assert d.ready and d.summary == "RayCluster ns/c is ready"
    assert "is ready." in format_diagnosis(d)


def test_missing_head_service_makes_dashboard_unreachable() -> None:
    snap = Snapshot(
        obj=cluster(state="ready"), pods=[head()], services={"c-head-svc": None}, now=NOW
    )
    d = diagnose(snap)
    assert not d.ready
    assert d.findings[0].reason == "DashboardUnreachable"
    assert "c-head-svc does not exist" in d.summary


def test_crash_loop_reports_last_exit() -> None:
    pod = head(
        ready=False,
        containerStatuses=[
            {
                "name": "ray-head",
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m"}},
                "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}},
            }
        ],
    )
    d = diagnose(Snapshot(obj=cluster(state="", observedGeneration=1), pods=[pod], now=NOW))
    top = d.findings[0]
    assert top.reason == "CrashLoopBackOff"
    assert "last exit: OOMKilled, code 137" in top.message
    assert "kubectl ray log" in top.hint


def test_no_status_no_pods_blames_the_operator() -> None:
    obj = cluster()
    obj.pop("status")
    d = diagnose(Snapshot(obj=obj, now=NOW))
    assert d.findings[0].reason == "NotReconciled"


def test_recent_warning_events_newest_first_deduplicated() -> None:
    def event(
        reason: str, minutes_ago: int, name: str = "c", etype: str = "Warning"
    ) -> dict[str, Any]:
        at = (NOW - dt.timedelta(minutes=minutes_ago)).isoformat().replace("+00:00", "Z")
        return {
            "type": etype,
            "reason": reason,
            "message": f"{reason} message",
            "involvedObject": {"kind": "RayCluster", "name": name},
            "lastTimestamp": at,
            "count": 3,
        }

    found = check_events(
        [
            event("FailedToCreateService", 10),
            event("FailedToCreateService", 5),
            event("InvalidRayClusterSpec", 2),
            event("Created", 1, etype="Normal"),
            event("Ancient", 24 * 60),
        ],
        NOW,
    )
    assert [f.reason for f in found] == [
        "Event:InvalidRayClusterSpec",
        "Event:FailedToCreateService",
    ]
    assert found[0].severity == "error"  # Invalid* events are spec errors
    assert found[1].message.endswith("(x3)")


def test_rayjob_diagnosis_includes_its_cluster() -> None:
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "j", "namespace": "ns"},
        "status": {"jobDeploymentStatus": "Initializing", "rayClusterName": "c"},
    }
    pod = head(ready=False)
    pod["status"]["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/1 nodes",
        }
    ]
    d = diagnose(
        Snapshot(obj=job, clusters=[Snapshot(obj=cluster(), pods=[pod], now=NOW)], now=NOW)
    )
    assert not d.ready
    assert d.findings[0].reason == "Unschedulable" and "0/1 nodes" in d.summary


def test_rayservice_failed_app() -> None:
    svc = {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": "s", "namespace": "ns"},
        "status": {
            "conditions": [{"type": "Ready", "status": "False", "reason": "Initializing"}],
            "pendingServiceStatus": {
                "applicationStatuses": {
                    "app1": {"status": "DEPLOY_FAILED", "message": "ImportError"}
                }
            },
        },
    }
    d = diagnose(Snapshot(obj=svc, now=NOW))
    assert d.findings[0].reason == "ServeAppDEPLOY_FAILED"
    assert "ImportError" in d.findings[0].message


def test_extract_skips_members_outside_the_directory(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, data in (("./raylet.out", b"ok"), ("../escape.txt", b"no")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    dest = tmp_path / "node"
    dest.mkdir()
    assert extract(buf.getvalue(), dest) == 1
    assert (dest / "raylet.out").read_bytes() == b"ok"
    assert not (tmp_path / "escape.txt").exists()


REFUSED = (
    "dashboard address 10.244.0.5:8265 refused: not in the allowed networks 127.0.0.0/8 "
    "(set KUBERAY_DASHBOARD_ALLOWED_NETWORKS or run the operator in the cluster)"
)


def rayjob_with(**status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "j", "namespace": "ns"},
        "status": {"rayClusterName": "c", **status},
    }


def test_why_names_the_cause_of_failing_status_checks_while_the_rayjob_waits() -> None:
    message = f"Waiting: the Ray dashboard of RayCluster c is unreachable: {REFUSED}"
    job = rayjob_with(jobDeploymentStatus="Running", jobStatus="RUNNING", message=message)
    d = diagnose(Snapshot(obj=job, now=NOW))
    assert not d.ready
    top = d.findings[0]
    assert (top.reason, top.object) == ("JobStatusChecksFailing", "RayJob/j")
    assert REFUSED in d.summary
    assert "KUBERAY_DASHBOARD_ALLOWED_NETWORKS" in top.hint
    text = format_diagnosis(d)
    assert "10.244.0.5:8265 refused" in text and "hint:" in text


def test_why_names_the_last_error_when_the_rayjob_gave_up() -> None:
    message = (
        "Job status checks have been failing since 2026-01-01 11:50:00; exceeded timeout of "
        f"300s: last error: {REFUSED}"
    )
    job = rayjob_with(
        jobDeploymentStatus="Failed", reason="JobStatusCheckTimeoutExceeded", message=message
    )
    d = diagnose(Snapshot(obj=job, now=NOW))
    assert not d.ready
    assert d.findings[0].reason == "JobStatusCheckTimeoutExceeded"
    assert REFUSED in d.summary and "KUBERAY_DASHBOARD_ALLOWED_NETWORKS" in d.findings[0].hint


def test_why_reads_the_operators_markers() -> None:
    from kuberay.controllers.rayjob import status
    from kuberay.diagnosis import rules as diagnosis

    assert (diagnosis.WAIT_PREFIX, diagnosis.LAST_ERROR) == (status.WAIT_PREFIX, status.LAST_ERROR)


def test_a_secret_not_read_is_not_reported_missing() -> None:
    """``kubectl ray get``'s WHY column and the dashboard read no Secret: no verdict on it;
    ``why`` reads it and reports it missing."""
    token = cluster(state="ready")
    token["spec"]["authOptions"] = {"mode": "token"}
    unread = diagnose(Snapshot(obj=token, now=NOW))
    assert "AuthSecretMissing" not in [f.reason for f in unread.findings]
    absent = diagnose(Snapshot(obj=token, secrets={"c": None}, now=NOW))
    assert "AuthSecretMissing" in [f.reason for f in absent.findings] and not absent.ready
