"""``kubectl ray render`` of a RayJob / RayService equals what the operator creates.

Representative samples (RayJob in K8sJobMode, SidecarMode and HTTPMode; two RayServices)
are applied once through the apiserver with the operator (RayCluster + RayJob or
RayService controllers) running in-process; every create it sends is recorded. Pods are
made Running/Ready as a kubelet would, the head at a fake Ray dashboard, so the
controllers go on to the children they create later (submitter Job, head and serve
Services). The rendered objects must be exactly the recorded bodies, modulo what only
the operator or apiserver can know: the random cluster-name and job-id suffixes (the
renderer's seeded placeholders are swapped for the live ones) and the RayCluster's uid.
"""

from __future__ import annotations

import contextlib
import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from kuberay.api.v1.constants import POD_TEMPLATE_HASH_KEY
from kuberay.controllers.builders.names import generate_ray_cluster_name, generate_ray_job_id
from kuberay.controllers.raycluster.render import stored_form
from kuberay.controllers.raycluster.templates import template_hash
from kuberay.controllers.rayjob.render import NAME_SEED as JOB_SEED
from kuberay.controllers.rayservice.render import NAME_SEED as SERVICE_SEED
from kuberay.kube import ApiError, Client
from tests.helpers import eventually
from tests.integration.kubectl_ray.conftest import Cli
from tests.integration.rayjob.conftest import start_operator
from tests.integration.rayjob.helpers import make_ready
from tests.integration.rayservice.conftest import start_service_operator
from tests.integration.rayservice.helpers import (
    fake_dashboard,
    pending_name,
    run_apps,
    serve_head,
    wait_put,
    wait_rs,
)
from tests.kuberay_samples import requires_kuberay_samples, sample

pytestmark = requires_kuberay_samples  # both tests render and create KubeRay's samples
Obj = dict[str, Any]


def _sample(file: str, kind: str) -> tuple[list[Obj], Obj]:
    docs = [d for d in yaml.safe_load_all(sample(file).read_text()) if d]
    return docs, next(d for d in docs if d.get("kind") == kind)


async def _apply_dependencies(client: Client, docs: list[Obj], ns: str) -> None:
    """The sample's other objects (ConfigMaps...), best effort."""
    for doc in docs:
        if doc.get("kind") in ("RayJob", "RayService", "RayCluster"):
            continue
        body = copy.deepcopy(doc)
        body.setdefault("metadata", {})["namespace"] = ns
        with contextlib.suppress(ApiError):
            await client.create(body)


class Recorder:
    """Every create the operator's client sends (Events left out)."""

    def __init__(self, client: Client) -> None:
        self.created: list[Obj] = []
        original = client.create

        async def record(obj: Obj, **kwargs: Any) -> Obj:
            self.created.append(copy.deepcopy(obj))
            return await original(obj, **kwargs)

        client.create = record  # type: ignore[method-assign]

    def children(self) -> list[Obj]:
        """Each named object once: a create the apiserver refused with AlreadyExists (the
        operator's cache lagging its own create) is the same body sent again."""
        out: list[Obj] = []
        seen: dict[tuple[str, str], Obj] = {}
        for c in self.created:
            if c.get("kind") == "Event":
                continue
            name = c["metadata"].get("name")
            if name:
                key = (str(c["kind"]), str(name))
                if key in seen:
                    assert seen[key] == c, f"{key} sent twice with different bodies"
                    continue
                seen[key] = c
            out.append(c)
        return out

    async def wait_count(self, count: int, what: str) -> None:
        await eventually(
            lambda: len(self.children()) >= count, timeout=60, message=f"{count} creates: {what}"
        )


async def _render(cli: Cli, doc: Obj, live: Obj, tmp_path: Path) -> list[Obj]:
    """Render the same object, plus the uid only the apiserver knows."""
    stamped = copy.deepcopy(doc)
    stamped["metadata"]["uid"] = live["metadata"]["uid"]
    stamped["metadata"]["namespace"] = live["metadata"]["namespace"]
    path = tmp_path / "obj.yaml"
    path.write_text(yaml.safe_dump(stamped))
    rendered = await cli("render", "-f", str(path), "-o", "json")
    assert rendered.code == 0, rendered.err
    items: list[Obj] = json.loads(rendered.out)["items"]
    return items


#: Hash of the whole RayCluster spec; in SidecarMode the spec embeds the submitter's
#: cluster address and job id, so the hash follows the random names (compared blank).
RECREATE_HASH = "ray.io/upgrade-strategy-recreate-hash"


def _rehashed(objs: list[Obj]) -> list[Obj]:
    """``objs`` (a rendering whose names were swapped for the live ones) with each pod's
    template hash computed again: the hash covers the head Service's name, which follows the
    cluster's name the renderer drew at random."""
    clusters = [o for o in objs if o["kind"] == "RayCluster"]
    if not clusters:
        return objs
    cluster = stored_form(clusters[0])
    spec = cluster["spec"]
    groups = {g["groupName"]: g for g in spec.get("workerGroupSpecs") or []}
    out = copy.deepcopy(objs)
    for obj in out:
        annotations = obj["metadata"].get("annotations") or {}
        if obj["kind"] != "Pod" or POD_TEMPLATE_HASH_KEY not in annotations:
            continue
        labels = obj["metadata"]["labels"]
        head = labels.get("ray.io/node-type") == "head"
        group = spec["headGroupSpec"] if head else groups[labels["ray.io/group"]]
        annotations[POD_TEMPLATE_HASH_KEY] = template_hash(cluster, group)
    return out


