"""``render`` of every RayJob and RayService sample: the children each controller (and the
RayCluster controller, for the cluster) would create, with the right kinds, names,
owners and wiring. Equality with the operator's creates is the integration test's job."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kuberay.controllers.raycluster.render import render_raycluster
from kuberay.controllers.render import RenderError, RenderOptions, render
from kuberay.kubectl_ray import run
from tests.kuberay_samples import KUBERAY_SAMPLES as SAMPLES
from tests.kuberay_samples import requires_kuberay_samples

pytestmark = requires_kuberay_samples
Obj = dict[str, Any]


def _docs(kind: str) -> list[tuple[str, Obj]]:
    found = []
    for path in sorted(SAMPLES.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == kind:
                found.append((path.stem, doc))
    return found


RAYJOBS = _docs("RayJob")
RAYSERVICES = _docs("RayService")


def _name(obj: Obj) -> str:
    return str(obj["metadata"]["name"])


def _owner(obj: Obj) -> tuple[str, str]:
    (ref,) = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")]
    return ref["kind"], ref["name"]


def _cluster_part(out: list[Obj], owner_kind: str, owner: str) -> tuple[Obj, list[Obj]]:
    """The RayCluster (first) and its children, which must be what the RayCluster renderer
    gives for it."""
    cluster = out[0]
    assert cluster["kind"] == "RayCluster"
    assert re.fullmatch(rf"{re.escape(owner)}-[a-z0-9]{{5}}", _name(cluster))
    assert _owner(cluster) == (owner_kind, owner)
    assert cluster["metadata"]["labels"]["ray.io/originated-from-crd"] == owner_kind
    children = render_raycluster(cluster, RenderOptions())
    assert out[1 : 1 + len(children)] == children
    head_pods = [
        c
        for c in children
        if c["kind"] == "Pod" and c["metadata"]["labels"]["ray.io/node-type"] == "head"
    ]
    assert len(head_pods) == 1
    return cluster, children


def _selects(svc: Obj, cluster: Obj) -> None:
    selector = svc["spec"]["selector"]
    assert selector["ray.io/cluster"] == _name(cluster)


@pytest.mark.parametrize(("sample", "doc"), RAYJOBS, ids=[s for s, _ in RAYJOBS])
def test_rayjob_sample_renders(sample: str, doc: Obj) -> None:
    out = render(doc)
    spec = doc["spec"]
    assert out == render(doc), "render is deterministic"
    if spec.get("clusterSelector") or spec.get("suspend"):
        assert out == []
        return
    name = doc["metadata"].get("name") or doc["metadata"]["generateName"]
    if "name" not in doc["metadata"]:
        assert out[0]["metadata"]["labels"]["ray.io/originated-from-cr-name"].startswith(name)
        name = out[0]["metadata"]["labels"]["ray.io/originated-from-cr-name"]
    cluster, children = _cluster_part(out, "RayJob", name)
    rest = out[1 + len(children) :]
    mode = spec.get("submissionMode") or "K8sJobMode"
    head = next(c for c in children if c["kind"] == "Pod")
    containers = [c["name"] for c in head["spec"]["containers"]]
    if mode == "SidecarMode":
        assert "ray-job-submitter" in containers
        assert head["spec"]["restartPolicy"] == "Never"
    else:
        assert "ray-job-submitter" not in containers
    if mode == "InteractiveMode" and not spec.get("jobId"):
        assert rest == []  # Waiting: nothing more until spec.jobId is set
        return
    if mode == "K8sJobMode":
        job, svc = rest
        assert (job["kind"], _name(job)) == ("Job", name)
        assert _owner(job) == ("RayJob", name)
        submit = job["spec"]["template"]["spec"]["containers"][0]
        script = " ".join(submit.get("command") or []) + " " + " ".join(submit.get("args") or [])
        env = {e["name"]: e.get("value") for e in submit.get("env") or []}
        cluster_head_svc = next(c for c in children if c["kind"] == "Service")
        assert env["RAY_DASHBOARD_ADDRESS"].startswith(f"{_name(cluster_head_svc)}.")
        job_id = env["RAY_JOB_SUBMISSION_ID"]
        assert job_id == spec.get("jobId", job_id) and job_id.startswith(name)
        if not spec.get("submitterPodTemplate"):
            assert "ray job submit" in script and f"--submission-id {job_id}" in script
    else:
        (svc,) = rest
    assert (svc["kind"], _name(svc)) == ("Service", f"{name}-head-svc")
    assert _owner(svc) == ("RayJob", name)
    _selects(svc, cluster)


@pytest.mark.parametrize(("sample", "doc"), RAYSERVICES, ids=[s for s, _ in RAYSERVICES])
def test_rayservice_sample_renders(sample: str, doc: Obj) -> None:
    out = render(doc)
    assert out == render(doc), "render is deterministic"
    name = _name(doc)
    cluster, children = _cluster_part(out, "RayService", name)
    head_svc, serve_svc = out[1 + len(children) :]
    assert (head_svc["kind"], _name(head_svc)) == ("Service", f"{name}-head-svc")
    custom = (doc["spec"].get("serveService") or {}).get("metadata", {}).get("name")
    incremental = (doc["spec"].get("upgradeStrategy") or {}).get(
        "type"
    ) == "NewClusterWithIncrementalUpgrade"
    if custom and not incremental:
        assert _name(serve_svc) == custom
    else:
        assert _name(serve_svc).endswith("-serve-svc")
    for svc in (head_svc, serve_svc):
        assert _owner(svc) == ("RayService", name)
        _selects(svc, cluster)
    assert serve_svc["spec"]["selector"]["ray.io/serve"] == "true"


def test_rayjob_in_cluster_selector_mode_creates_nothing() -> None:
    (doc,) = [d for s, d in RAYJOBS if s == "ray-job.use-existing-raycluster"]
    assert doc["spec"]["clusterSelector"]
    assert render(doc) == []


def test_interactive_rayjob_with_job_id_gets_its_head_service() -> None:
    (doc,) = [d for s, d in RAYJOBS if s == "ray-job.interactive-mode"]
    doc = {**doc, "spec": {**doc["spec"], "jobId": "my-job"}}
    kinds = [(o["kind"], _name(o)) for o in render(doc) if o["kind"] != "Pod"]
    assert kinds[-1] == ("Service", f"{_name(doc)}-head-svc")
    assert "Job" not in [k for k, _ in kinds]


def test_suspended_rayservice_creates_nothing() -> None:
    (doc,) = [d for s, d in RAYSERVICES if s == "ray-service.sample"]
    assert render({**doc, "spec": {**doc["spec"], "suspend": True}}) == []


def test_invalid_rayjob_is_refused_with_the_controller_message() -> None:
    (doc,) = [d for s, d in RAYJOBS if s == "ray-job.sample"]
    bad = {**doc, "spec": {**doc["spec"], "ttlSecondsAfterFinished": 10}}
    bad["spec"]["shutdownAfterJobFinishes"] = False
    with pytest.raises(RenderError, match="TTLSecondsAfterFinished"):
        render(bad)


async def test_cli_renders_a_multi_document_rayjob_file(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    out, err = io.StringIO(), io.StringIO()
    code = await run(
        ["--kubeconfig", str(kubeconfig), "render", "-f", str(SAMPLES / "ray-job.sample.yaml")],
        stdout=out,
        stderr=err,
    )
    assert code == 0, err.getvalue()
    kinds = [d["kind"] for d in yaml.safe_load_all(out.getvalue())]
    assert kinds[0] == "RayCluster" and kinds[-2:] == ["Job", "Service"]
