"""Write the inputs of ``batchscheduler_golden_harness_test.go`` and combine its output.

Usage: ``python make_batchscheduler_golden_cases.py <samples dir> cases.json`` writes the
cases: the batch-scheduler samples (volcano, volcano with a queue, yunikorn, scheduler-plugins,
KAI, KAI GPU sharing, the volcano and yunikorn RayJobs) and crafted variants (numOfHosts > 1,
in-tree autoscaling, a suspended worker group, priority class and network-topology labels, a
bad topology tier, gang scheduling on/off, a parent task-groups annotation, RayJobs with and
without a submitter pod template, in SidecarMode/HTTPMode, with a clusterSelector, and the
RayJobs KAI and scheduler-plugins refuse). Each object is as the controller sees it: CRD
defaults applied (worker-group replica counts, ``numOfHosts``, ``submissionMode``...), a
namespace and uid, and for a RayJob the status it has when it builds its children.

``python make_batchscheduler_golden_cases.py --combine cases.json out.json data.json.gz``
stores ``[{"case": <case>, "expected": <objects>, "err": <err>}]``.
"""

from __future__ import annotations

import copy
import gzip
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml


def _rayjob_helpers() -> Any:
    """``make_rayjob_golden_cases`` next to this file (for its ``with_status``)."""
    path = Path(__file__).with_name("make_rayjob_golden_cases.py")
    spec = importlib.util.spec_from_file_location("make_rayjob_golden_cases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


with_status: Callable[[dict[str, Any], str], dict[str, Any]] = _rayjob_helpers().with_status

NAMESPACE = "bs-golden"
Obj = dict[str, Any]

_GPU_WORKER: Obj = {
    "groupName": "gpu-group",
    "replicas": 1,
    "minReplicas": 0,
    "maxReplicas": 4,
    "numOfHosts": 2,
    "rayStartParams": {},
    "template": {
        "spec": {
            "containers": [
                {
                    "name": "ray-worker",
                    "image": "rayproject/ray:2.52.0",
                    "resources": {
                        "limits": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"},
                        "requests": {"cpu": "1500m", "memory": "3Gi"},
                    },
                }
            ],
            "nodeSelector": {"pool": "gpu", "accel": "a100"},
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
            ],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "zone", "operator": "In", "values": ["a", "b"]}
                                ]
                            }
                        ]
                    }
                }
            },
        }
    },
}

_SUBMITTER_TEMPLATE: Obj = {
    "metadata": {"labels": {"team": "x"}, "annotations": {"note": "submitter"}},
    "spec": {
        "restartPolicy": "Never",
        "nodeSelector": {"pool": "cpu"},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "ray"}],
        "containers": [
            {
                "name": "my-submitter",
                "image": "rayproject/ray:2.52.0",
                "resources": {
                    "requests": {"cpu": "300m", "memory": "256Mi"},
                    "limits": {"cpu": "500m", "memory": "512Mi"},
                },
            }
        ],
    },
}


def _docs(path: Path, kind: str) -> Obj:
    (doc,) = [d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == kind]
    return dict(doc)


def _default_cluster_spec(spec: Obj) -> None:
    for group in spec.get("workerGroupSpecs") or []:
        group.setdefault("replicas", 0)
        group.setdefault("minReplicas", 0)
        group.setdefault("maxReplicas", 2147483647)
        group.setdefault("priority", 0)
        group.setdefault("numOfHosts", 1)


def _cluster(doc: Obj) -> Obj:
    """A RayCluster as the apiserver returns it (namespace, uid, CRD defaults)."""
    out = copy.deepcopy(doc)
    meta = out["metadata"]
    meta["namespace"] = NAMESPACE
    meta.setdefault("uid", "uid-" + meta["name"])
    _default_cluster_spec(out["spec"])
    return out


def _rayjob(doc: Obj) -> Obj:
    """A RayJob as the RayJob controller sees it (CRD defaults, status filled in)."""
    out = copy.deepcopy(doc)
    out["metadata"]["namespace"] = NAMESPACE
    spec = out["spec"]
    spec.setdefault("backoffLimit", 0)
    spec.setdefault("ttlSecondsAfterFinished", 0)
    if spec.get("rayClusterSpec"):
        _default_cluster_spec(spec["rayClusterSpec"])
    return with_status(out, cluster_name(out))


