"""The batch-scheduler plugins against what KubeRay's own plugins did with the same objects.

``data/kuberay_batchscheduler_go_golden.json.gz`` records KubeRay's Go output (KubeRay
``feeaf72``, see ``data/README.md``; the plugin selected by ``NewSchedulerManager`` on
controller-runtime's fake client) for the volcano, yunikorn, scheduler-plugins and KAI samples
(RayClusters and RayJobs) and crafted variants. For each case it recorded

* what ``DoBatchSchedulingOnSubmission`` stored (PodGroups) and its error string; for a
  RayJob, first on the RayJob, then on the RayCluster ``constructRayClusterForRayJob`` built
  from it (same fake client, so the second list includes the first);
* the head pod and one worker pod per group exactly as KubeRay's ``buildHeadPod`` /
  ``buildWorkerPod`` make them (not minimal pods), before and after
  ``AddMetadataToChildResource``; for a RayJob also its RayCluster (K8sJobMode, group ``""``)
  and the submitter pod template ``getSubmitterTemplate`` builds (K8sJobMode,
  ``submittergroup``), before and after;
* for a RayJob, ``CleanupOnCompletion``'s result, error and the PodGroups after it, first with
  the RayJob's RayCluster stored, then after that is deleted.

Here our plugin gets the same parent and a copy of KubeRay's "before" child, and the result
must equal KubeRay's "after" child as JSON (so nothing else on the object is touched); the
stored PodGroups must equal ours as created. Excluded: ``metadata.creationTimestamp: null``
and, for scheduler-plugins PodGroups, ``status`` (the Go struct's zero status, which the
fake client stores and our create body leaves out; the apiserver serves it from the status
subresource). Volcano PodGroups keep their ``status.phase: Pending`` (both send it).
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from kuberay.controllers.batchscheduler import BatchSchedulerError, new_batch_scheduler
from kuberay.controllers.batchscheduler.interface import BatchScheduler
from kuberay.gocompat.quantity import Quantity
from kuberay.kube import AlreadyExists, NotFound

DATA = Path(__file__).parents[1] / "data" / "kuberay_batchscheduler_go_golden.json.gz"

Obj = dict[str, Any]


def _load() -> list[Obj]:
    with gzip.open(DATA, "rt") as fh:
        data: list[Obj] = json.load(fh)
    return data


CASES = _load()


class _Store:
    """The apiserver calls the plugins make: get, create and update, stored as sent, with
    the fake client's resourceVersion counter ("1" on create, +1 per update)."""

    def __init__(self, existing: list[Obj]) -> None:
        self.objects: dict[tuple[str, str, str, str], Obj] = {}
        for obj in existing:
            meta = obj["metadata"]
            key = self._key(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
            self.objects[key] = copy.deepcopy(obj)

    @staticmethod
    def _key(api_version: str, kind: str, name: str, ns: str | None) -> tuple[str, str, str, str]:
        return (api_version, kind, ns or "", name)

    async def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> Obj:
        try:
            return copy.deepcopy(self.objects[self._key(api_version, kind, name, namespace)])
        except KeyError:
            raise NotFound(404, "NotFound", f"{kind} {name} not found") from None

    async def create(self, obj: Obj, *, field_manager: str | None = None) -> Obj:
        meta = obj["metadata"]
        key = self._key(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        if key in self.objects:
            raise AlreadyExists(409, "AlreadyExists", meta["name"])
        self.objects[key] = copy.deepcopy(obj)
        self.objects[key]["metadata"]["resourceVersion"] = "1"
        return copy.deepcopy(self.objects[key])

    async def update(self, obj: Obj) -> Obj:
        meta = obj["metadata"]
        key = self._key(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        current = self.objects[key]  # KeyError: an update of nothing
        self.objects[key] = copy.deepcopy(obj)
        rv = int(current["metadata"]["resourceVersion"]) + 1
        self.objects[key]["metadata"]["resourceVersion"] = str(rv)
        return copy.deepcopy(self.objects[key])

    def stored(self) -> list[Obj]:
        """The PodGroups, ordered as the harness lists them."""
        keys = sorted((k for k in self.objects if k[1] == "PodGroup"), key=lambda k: (k[0], k[3]))
        return [self.objects[k] for k in keys]


def _normalize(obj: Obj, untouched_rv: str = "") -> Obj:
    out = copy.deepcopy(obj)
    meta = out.get("metadata") or {}
    if meta.get("creationTimestamp") is None:
        meta.pop("creationTimestamp", None)
    if out.get("apiVersion") == "scheduling.x-k8s.io/v1alpha1":
        out.pop("status", None)
    spec = out.get("spec") or {}
    if untouched_rv and meta.get("resourceVersion") == untouched_rv and spec.get("minResources"):
        # A pre-stored PodGroup nobody wrote: the fake client re-serialised it through the
        # Go type, so its quantities read back canonical ("3000m" -> "3").
        spec["minResources"] = {
            k: str(Quantity.from_json(v)) for k, v in spec["minResources"].items()
        }
    return out


def _check_stored(store: _Store, expected: list[Obj], case: Obj) -> None:
    rvs = {str(o["metadata"].get("resourceVersion")) for o in case.get("existing") or []}
    untouched = rvs.pop() if len(rvs) == 1 else ""
    assert [_normalize(o, untouched) for o in store.stored()] == [
        _normalize(o, untouched) for o in expected
    ]


async def _submit(sched: BatchScheduler, obj: Obj) -> str:
    try:
        await sched.do_batch_scheduling_on_submission(copy.deepcopy(obj))
    except BatchSchedulerError as exc:
        return str(exc)
    return ""


def _stamp(sched: BatchScheduler, parent: Obj, child: Obj, group: str) -> Obj:
    out = copy.deepcopy(child)
    sched.add_metadata_to_child_resource(copy.deepcopy(parent), out, group)
    return out


async def _check_cluster_steps(
    sched: BatchScheduler, store: _Store, parent: Obj, expected: Obj, prefix: str, case: Obj
) -> None:
    assert await _submit(sched, parent) == expected[prefix + "submitErr"]
    _check_stored(store, expected[prefix + "stored"], case)
    for child in expected[prefix + "pods"]:
        assert _stamp(sched, parent, child["before"], child["group"]) == child["after"], child[
            "group"
        ]


@pytest.mark.parametrize("entry", CASES, ids=[c["case"]["name"] for c in CASES])
async def test_plugin_matches_kuberay(entry: Obj) -> None:
    assert entry["err"] == ""
    case, expected = entry["case"], entry["expected"]
    store = _Store(case.get("existing") or [])
    sched = new_batch_scheduler(case["scheduler"], store)  # type: ignore[arg-type]
    assert sched is not None and sched.name() == expected["schedulerName"]
    if "cluster" in case:
        await _check_cluster_steps(sched, store, case["cluster"], expected, "", case)
        return
    job = case["rayjob"]
    assert await _submit(sched, job) == expected["submitErr"]
    _check_stored(store, expected["stored"], case)
    if "rayCluster" in expected:
        child = expected["rayCluster"]
        assert _stamp(sched, job, child["before"], "") == child["after"]
    if "cluster.parent" in expected:
        await _check_cluster_steps(
            sched, store, expected["cluster.parent"], expected, "cluster.", case
        )
    if "submitter" in expected:
        child = expected["submitter"]
        assert _stamp(sched, job, child["before"], child["group"]) == child["after"]
    if "cleanupClusterPresent" in expected:
        cluster = copy.deepcopy(expected["cluster.parent"])
        key = _Store._key("ray.io/v1", "RayCluster", cluster["metadata"]["name"], job_ns(job))
        store.objects[key] = cluster
        for step in ("cleanupClusterPresent", "cleanupClusterGone"):
            if step == "cleanupClusterGone":
                del store.objects[key]
            want = expected[step]
            try:
                did, err = await sched.cleanup_on_completion(copy.deepcopy(job)), ""
            except BatchSchedulerError as exc:
                did, err = False, str(exc)
            assert (did, err) == (want["did"], want["err"]), step
            _check_stored(store, want["stored"], case)


def job_ns(job: Obj) -> str:
    return str(job["metadata"]["namespace"])


def test_golden_data_covers_the_branches() -> None:
    by_name = {c["case"]["name"]: c["expected"] for c in CASES}
    assert len(by_name) == len(CASES)
    # the gang objects KubeRay created
    (vpg,) = by_name["volcano-priority-topology"]["stored"]
    assert vpg["spec"]["priorityClassName"] == "high-priority"
    assert vpg["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 2}
    assert "failed to convert" in by_name["volcano-topology-bad-tier"]["submitErr"]
    assert by_name["scheduler-plugins-sample"]["stored"][0]["kind"] == "PodGroup"
    assert by_name["scheduler-plugins-gang-off"]["stored"] == []
    assert by_name["rayjob-kai-k8sjob"]["submitErr"].startswith("KAI-Scheduler does not support")
    assert by_name["rayjob-scheduler-plugins"]["submitErr"].startswith("currently only RayCluster")
    # the submitter template is stamped only in K8sJobMode
    assert "submitter" in by_name["rayjob-volcano-submitter-template"]
    assert "submitter" not in by_name["rayjob-volcano-sidecar"]
    # a stale PodGroup is resized, one numerically equal is left alone
    (stale,) = by_name["volcano-existing-stale"]["stored"]
    assert stale["metadata"]["resourceVersion"] == "8" and stale["spec"]["queue"] == "old-queue"
    assert by_name["volcano-existing-equal"]["stored"][0]["metadata"]["resourceVersion"] == "7"
    yk = by_name["yunikorn-sample"]["pods"][0]["after"]["metadata"]["annotations"]
    assert "yunikorn.apache.org/task-groups" in yk
