"""Write the inputs of ``rayjob_golden_harness_test.go``: sample RayJobs plus crafted variants.

Usage: ``python make_rayjob_golden_cases.py <samples dir> cases.json``, run the harness, then
``python make_rayjob_golden_cases.py --combine cases.json golden.json <data>.json.gz``.

Each case is a RayJob as the RayJob controller sees it when it builds its children (CRD
defaults applied, status with ``jobId``/``rayClusterName``/``dashboardURL`` filled in), the
name of its RayCluster, an existing RayCluster for ``clusterSelector`` jobs, and the operator
env vars and feature gates.
"""

from __future__ import annotations

import copy
import gzip
import json
import sys
from pathlib import Path
from typing import Any

import yaml

Case = dict[str, Any]

_EXISTING_CLUSTER_IMAGE = "rayproject/ray:2.52.0"


def with_status(rayjob: dict[str, Any], cluster_name: str) -> dict[str, Any]:
    """The RayJob after initRayJobStatusIfNeed and the cluster became ready."""
    job = copy.deepcopy(rayjob)
    meta = job.setdefault("metadata", {})
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = meta["generateName"] + "k8s5z"  # what the API server would assign
    meta.setdefault("namespace", "default")
    meta.setdefault("uid", "uid-" + meta.get("name", "noname"))
    spec = job.setdefault("spec", {})
    spec.setdefault("submissionMode", "K8sJobMode")
    status = job.setdefault("status", {})
    if spec["submissionMode"] != "InteractiveMode":
        status.setdefault("jobId", spec.get("jobId") or f"{meta.get('name', '')}-x7k2m")
    elif spec.get("jobId"):
        status.setdefault("jobId", spec["jobId"])
    status.setdefault("rayClusterName", cluster_name)
    status.setdefault(
        "dashboardURL", f"{cluster_name}-head-svc.{meta['namespace']}.svc.cluster.local:8265"
    )
    return job


def existing_cluster(name: str, namespace: str, **spec_extra: Any) -> dict[str, Any]:
    """A user-made RayCluster for clusterSelector jobs."""
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace, "uid": "uid-existing"},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "ray-head",
                                "image": _EXISTING_CLUSTER_IMAGE,
                                "ports": [{"name": "dashboard", "containerPort": 8265}],
                            }
                        ]
                    }
                },
            },
            **spec_extra,
        },
    }


def case(name: str, rayjob: dict[str, Any], **extra: Any) -> Case:
    meta = dict(rayjob.get("metadata") or {})
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = meta["generateName"] + "k8s5z"
    selector = (rayjob.get("spec") or {}).get("clusterSelector") or {}
    if selector:
        cluster_name = selector.get("ray.io/cluster", "")
    else:
        cluster_name = f"{meta.get('name', 'noname')}-bc2df"
    job = with_status(rayjob, cluster_name)
    result: Case = {"name": name, "rayjob": job, "clusterName": cluster_name}
    if selector and "cluster" not in extra:
        result["cluster"] = existing_cluster(cluster_name, job["metadata"]["namespace"])
    result.update(extra)
    return result


def sample_cases(samples: Path) -> list[Case]:
    cases = []
    for path in sorted(samples.glob("*.yaml")):
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if not isinstance(doc, dict):
                continue
            kind = doc.get("kind")
            if kind == "RayJob":
                cases.append(case(f"sample:{path.name}#{index}", doc))
            elif kind == "RayCronJob":
                meta = doc.get("metadata") or {}
                cron = meta.get("name", "cron")
                rayjob = {
                    "apiVersion": "ray.io/v1",
                    "kind": "RayJob",
                    "metadata": {
                        "name": f"{cron}-29436001",
                        "namespace": meta.get("namespace", "default"),
                        "labels": {"ray.io/cronjob-name": cron},
                        "annotations": {
                            "ray.io/cronjob-scheduled-timestamp": "2026-12-03T12:01:00Z"
                        },
                    },
                    "spec": copy.deepcopy((doc.get("spec") or {}).get("jobTemplate") or {}),
                }
                cases.append(case(f"sample:{path.name}#{index}:jobTemplate", rayjob))
    return cases


