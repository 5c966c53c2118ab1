"""``kubectl ray why`` on the real apiserver: each case breaks a cluster the way a user
would meet it (pod statuses written as a kubelet/scheduler would) and checks the
diagnosis names the cause, in text and in ``-o json``."""

from __future__ import annotations

import json
from typing import Any

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.kubectl_ray.conftest import Cli
from tests.integration.raycluster.conftest import Operator
from tests.integration.raycluster.helpers import (
    RAY_IMAGE,
    all_running,
    condition,
    get_cluster,
    pods_of,
    raycluster,
)


async def why_json(cli: Cli, target: str) -> dict[str, Any]:
    result = await cli("why", target, "-o", "json")
    assert result.code in (0, 1), result.err
    doc: dict[str, Any] = json.loads(result.out)
    return doc


def reasons(doc: dict[str, Any]) -> list[str]:
    return [f["reason"] for f in doc["findings"]]


async def head_pod(client: Client, ns: str, name: str) -> dict[str, Any]:
    async def found() -> dict[str, Any] | None:
        pods = await pods_of(client, ns, name, **{"ray.io/node-type": "head"})
        return pods[0] if pods else None

    pod: dict[str, Any] = await eventually(found, timeout=30, message="head pod")
    return pod


async def test_bad_image(operator: Operator, cli: Cli, kclient: Client, namespace: str) -> None:
    await kclient.create(raycluster("badimg", namespace, replicas=0))
    pod = await head_pod(kclient, namespace, "badimg")
    await kclient.patch_status(
        "v1",
        "Pod",
        pod["metadata"]["name"],
        {
            "status": {
                "phase": "Pending",
                "containerStatuses": [
                    {
                        "name": "ray-head",
                        "image": "rayproject/ray:nope",
                        "imageID": "",
                        "ready": False,
                        "restartCount": 0,
                        "state": {
                            "waiting": {
                                "reason": "ImagePullBackOff",
                                "message": 'Back-off pulling image "rayproject/ray:nope"',
                            }
                        },
                    }
                ],
            }
        },
        namespace,
    )
    doc = await why_json(cli, "raycluster/badimg")
    assert doc["ready"] is False
    assert "ImagePullBackOff" in reasons(doc)
    assert "Back-off pulling image" in doc["summary"]
    text = await cli("why", "raycluster/badimg")
    assert text.code == 1
    assert "ImagePullBackOff" in text.out and "check the image name" in text.out


async def test_unschedulable(operator: Operator, cli: Cli, kclient: Client, namespace: str) -> None:
    await kclient.create(raycluster("big", namespace, replicas=0))
    pod = await head_pod(kclient, namespace, "big")
    message = "0/3 nodes are available: 3 Insufficient cpu."
    await kclient.patch_status(
        "v1",
        "Pod",
        pod["metadata"]["name"],
        {
            "status": {
                "phase": "Pending",
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": message,
                    }
                ],
            }
        },
        namespace,
    )
    doc = await why_json(cli, "big")
    assert doc["findings"][0]["reason"] == "Unschedulable"
    assert message in doc["findings"][0]["message"]
    assert message in doc["summary"]


async def test_missing_auth_secret(cli: Cli, kclient: Client, namespace: str) -> None:
    body = raycluster(
        "authc", namespace, authOptions={"mode": "token", "secretName": "my-ray-token"}
    )
    body["spec"]["rayVersion"] = "2.52.0"
    await kclient.create(body)
    doc = await why_json(cli, "raycluster/authc")
    missing = [f for f in doc["findings"] if f["reason"] == "AuthSecretMissing"]
    assert missing and "my-ray-token" in missing[0]["message"]
    assert "kubectl create secret generic my-ray-token" in missing[0]["hint"]
    # Once the Secret exists (with its key) the finding is gone.
    await kclient.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "my-ray-token", "namespace": namespace},
            "stringData": {"auth_token": "s3cret"},
        }
    )
    assert "AuthSecretMissing" not in reasons(await why_json(cli, "raycluster/authc"))


async def test_invalid_spec(operator: Operator, cli: Cli, kclient: Client, namespace: str) -> None:
    bad = raycluster("invalid", namespace)
    bad["spec"]["workerGroupSpecs"][0].update({"minReplicas": 5, "maxReplicas": 3})
    await kclient.create(bad)

    async def flagged() -> dict[str, Any] | None:
        return condition(await get_cluster(kclient, namespace, "invalid"), "InvalidSpec")

    await eventually(flagged, timeout=60, message="InvalidSpec condition")
    doc = await why_json(cli, "raycluster/invalid")
    top = doc["findings"][0]
    assert top["severity"] == "error" and top["reason"] == "InvalidRayClusterSpec"
    assert "workerGroupSpecs[0]" in top["message"]