def cluster_name(rayjob: Obj) -> str:
    return str(rayjob["metadata"]["name"]) + "-raycluster-abcde"


def _labels(obj: Obj) -> dict[str, str]:
    labels: dict[str, str] = obj["metadata"].setdefault("labels", {})
    return labels


def _cspec(obj: Obj) -> Obj:
    spec: Obj = obj["spec"]
    return spec.get("rayClusterSpec") or spec


def cluster_cases(samples: Path) -> list[Obj]:
    def load(name: str) -> Obj:
        return _cluster(_docs(samples / name, "RayCluster"))

    volcano = load("ray-cluster.volcano-scheduler.yaml")
    queue = load("ray-cluster.volcano-scheduler-queue.yaml")
    yunikorn = load("ray-cluster.yunikorn-scheduler.yaml")
    plugins = load("ray-cluster.scheduler-plugins.yaml")
    kai = load("ray-cluster.kai-scheduler.yaml")
    kai_gpu = load("ray-cluster.kai-gpu-sharing.yaml")
    cases: list[tuple[str, str, Obj]] = [
        ("volcano-sample", "volcano", volcano),
        ("volcano-queue-sample", "volcano", queue),
        ("yunikorn-sample", "yunikorn", yunikorn),
        ("scheduler-plugins-sample", "scheduler-plugins", plugins),
        ("kai-sample", "kai-scheduler", kai),
        ("kai-gpu-sharing-sample", "kai-scheduler", kai_gpu),
    ]

    def variant(name: str, scheduler: str, base: Obj, cluster_name: str) -> Obj:
        c = copy.deepcopy(base)
        c["metadata"]["name"] = cluster_name
        c["metadata"]["uid"] = "uid-" + cluster_name
        cases.append((name, scheduler, c))
        return c

    hosts = variant("volcano-multihost", "volcano", queue, "vc-multihost")
    _cspec(hosts)["workerGroupSpecs"].append(copy.deepcopy(_GPU_WORKER))
    hosts["metadata"]["annotations"] = {"owner": "team-a", "note": "copied to the PodGroup"}

    auto = variant("volcano-autoscaling", "volcano", queue, "vc-autoscaling")
    _cspec(auto)["enableInTreeAutoscaling"] = True
    _cspec(auto)["workerGroupSpecs"][0].update(replicas=3, minReplicas=1, maxReplicas=5)
    _cspec(auto)["workerGroupSpecs"].append(copy.deepcopy(_GPU_WORKER))

    susp = variant("volcano-suspended-group", "volcano", queue, "vc-suspended")
    gpu = copy.deepcopy(_GPU_WORKER)
    gpu["suspend"] = True
    _cspec(susp)["workerGroupSpecs"].append(gpu)

    prio = variant("volcano-priority-topology", "volcano", queue, "vc-prio")
    _labels(prio).update(
        {
            "ray.io/priority-class-name": "high-priority",
            "volcano.sh/network-topology-mode": "hard",
            "volcano.sh/network-topology-highest-tier-allowed": "2",
        }
    )
    mode_only = variant("volcano-topology-mode-only", "volcano", volcano, "vc-soft")
    _labels(mode_only)["volcano.sh/network-topology-mode"] = "soft"
    bad = variant("volcano-topology-bad-tier", "volcano", queue, "vc-badtier")
    _labels(bad).update(
        {
            "volcano.sh/network-topology-mode": "hard",
            "volcano.sh/network-topology-highest-tier-allowed": "two",
        }
    )
    for suffix, tier in (("signed", "+3"), ("out-of-range", "99999999999999999999")):
        t = variant(f"volcano-topology-tier-{suffix}", "volcano", volcano, f"vc-tier-{suffix}")
        _labels(t).update(
            {
                "volcano.sh/network-topology-mode": "hard",
                "volcano.sh/network-topology-highest-tier-allowed": tier,
            }
        )
    tier_only = variant("volcano-topology-tier-without-mode", "volcano", volcano, "vc-tier-only")
    _labels(tier_only)["volcano.sh/network-topology-highest-tier-allowed"] = "1"
    empty_queue = variant("volcano-empty-queue-label", "volcano", queue, "vc-emptyq")
    _labels(empty_queue).update(
        {
            "volcano.sh/queue-name": "",
            "ray.io/priority-class-name": "",
            "volcano.sh/network-topology-mode": "",
        }
    )

    off = variant("yunikorn-gang-off", "yunikorn", yunikorn, "yk-gang-off")
    del _labels(off)["ray.io/gang-scheduling-enabled"]
    yk_hosts = variant("yunikorn-multihost", "yunikorn", yunikorn, "yk-multihost")
    gpu = copy.deepcopy(_GPU_WORKER)
    gpu["minReplicas"] = 2
    _cspec(yk_hosts)["workerGroupSpecs"].append(gpu)
    _cspec(yk_hosts)["headGroupSpec"]["template"]["spec"]["nodeSelector"] = {"pool": "head"}
    own = variant("yunikorn-own-task-groups", "yunikorn", yunikorn, "yk-own")
    own["metadata"]["annotations"] = {
        "yunikorn.apache.org/task-groups": '[{"name":"custom","minMember":3}]'
    }
    yk_empty = variant("yunikorn-empty-labels", "yunikorn", yunikorn, "yk-empty")
    _labels(yk_empty).update(
        {"yunikorn.apache.org/app-id": "", "ray.io/gang-scheduling-enabled": ""}
    )

    sp_off = variant("scheduler-plugins-gang-off", "scheduler-plugins", plugins, "sp-gang-off")
    del _labels(sp_off)["ray.io/gang-scheduling-enabled"]
    sp_hosts = variant("scheduler-plugins-multihost", "scheduler-plugins", plugins, "sp-multi")
    gpu = copy.deepcopy(_GPU_WORKER)
    _cspec(sp_hosts)["workerGroupSpecs"].append(gpu)
    susp_gpu = copy.deepcopy(_GPU_WORKER)
    susp_gpu.update(groupName="suspended-gpu", suspend=True)
    _cspec(sp_hosts)["workerGroupSpecs"].append(susp_gpu)

    kai_noq = variant("kai-no-queue", "kai-scheduler", kai, "kai-noq")
    del _labels(kai_noq)["kai.scheduler/queue"]

    out: list[Obj] = [{"name": n, "scheduler": s, "cluster": c} for n, s, c in cases]
    out += existing_cases(queue, plugins)
    return out