def fixture_j(name: str = "rayjob-test") -> dict[str, Any]:
    """The scenario catalogue's baseline RayJob "J"."""
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": "default", "annotations": {"foo": "bar"}},
        "spec": {
            "entrypoint": "sleep 999",
            "submissionMode": "K8sJobMode",
            "shutdownAfterJobFinishes": True,
            "rayClusterSpec": {
                "rayVersion": "2.55.0",
                "headGroupSpec": {
                    "rayStartParams": {},
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "ray-head",
                                    "image": "rayproject/ray:2.55.0",
                                    "resources": {
                                        "requests": {"cpu": "1", "memory": "2Gi"},
                                        "limits": {"cpu": "1", "memory": "2Gi"},
                                    },
                                    "ports": [
                                        {"name": "gcs-server", "containerPort": 6379},
                                        {"name": "dashboard", "containerPort": 8265},
                                        {"name": "client", "containerPort": 10001},
                                    ],
                                }
                            ]
                        }
                    },
                },
                "workerGroupSpecs": [
                    {
                        "groupName": "small-group",
                        "replicas": 3,
                        "minReplicas": 0,
                        "maxReplicas": 10000,
                        "rayStartParams": {},
                        "template": {
                            "spec": {
                                "containers": [
                                    {"name": "ray-worker", "image": "rayproject/ray:2.55.0"}
                                ]
                            }
                        },
                    }
                ],
            },
        },
    }


def head_container(job: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"][
        "containers"
    ][0]
    return container


_RUNTIME_ENV = """\
working_dir: "https://github.com/ray-project/serve_config_examples/archive/b393e77.zip"
pip: ["python-multipart==0.0.6", "requests<3"]
env_vars:
  QUOTED: 'say "hi" & <bye>'
  BACKSLASH: 'C:\\path\\n'
  UNICODE: "caf\u00e9 \u2603"
  TAB: "a\\tb"
  counter: 3
  ratio: 1.5
  whole: 2.0
  flag: yes
  empty: ""
  nothing: null
config:
  setup_timeout_seconds: 600
  eager_install: true
nested: {b: [1, 2.25, "x"], a: {z: 1, y: [true, false]}}
"""

#: Plain scalars that go-yaml v2 and PyYAML resolve differently, keys that are not strings.
_GO_YAML_SCALARS = """\
a: 1e3
b: 0x1F
c: 0o17
d: 017
e: 1_000
f: 08
g: 1:20
h: 2001-12-14
i: 2001-12-14t21:59:43.10-05:00
j: 2001-12-14 21:59:43.10
k: .5
l: +1
m: 18446744073709551615
n: 1.0
o: Yes
p: ~
q:
r: on
s: N
t: -0b11
u: 0b101
v: 1e400
w: [y, n, "y", 'n', 12e-7, 0.000015, 1e21, 123456789012345678]
1.5: float key
1e7: big float key
7: int key
yes: bool key
base: &base {x: 1}
merged: {<<: *base, z: 2}
"""

_FULL_OPTIONS = {
    "runtimeEnvYAML": "pip:\n  - requests==2.26.0\n  - pendulum==2.1.2\nenv_vars:\n"
    '  counter_name: "test_counter"\n',
    "metadata": {"owner": "alice", "team": "ml <core>", "quote": 'a"b'},
    "entrypointNumCpus": 1,
    "entrypointNumGpus": 0.5,
    "entrypointResources": '{"Custom_1": 1, "Custom_2": 5.5}',
}