async def test_blocked_finalizer(cli: Cli, kclient: Client, namespace: str) -> None:
    body = raycluster("stuck", namespace)
    body["metadata"]["finalizers"] = ["example.com/hold"]
    await kclient.create(body)
    await kclient.delete("ray.io/v1", "RayCluster", "stuck", namespace)
    try:
        doc = await why_json(cli, "raycluster/stuck")
        top = doc["findings"][0]
        assert top["reason"] == "FinalizerBlocking"
        assert "example.com/hold" in top["message"]
        assert doc["ready"] is False
    finally:
        await kclient.patch(
            "ray.io/v1", "RayCluster", "stuck", {"metadata": {"finalizers": None}}, namespace
        )


async def test_ignored_spec_change(
    operator: Operator, cli: Cli, kclient: Client, namespace: str
) -> None:
    await kclient.create(raycluster("drift", namespace, replicas=0))
    await head_pod(kclient, namespace, "drift")
    said = reasons(await why_json(cli, "raycluster/drift"))
    assert not {"SpecChangeIgnored", "PodsRunOlderTemplate"} & set(said)
    await kclient.patch(
        "ray.io/v1",
        "RayCluster",
        "drift",
        {
            "spec": {
                "headGroupSpec": {
                    "template": {
                        "spec": {"containers": [{"name": "ray-head", "image": RAY_IMAGE + "-gpu"}]}
                    }
                }
            }
        },
        namespace,
    )
    doc = await why_json(cli, "raycluster/drift")
    # The operator's pods carry their template's hash: the change is named per group, once.
    assert "SpecChangeIgnored" not in reasons(doc)
    changed = [f for f in doc["findings"] if f["reason"] == "PodsRunOlderTemplate"]
    assert changed and changed[0]["message"].startswith("1 of 1 Pod of the head group")
    assert "upgradeStrategy" in changed[0]["hint"]


async def test_not_found_is_a_clear_error(cli: Cli) -> None:
    result = await cli("why", "rayjob/nope")
    assert result.code == 1
    assert result.err.startswith("Error: RayJob nope not found in namespace")
    assert "Traceback" not in result.err


async def test_dashboard_unreachable(
    operator: Operator, cli: Cli, kclient: Client, namespace: str
) -> None:
    await kclient.create(raycluster("dash", namespace, replicas=0))
    await head_pod(kclient, namespace, "dash")
    await all_running(kclient, namespace, "dash")

    async def ready() -> bool:
        return bool((await why_json(cli, "raycluster/dash"))["ready"])

    await eventually(ready, timeout=30, message="cluster ready")
    # Someone edits the head Service's selector (the operator never updates it).
    await kclient.patch(
        "v1",
        "Service",
        "dash-head-svc",
        {"spec": {"selector": {"ray.io/cluster": "dash", "ray.io/node-type": "nothing"}}},
        namespace,
    )
    doc = await why_json(cli, "raycluster/dash")
    assert doc["ready"] is False
    top = doc["findings"][0]
    assert top["reason"] == "DashboardUnreachable" and top["object"] == "Service/dash-head-svc"
    assert "matches no ready head pod" in top["message"]


async def test_rayjob_diagnosis_follows_its_cluster(
    cli: Cli, kclient: Client, namespace: str
) -> None:
    cluster = raycluster("job-cluster", namespace, replicas=0)
    await kclient.create(cluster)
    await kclient.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "job-cluster-head-abc",
                "namespace": namespace,
                "labels": {"ray.io/cluster": "job-cluster", "ray.io/node-type": "head"},
            },
            "spec": {"containers": [{"name": "ray-head", "image": RAY_IMAGE}]},
        }
    )
    message = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
    await kclient.patch_status(
        "v1",
        "Pod",
        "job-cluster-head-abc",
        {
            "status": {
                "phase": "Pending",
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": message,
                    }
                ],
            }
        },
        namespace,
    )
    await kclient.create(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": "job", "namespace": namespace},
            "spec": {
                "entrypoint": "python x.py",
                "clusterSelector": {"ray.io/cluster": "job-cluster"},
            },
        }
    )
    await kclient.patch_status(
        "ray.io/v1",
        "RayJob",
        "job",
        {"status": {"jobDeploymentStatus": "Initializing", "rayClusterName": "job-cluster"}},
        namespace,
    )
    doc = await why_json(cli, "rayjob/job")
    assert doc["kind"] == "RayJob" and doc["ready"] is False
    assert doc["findings"][0]["reason"] == "Unschedulable"
    assert doc["findings"][0]["object"] == "Pod/job-cluster-head-abc"
    assert message in doc["summary"]