def _stored_pod_group(api_version: str, name: str, owner: Obj, spec: Obj, **meta: Any) -> Obj:
    return {
        "apiVersion": api_version,
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "resourceVersion": "7",
            "ownerReferences": [
                {
                    "apiVersion": "ray.io/v1",
                    "kind": "RayCluster",
                    "name": owner["metadata"]["name"],
                    "uid": owner["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            **meta,
        },
        "spec": spec,
        "status": {"phase": "Running", "running": 3},
    }


def existing_cases(queue: Obj, plugins: Obj) -> list[Obj]:
    """A PodGroup already stored: stale (volcano resizes it, keeping the rest), numerically
    equal in another format (left alone), and a scheduler-plugins one (never resized)."""
    volcano_pg = "scheduling.volcano.sh/v1beta1"
    stale = _stored_pod_group(
        volcano_pg,
        "ray-test-cluster-0-pg",
        queue,
        {"minMember": 1, "minResources": {"cpu": "1"}, "queue": "old-queue"},
        labels={"keep": "me"},
    )
    equal = _stored_pod_group(
        volcano_pg,
        "ray-test-cluster-0-pg",
        queue,
        {"minMember": 3, "minResources": {"cpu": "3000m", "memory": "4096Mi"}},
    )
    sp = _stored_pod_group(
        "scheduling.x-k8s.io/v1alpha1",
        plugins["metadata"]["name"],
        plugins,
        {"minMember": 1, "minResources": {"cpu": "1"}},
    )
    return [
        {
            "name": "volcano-existing-stale",
            "scheduler": "volcano",
            "cluster": queue,
            "existing": [stale],
        },
        {
            "name": "volcano-existing-equal",
            "scheduler": "volcano",
            "cluster": queue,
            "existing": [equal],
        },
        {
            "name": "scheduler-plugins-existing",
            "scheduler": "scheduler-plugins",
            "cluster": plugins,
            "existing": [sp],
        },
    ]


def rayjob_cases(samples: Path) -> list[Obj]:
    volcano = _docs(samples / "ray-job.volcano-scheduler-queue.yaml", "RayJob")
    yunikorn = _docs(samples / "ray-job.yunikorn-scheduler.yaml", "RayJob")
    cases: list[tuple[str, str, Obj]] = []

    def add(name: str, scheduler: str, base: Obj, job_name: str = "", **spec: Any) -> None:
        doc = copy.deepcopy(base)
        if job_name:
            doc["metadata"]["name"] = job_name
        for key, value in spec.items():
            if value is None:
                doc["spec"].pop(key, None)
            else:
                doc["spec"][key] = copy.deepcopy(value)
        cases.append((name, scheduler, _rayjob(doc)))

    add("rayjob-volcano-sample", "volcano", volcano)
    add("rayjob-yunikorn-sample", "yunikorn", yunikorn)
    add(
        "rayjob-volcano-submitter-template",
        "volcano",
        volcano,
        "vj-tmpl",
        submitterPodTemplate=_SUBMITTER_TEMPLATE,
    )
    add("rayjob-volcano-sidecar", "volcano", volcano, "vj-sidecar", submissionMode="SidecarMode")
    add("rayjob-volcano-http", "volcano", volcano, "vj-http", submissionMode="HTTPMode")
    prio = copy.deepcopy(volcano)
    prio["metadata"]["labels"]["ray.io/priority-class-name"] = "batch-low"
    prio["metadata"]["labels"]["volcano.sh/network-topology-mode"] = "soft"
    prio["metadata"]["annotations"] = {"owner": "team-b"}
    auto_spec = copy.deepcopy(volcano["spec"]["rayClusterSpec"])
    auto_spec["enableInTreeAutoscaling"] = True
    auto_spec["workerGroupSpecs"][0].update(replicas=2, minReplicas=1, maxReplicas=4)
    auto_spec["workerGroupSpecs"].append(copy.deepcopy(_GPU_WORKER))
    add("rayjob-volcano-priority-autoscaling", "volcano", prio, "vj-prio", rayClusterSpec=auto_spec)
    add(
        "rayjob-volcano-cluster-selector",
        "volcano",
        volcano,
        "vj-selector",
        rayClusterSpec=None,
        clusterSelector={"ray.io/cluster": "existing"},
    )
    add(
        "rayjob-yunikorn-submitter-template",
        "yunikorn",
        yunikorn,
        "yj-tmpl",
        submitterPodTemplate=_SUBMITTER_TEMPLATE,
    )
    off = copy.deepcopy(yunikorn)
    del off["metadata"]["labels"]["ray.io/gang-scheduling-enabled"]
    add("rayjob-yunikorn-gang-off", "yunikorn", off, "yj-gang-off")
    multi_spec = copy.deepcopy(yunikorn["spec"]["rayClusterSpec"])
    gpu = copy.deepcopy(_GPU_WORKER)
    gpu["minReplicas"] = 1
    multi_spec["workerGroupSpecs"].append(gpu)
    add(
        "rayjob-yunikorn-sidecar-multihost",
        "yunikorn",
        yunikorn,
        "yj-sidecar",
        submissionMode="SidecarMode",
        rayClusterSpec=multi_spec,
    )
    kai = copy.deepcopy(volcano)
    kai["metadata"]["labels"] = {"kai.scheduler/queue": "team-a"}
    add("rayjob-kai-k8sjob", "kai-scheduler", kai, "kj")
    add("rayjob-kai-sidecar", "kai-scheduler", kai, "kj-sidecar", submissionMode="SidecarMode")
    plugins = copy.deepcopy(volcano)
    plugins["metadata"]["labels"] = {"ray.io/gang-scheduling-enabled": "true"}
    add("rayjob-scheduler-plugins", "scheduler-plugins", plugins, "pj")
    return [
        {"name": n, "scheduler": s, "rayjob": j, "clusterName": cluster_name(j)}
        for n, s, j in cases
    ]


def make_cases(samples: Path) -> list[Obj]:
    return cluster_cases(samples) + rayjob_cases(samples)


def main(argv: list[str]) -> None:
    if argv[0] == "--combine":
        cases = json.loads(Path(argv[1]).read_text())
        out = {o["name"]: o for o in json.loads(Path(argv[2]).read_text())}
        data = [
            {"case": c, "expected": out[c["name"]]["objects"], "err": out[c["name"]].get("err", "")}
            for c in cases
        ]
        with gzip.open(argv[3], "wt") as fh:
            json.dump(data, fh, sort_keys=True)
        return
    Path(argv[1]).write_text(json.dumps(make_cases(Path(argv[0])), indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