def crafted_cases() -> list[Case]:
    cases: list[Case] = []

    def job(name: str = "rayjob-test") -> dict[str, Any]:
        return copy.deepcopy(fixture_j(name))

    modes = ("K8sJobMode", "SidecarMode", "HTTPMode", "InteractiveMode")
    for mode in modes:
        j = job()
        j["spec"]["submissionMode"] = mode
        j["metadata"]["labels"] = {"app": "demo", "ray.io/originated-from-crd": "spoofed"}
        cases.append(case(f"mode:{mode}", j))
        full = job()
        full["spec"]["submissionMode"] = mode
        full["spec"].update(copy.deepcopy(_FULL_OPTIONS))
        cases.append(case(f"mode:{mode}:full-options", full))

    for mode in ("K8sJobMode", "SidecarMode"):
        for gate in (False, True):
            for login in (False, True):
                j = job()
                j["spec"]["submissionMode"] = mode
                j["spec"].update(copy.deepcopy(_FULL_OPTIONS))
                env = {"ENABLE_LOGIN_SHELL": "true"} if login else {}
                cases.append(
                    case(
                        f"gate:{mode}:restart={gate}:login={login}",
                        j,
                        env=env,
                        features={"SidecarSubmitterRestart": gate},
                    )
                )

    j = job()
    j["spec"]["submissionMode"] = "SidecarMode"
    head_container(j)["ports"] = [{"name": "dashboard", "containerPort": 9000}]
    j["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["restartPolicy"] = "Always"
    cases.append(case("sidecar:custom-dashboard-port", j))
    j = job()
    j["spec"]["submissionMode"] = "SidecarMode"
    head_container(j).pop("ports")
    head_container(j)["env"] = [{"name": "PYTHONUNBUFFERED", "value": "0"}]
    cases.append(case("sidecar:no-ports", j))

    template_no_cmd = {
        "metadata": {
            "labels": {"team": "x", "app.kubernetes.io/created-by": "someone"},
            "annotations": {"a": "b"},
        },
        "spec": {
            "containers": [
                {
                    "name": "my-submitter",
                    "image": "rayproject/ray:2.9.0",
                    "env": [{"name": "RAY_AUTH_MODE", "value": "custom"}],
                },
                {"name": "other", "image": "busybox", "command": ["sleep"]},
            ],
            "restartPolicy": "Never",
        },
    }
    j = job()
    j["spec"]["submitterPodTemplate"] = copy.deepcopy(template_no_cmd)
    j["spec"]["rayClusterSpec"]["authOptions"] = {"mode": "token"}
    cases.append(case("submitter-template:no-command", j))
    j = job()
    template_cmd = copy.deepcopy(template_no_cmd)
    template_cmd["spec"]["containers"][0]["command"] = ["ray", "job", "submit"]
    template_cmd["spec"]["containers"][0]["args"] = ["--address", "http://$RAY_DASHBOARD_ADDRESS"]
    del template_cmd["metadata"]
    j["spec"]["submitterPodTemplate"] = template_cmd
    cases.append(case("submitter-template:with-command", j, env={"ENABLE_LOGIN_SHELL": "true"}))
    j = job()
    j["spec"]["submitterPodTemplate"] = {
        "spec": {"containers": [{"name": "s", "image": "x", "args": ["only-args"]}]}
    }
    cases.append(case("submitter-template:args-only-no-restart-policy", j))

    for limit in (0, 5):
        j = job()
        j["spec"]["submitterConfig"] = {"backoffLimit": limit}
        cases.append(case(f"submitter-config:backoffLimit={limit}", j))
    j = job()
    j["spec"]["submitterConfig"] = {}
    cases.append(case("submitter-config:empty", j))

    for label, text in (
        ("rich", _RUNTIME_ENV),
        ("empty-map", "{}"),
        ("null", "null"),
        ("flow", '{"pip": ["emoji"], "env_vars": {"A": "1"}}'),
        ("go-scalars", _GO_YAML_SCALARS),
        ("list", "[1, 2]"),
        ("nan", "x: .nan"),
        ("multi-doc", "a: 1\n---\nb: 2\n"),
        ("versions", "python: 3.10\nmode: 0755\nray: 2.9.0\n"),
        ("null-key", "~: x\n"),
    ):
        for mode in ("K8sJobMode", "HTTPMode"):
            j = job()
            j["spec"]["submissionMode"] = mode
            j["spec"]["runtimeEnvYAML"] = text
            cases.append(case(f"runtime-env:{label}:{mode}", j))
    j = job()
    j["spec"]["runtimeEnvYAML"] = "a: [b"
    cases.append(case("runtime-env:invalid", j))

    for version in ("2.5.0", "2.6.0", "2.10.1", "", "not-a-version", "2.6.0-rc1", "v2.7"):
        j = job()
        j["spec"]["metadata"] = {"k": "v"}
        if version:
            j["spec"]["rayClusterSpec"]["rayVersion"] = version
        else:
            del j["spec"]["rayClusterSpec"]["rayVersion"]
        cases.append(case(f"metadata:rayVersion={version or 'unset'}", j))
    j = job()
    j["spec"]["metadata"] = {}
    j["spec"]["rayClusterSpec"]["rayVersion"] = "2.0.0"
    cases.append(case("metadata:empty-map-old-ray", j))

    for cpus, gpus, resources in (
        (0.1, 0, ""),
        (1.123456789, 2, '{"TPU": 4}'),
        (0, 0.25, '{"a": 0.1, "b": 1e3, "c": 16777217}'),
        (3, 0, "{}"),
        (0, 0, "not json"),
        (0, 0, '{"a": "x"}'),
        (0, 0, "null"),
        (1e-7, 123456789, '{"big": 123456789, "tiny": 1e-7, "huge": 1e20, "n": null}'),
        (-1, -0.5, "[1]"),
    ):
        j = job()
        if cpus:
            j["spec"]["entrypointNumCpus"] = cpus
        if gpus:
            j["spec"]["entrypointNumGpus"] = gpus
        if resources:
            j["spec"]["entrypointResources"] = resources
        cases.append(case(f"entrypoint-resources:{cpus}:{gpus}:{resources}", j))

    for label, entrypoint in (
        ("whitespace", "  \n\tpython -c 'print(1)'  \n"),
        ("multiline", 'python script.py \\\n  --flag "a b" && echo done\n'),
        ("empty", ""),
    ):
        for mode in ("K8sJobMode", "SidecarMode"):
            j = job()
            j["spec"]["submissionMode"] = mode
            j["spec"]["entrypoint"] = entrypoint
            cases.append(case(f"entrypoint:{label}:{mode}", j))

    j = job()
    j["spec"]["entrypoint"] = "echo caf\u00e9 \U0001f600 \u200b"
    j["spec"]["entrypointResources"] = '{"a\x01\x7f\u00a0\u200b\U0001f600\t\\\\ \\"": 1}'
    j["spec"]["metadata"] = {"k\u2028": "v\x01<&>\U0001f600\u00a0"}
    j["spec"]["runtimeEnvYAML"] = 'env_vars: {E: "\\u2029\\x02\\U0001F600\\u00e9"}'
    cases.append(case("quoting", j))

    j = job()
    j["spec"]["jobId"] = "my-fixed-id"
    cases.append(case("job-id:from-spec", j))
    j = job()
    j["status"] = {"dashboardURL": "http://host:1234", "jobId": "id-1"}
    cases.append(case("dashboard-url:with-scheme", j))

    for auth in (
        {"mode": "token"},
        {"mode": "token", "secretName": "my-secret"},
        {"mode": "token", "enableK8sTokenAuth": True},
        {"mode": "disabled", "enableK8sTokenAuth": True},
        {"mode": "disabled"},
    ):
        for mode in ("K8sJobMode", "SidecarMode"):
            j = job()
            j["spec"]["submissionMode"] = mode
            j["spec"]["rayClusterSpec"]["authOptions"] = auth
            cases.append(case(f"auth:{json.dumps(auth, sort_keys=True)}:{mode}", j))

    for length in (47, 70):
        name = ("rayjob-long-name-" + "x" * 80)[:length]
        for mode in ("K8sJobMode", "SidecarMode"):
            j = job(name)
            j["spec"]["submissionMode"] = mode
            cases.append(case(f"long-name:{length}:{mode}", j))

    for env in ({"ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE": "true"}, {}):
        j = job()
        j["spec"]["rayClusterSpec"]["headGroupSpec"]["serviceType"] = "NodePort"
        j["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["metadata"] = {
            "labels": {"app.kubernetes.io/name": "myapp"}
        }
        j["spec"]["rayClusterSpec"]["headServiceAnnotations"] = {"a": "b"}
        cases.append(case("head-service:NodePort:" + json.dumps(env), j, env=env))
    j = job()
    j["spec"]["rayClusterSpec"]["headGroupSpec"]["headService"] = {
        "metadata": {"name": "custom-head", "labels": {"x": "y"}, "annotations": {"c": "d"}},
        "spec": {"ports": [{"name": "extra", "port": 9999}]},
    }
    cases.append(case("head-service:custom", j))
    j = job()
    head_container(j)["ports"] = []
    cluster_ip = {"ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE": "true"}
    cases.append(case("head-service:default-ports", j, env=cluster_ip))

    for mode in ("K8sJobMode", "HTTPMode"):
        j = job()
        del j["spec"]["rayClusterSpec"]
        j["spec"]["clusterSelector"] = {"ray.io/cluster": "my-cluster"}
        j["spec"]["submissionMode"] = mode
        j["spec"]["metadata"] = {"k": "v"}
        cluster = existing_cluster(
            "my-cluster",
            "default",
            authOptions={"mode": "token", "enableK8sTokenAuth": True},
        )
        cases.append(case(f"cluster-selector:{mode}", j, cluster=cluster))
    return cases


def combine(cases_path: str, golden_path: str, output: str) -> None:
    """Pair each case with the harness output: ``[{"case": ..., "expected": ...}]``, gzipped."""
    cases = json.loads(Path(cases_path).read_text())
    outputs = {o["name"]: o for o in json.loads(Path(golden_path).read_text())}
    entries = []
    for c in cases:
        out = outputs[c["name"]]
        assert not out.get("err"), out
        entries.append({"case": c, "expected": out["objects"]})
    with gzip.open(output, "wt", encoding="utf-8") as handle:
        json.dump(entries, handle, separators=(",", ":"), sort_keys=True)
    print(len(entries), "entries")


def main(samples: str, output: str) -> None:
    cases = sample_cases(Path(samples)) + crafted_cases()
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    Path(output).write_text(json.dumps(cases, indent=0))
    print(len(cases), "cases")


if __name__ == "__main__":
    if sys.argv[1] == "--combine":
        combine(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        main(sys.argv[1], sys.argv[2])
