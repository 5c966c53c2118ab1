"""Node label delivery's decisions: the worker pod patch, the wrapped ``ray start`` (run in
bash), the labels a Node yields and the Binding patch."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kuberay.api.v1.convert import structure
from kuberay.api.v1.raycluster_types import LabelRef
from kuberay.webhooks.node_labels import (
    NodeLabelsWithheld,
    PodRefused,
    binding_patch,
    node_labels_for,
    prepare_worker_patch,
    ray_start_with_node_labels,
)

RAY_START = "ray start --block --address=topo-head-svc.default.svc.cluster.local:6379"
ULIMIT = "ulimit -n 65536; "
POINTER = {
    "name": "RAY_NODE_LABELS_JSON",
    "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['ray.io/node-labels']"}},
}


def apply_patch(doc: Any, patch: list[dict[str, Any]]) -> Any:
    """RFC 6902 ``add``/``replace`` (what the webhooks send) applied to a copy of ``doc``."""
    doc = json.loads(json.dumps(doc))
    for op in patch:
        *parents, last = [
            t.replace("~1", "/").replace("~0", "~") for t in op["path"].split("/")[1:]
        ]
        target = doc
        for token in parents:
            target = target[int(token)] if isinstance(target, list) else target[token]
        if isinstance(target, list):
            if last == "-":
                target.append(op["value"])
            elif op["op"] == "replace":
                target[int(last)] = op["value"]
            else:
                target.insert(int(last), op["value"])
        else:
            assert op["op"] == "add" or last in target
            target[last] = op["value"]
    return doc


def worker_pod() -> dict[str, Any]:
    return {
        "metadata": {"name": "topo-test-worker-abcde", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "ray-worker",
                    "command": ["/bin/bash", "-c", "--"],
                    "args": [ULIMIT + RAY_START],
                    "env": [{"name": "KUBERAY_GEN_RAY_START_CMD", "value": RAY_START}],
                }
            ]
        },
    }


def test_worker_pod_gets_the_pointer_and_the_wrapped_command_once() -> None:
    pod = worker_pod()
    patched = apply_patch(pod, prepare_worker_patch(pod))
    container = patched["spec"]["containers"][0]
    assert container["args"] == [ULIMIT + ray_start_with_node_labels(RAY_START)]
    assert container["env"][-1] == POINTER
    assert prepare_worker_patch(patched) == []  # a reinvocation changes nothing
    bare = worker_pod()
    bare["spec"]["containers"][0]["env"] = None
    bare["spec"]["containers"][0]["args"] = [RAY_START]
    with pytest.raises(PodRefused, match="no KUBERAY_GEN_RAY_START_CMD env var"):
        prepare_worker_patch(bare)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda c: c.clear(), "pod has no Ray container"),
        (
            lambda c: c[0]["env"].append({"name": "RAY_NODE_LABELS_JSON", "value": "{}"}),
            "must not be set in the pod template",
        ),
        (lambda c: c[0].update(args=["echo no ray here"]), "was not found in the container args"),
        (lambda c: c[0].update(args=[f"{RAY_START} && {RAY_START}"]), "appears 2 times"),
        (lambda c: c[0].update(args=["a", "b"]), "exactly one args element"),
    ],
)
def test_a_pod_not_shaped_by_kuberay_is_refused(change: Any, needle: str) -> None:
    pod = worker_pod()
    change(pod["spec"]["containers"])
    with pytest.raises(PodRefused, match=needle):
        prepare_worker_patch(pod)


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_the_wrapped_ray_start_refuses_missing_or_empty_labels(tmp_path: Path) -> None:
    script = ray_start_with_node_labels("echo RAYSTART").replace("/tmp/ray-labels.yaml", "L")

    def run(labels: str | None) -> subprocess.CompletedProcess[str]:
        env = {"PATH": "/usr/bin:/bin"} | ({"RAY_NODE_LABELS_JSON": labels} if labels else {})
        return subprocess.run(
            ["bash", "-c", "--", script], env=env, cwd=tmp_path, capture_output=True, text=True
        )

    missing = run(None)
    assert missing.returncode == 1 and "RAY_NODE_LABELS_JSON is empty" in missing.stderr
    empty = run('{"ray.io/zone":""}')
    assert empty.returncode == 1 and "contains an empty label value" in empty.stderr
    good = '{"ray.io/zone":"us-central1-a"}'
    done = run(good)
    assert done.returncode == 0 and done.stdout == "RAYSTART --labels-file=L\n"
    assert (tmp_path / "L").read_text() == good + "\n"


def ref(key: str, name: str = "") -> LabelRef:
    raw = {"name": name, "valueFrom": {"nodeRef": {"fieldPath": f"metadata.labels['{key}']"}}}
    return structure(LabelRef, raw)


def test_node_labels_rename_and_name_every_missing_one() -> None:
    refs = [ref("topology.kubernetes.io/zone"), ref("nvidia.com/gpu.clique", "ray.io/domain")]
    allowed = {"topology.kubernetes.io/zone", "nvidia.com/gpu.clique"}
    node = {"topology.kubernetes.io/zone": "z1", "nvidia.com/gpu.clique": "c.0", "other": "x"}
    assert node_labels_for(node, refs, allowed) == {
        "topology.kubernetes.io/zone": "z1",
        "ray.io/domain": "c.0",
    }
    with pytest.raises(NodeLabelsWithheld) as info:
        node_labels_for({}, refs, {"topology.kubernetes.io/zone"})
    assert str(info.value) == (
        'node lacks label "topology.kubernetes.io/zone"; node label "nvidia.com/gpu.clique" '
        "is not in the operator's allowedNodeLabels"
    )


def test_binding_patch_adds_the_annotation_with_or_without_annotations() -> None:
    labels = {"b": "2", "a": "1"}
    for binding in ({"metadata": {"name": "p"}}, {"metadata": {"annotations": {"x": "y"}}}):
        patched = apply_patch(binding, binding_patch(binding, labels))
        value = patched["metadata"]["annotations"]["ray.io/node-labels"]
        assert value == '{"a":"1","b":"2"}' and json.loads(value) == {"a": "1", "b": "2"}