def _comparable(
    objs: list[Obj], swaps: dict[str, str], *, blank_hash: bool = False, rendered: bool = False
) -> list[str]:
    """``objs`` as sorted JSON texts with ``swaps`` applied; a rendering's pod template
    hashes computed again for the swapped names (``rendered``)."""
    swapped = []
    for obj in objs:
        text = json.dumps(obj, sort_keys=True)
        for old, new in swaps.items():
            text = text.replace(old, new)
        swapped.append(json.loads(text))
    out = []
    for obj in _rehashed(swapped) if rendered else swapped:
        if blank_hash and RECREATE_HASH in (obj["metadata"].get("annotations") or {}):
            obj["metadata"]["annotations"][RECREATE_HASH] = "<hash>"
        out.append(json.dumps(obj, sort_keys=True))
    return sorted(out)


async def _cluster_uid(client: Client, ns: str, name: str) -> str:
    cluster = await client.get("ray.io/v1", "RayCluster", name, ns)
    return str(cluster["metadata"]["uid"])


RAYJOB_CASES = [
    ("ray-job.sample.yaml", "K8sJobMode"),
    ("ray-job.sidecar-mode.yaml", "SidecarMode"),
    ("ray-job.sample.yaml", "HTTPMode"),
]


@pytest.mark.parametrize(("file", "mode"), RAYJOB_CASES, ids=[m for _, m in RAYJOB_CASES])
async def test_rayjob_render_equals_operator_creates(
    file: str,
    mode: str,
    cli: Cli,
    kclient: Client,
    namespace: str,
    kubeconfig_path: Path,
    tmp_path: Path,
) -> None:
    docs, doc = _sample(file, "RayJob")
    doc = copy.deepcopy(doc)
    doc["spec"]["submissionMode"] = mode
    name = doc["metadata"]["name"]
    opclient = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)
    recorder = Recorder(opclient)
    try:
        await _apply_dependencies(kclient, docs, namespace)
        async with fake_dashboard() as fake, start_operator(opclient, namespace):
            body = copy.deepcopy(doc)
            body["metadata"]["namespace"] = namespace
            live = await kclient.create(body)
            expected = await _render(cli, doc, live, tmp_path)
            kinds = [e["kind"] for e in expected]
            assert kinds[0] == "RayCluster" and kinds[-1] == "Service"
            assert ("Job" in kinds) == (mode == "K8sJobMode")
            # The cluster and its children first; then the head is "up" and the RayJob runs.
            tail = 2 if mode == "K8sJobMode" else 1
            await recorder.wait_count(len(expected) - tail, "the cluster and its children")
            live = await kclient.get("ray.io/v1", "RayJob", name, namespace)
            cluster_name = live["status"]["rayClusterName"]
            await make_ready(kclient, namespace, cluster_name, fake)
            await recorder.wait_count(len(expected), "the RayJob's own children")

            rng = random.Random(JOB_SEED)
            swaps = {
                generate_ray_cluster_name(name, rng): cluster_name,
                generate_ray_job_id(name, rng): live["status"]["jobId"],
            }
            uid = await _cluster_uid(kclient, namespace, cluster_name)
            sidecar = mode == "SidecarMode"
            got = _comparable(recorder.children(), {uid: ""}, blank_hash=sidecar)
            assert got == _comparable(expected, swaps, blank_hash=sidecar, rendered=True)
    finally:
        await opclient.close()


RAYSERVICE_CASES = ["ray-service.sample.yaml", "ray-service.custom-serve-service.yaml"]


@pytest.mark.parametrize("file", RAYSERVICE_CASES, ids=[f[:-5] for f in RAYSERVICE_CASES])
async def test_rayservice_render_equals_operator_creates(
    file: str,
    cli: Cli,
    kclient: Client,
    namespace: str,
    kubeconfig_path: Path,
    tmp_path: Path,
) -> None:
    docs, doc = _sample(file, "RayService")
    name = doc["metadata"]["name"]
    await _apply_dependencies(kclient, docs, namespace)
    async with fake_dashboard() as fake, start_service_operator(kubeconfig_path, namespace) as op:
        recorder = Recorder(op.client)
        body = copy.deepcopy(doc)
        body["metadata"]["namespace"] = namespace
        live = await kclient.create(body)
        expected = await _render(cli, doc, live, tmp_path)
        assert [e["kind"] for e in expected][-2:] == ["Service", "Service"]
        await recorder.wait_count(len(expected) - 2, "the cluster and its children")
        rs = await wait_rs(kclient, namespace, name, pending_name, message="pending cluster")
        cluster_name = pending_name(rs)
        await serve_head(kclient, namespace, cluster_name, fake)
        await wait_put(fake)
        run_apps(fake)
        await recorder.wait_count(len(expected), "the head and serve Services")

        swaps = {generate_ray_cluster_name(name, random.Random(SERVICE_SEED)): cluster_name}
        uid = await _cluster_uid(kclient, namespace, cluster_name)
        got = _comparable(recorder.children(), {uid: ""})
        assert got == _comparable(expected, swaps, rendered=True)
