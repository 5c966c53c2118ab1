"""The objects the RayJob builders produce are accepted by a real kube-apiserver.

For every KubeRay RayJob sample, in K8sJobMode and in SidecarMode (with and without the
SidecarSubmitterRestart gate): the RayCluster (ray.io CRD), the submitter ``batch/v1`` Job and
the RayJob head Service are created in a fresh namespace and come back with everything we sent.
A submitter template without ``restartPolicy`` is the one expected refusal: Kubernetes rejects
Jobs whose pods would restart ``Always`` (KubeRay reports that as FailedToCreateRayJobSubmitter).
"""

from __future__ import annotations

import contextlib
import copy
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from kuberay.controllers.builders.service import build_rayjob_head_service
from kuberay.controllers.builders.submitter import build_submitter_job
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.rayjob.rayjob_cluster import build_rayjob_cluster
from kuberay.kube import ApiError, Client
from kuberay.testing.crds import install_crds
from tests.kuberay_samples import KUBERAY_SAMPLES as SAMPLES_DIR
from tests.kuberay_samples import requires_kuberay_samples

VARIANTS = (("K8sJobMode", False), ("SidecarMode", False), ("SidecarMode", True))


def _sample_rayjobs() -> list[tuple[str, dict[str, Any]]]:
    jobs = []
    for path in sorted(SAMPLES_DIR.glob("*.yaml")):
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if isinstance(doc, dict) and doc.get("kind") == "RayJob":
                jobs.append((f"{path.name}#{index}", doc))
    return jobs


SAMPLE_JOBS = _sample_rayjobs()


@dataclass
class Env:
    client: Client
    namespaces: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
async def env(kubeconfig_path: Path) -> AsyncIterator[Env]:
    """One client for the module, with the CRDs installed once."""
    env = Env(await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1))
    try:
        await install_crds(env.client)
        yield env
    finally:
        for name in env.namespaces:  # no namespace controller runs: not awaited to the end
            with contextlib.suppress(Exception):
                await env.client.delete("v1", "Namespace", name)
        await env.client.close()


async def _namespace(env: Env) -> str:
    name = f"t-rjb-{uuid.uuid4().hex[:8]}"
    await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    env.namespaces.append(name)
    return name


def _as_seen_by_the_controller(
    doc: dict[str, Any], index: int, namespace: str, mode: str
) -> dict[str, Any]:
    job = copy.deepcopy(doc)
    meta = job.setdefault("metadata", {})
    name = meta.get("name") or meta.get("generateName", "rayjob-") + "k8s5z"
    name = f"s{index}-{name}"[:47].rstrip("-")  # several samples share a name
    meta.update(name=name, namespace=namespace, uid=str(uuid.uuid4()))
    meta.pop("generateName", None)
    job["spec"]["submissionMode"] = mode
    cluster_name = f"{name}-bc2df"
    job["status"] = {
        "jobId": f"{name}-x7k2m",
        "rayClusterName": cluster_name,
        "dashboardURL": f"{cluster_name}-head-svc.{namespace}.svc.cluster.local:8265",
    }
    return job


def _assert_kept(sent: Any, got: Any, path: str = "") -> None:
    """Everything sent came back (the server may add defaults; quantities may be canonical)."""
    if isinstance(sent, dict):
        assert isinstance(got, dict), f"{path}: sent an object, got {got!r}"
        for key, value in sent.items():
            assert key in got, f"{path}.{key}: dropped by the server"
            _assert_kept(value, got[key], f"{path}.{key}")
    elif isinstance(sent, list):
        assert isinstance(got, list) and len(got) == len(sent), f"{path}: {sent!r} -> {got!r}"
        for i, (a, b) in enumerate(zip(sent, got, strict=True)):
            _assert_kept(a, b, f"{path}[{i}]")
    elif path.split(".")[-2:-1] in (["limits"], ["requests"]):
        return  # built-in types print quantities canonically
    else:
        assert sent == got, f"{path}: sent {sent!r}, got {got!r}"


def _restarts_always(job: dict[str, Any]) -> bool:
    policy = job["spec"]["template"]["spec"].get("restartPolicy")
    return policy not in ("Never", "OnFailure")


@requires_kuberay_samples
@pytest.mark.parametrize(("mode", "restart_gate"), VARIANTS)
async def test_sample_rayjob_children_are_accepted_by_the_apiserver(
    env: Env, mode: str, restart_gate: bool
) -> None:
    kube = env.client
    namespace = await _namespace(env)
    gates = {"SidecarSubmitterRestart": restart_gate}
    options = BuildOptions()
    created = 0
    for index, (sample, doc) in enumerate(SAMPLE_JOBS):
        rayjob = _as_seen_by_the_controller(doc, index, namespace, mode)
        if not rayjob["spec"].get("rayClusterSpec"):
            continue  # clusterSelector: nothing of ours but the Job (covered in K8sJobMode)
        cluster = build_rayjob_cluster(
            rayjob, rayjob["status"]["rayClusterName"], gates=gates, options=options
        )
        got = await kube.create(cluster)
        _assert_kept(cluster, got, sample)
        service = build_rayjob_head_service(rayjob, got, options=options)
        _assert_kept(service, await kube.create(service), sample)
        if mode == "K8sJobMode":
            submitter = build_submitter_job(rayjob, got, gates=gates, options=options)
            if _restarts_always(submitter):
                with pytest.raises(ApiError) as refused:
                    await kube.create(submitter)
                assert refused.value.status == 422, sample
                continue
            _assert_kept(submitter, await kube.create(submitter), sample)
        created += 1
    assert created >= 20
