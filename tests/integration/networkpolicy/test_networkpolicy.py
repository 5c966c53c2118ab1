"""The NetworkPolicy controller on the real apiserver: KubeRay's policies for the deny-all
sample, updates on mode / rule changes, stale-policy deletion, the name-collision Event,
the RayJob submitter rule, and no writes on an unchanged world.

The objects are what matters here (no CNI enforces them in this control plane)."""

from __future__ import annotations

import copy
from typing import Any

import yaml

from kuberay.controllers.networkpolicy.builders import build_network_policies
from kuberay.kube import Client, NotFound
from kuberay.reconcile import Request
from tests.helpers import eventually, wait_quiet
from tests.integration.operator_harness import wait_for
from tests.integration.raycluster.helpers import get_cluster, wait_event_reasons
from tests.kuberay_samples import KUBERAY_SAMPLES as SAMPLES
from tests.kuberay_samples import requires_kuberay_samples

pytestmark = requires_kuberay_samples  # every test starts from KubeRay's deny-all sample
NP = ("networking.k8s.io/v1", "NetworkPolicy")


def sample(namespace: str, name: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(
        (SAMPLES / "ray-cluster.network-policy-deny-all.yaml").read_text()
    )
    doc["metadata"]["namespace"] = namespace
    if name:
        doc["metadata"]["name"] = name
    return doc


async def policies(client: Client, namespace: str) -> dict[str, dict[str, Any]]:
    items, _ = await client.list_all(*NP, namespace)
    return {p["metadata"]["name"]: p for p in items}


async def wait_policies(
    client: Client, namespace: str, expected: list[dict[str, Any]], *, timeout: float = 60.0
) -> dict[str, dict[str, Any]]:
    """Wait until the namespace holds exactly ``expected`` (names, labels, owner, spec as the
    apiserver stores it: rule ports without a protocol come back as TCP)."""

    def served(policy: dict[str, Any]) -> tuple[Any, ...]:
        spec = copy.deepcopy(policy["spec"])
        for key in ("ingress", "egress"):
            for rule in spec.get(key) or []:
                for port in rule.get("ports") or []:
                    port.setdefault("protocol", "TCP")
        meta = policy["metadata"]
        return (meta["labels"], meta["ownerReferences"], spec)

    want = {p["metadata"]["name"]: served(p) for p in expected}

    def matches(live: dict[str, dict[str, Any]]) -> bool:
        got = {name: served(p) for name, p in live.items()}
        assert got == want
        return True

    result: dict[str, dict[str, Any]] = await wait_for(
        lambda: policies(client, namespace),
        matches,
        timeout=timeout,
        interval=0.2,
        message=f"NetworkPolicies {sorted(want)} in {namespace}",
    )
    return result


async def test_deny_all_sample_creates_kuberays_policies(
    netpol_operator: Any, kclient: Client, namespace: str
) -> None:
    cluster = await kclient.create(sample(namespace))
    live = await wait_policies(kclient, namespace, build_network_policies(cluster))
    assert sorted(live) == ["raycluster-deny-all-head", "raycluster-deny-all-workers-workergroup"]
    head = live["raycluster-deny-all-head"]["spec"]
    assert head["podSelector"]["matchLabels"] == {
        "ray.io/cluster": "raycluster-deny-all",
        "ray.io/node-type": "head",
    }
    assert head["policyTypes"] == ["Ingress", "Egress"]
    # intra-cluster egress, then the sample's DNS rule
    assert [r.get("ports") for r in head["egress"]] == [
        None,
        [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}],
    ]
    await wait_event_reasons(kclient, namespace, "raycluster-deny-all", {"CreatedNetworkPolicy"})


async def test_mode_change_updates_and_group_removal_deletes(
    netpol_operator: Any, kclient: Client, namespace: str
) -> None:
    body = sample(namespace, "modes")
    extra = copy.deepcopy(body["spec"]["workerGroupSpecs"][0])
    extra["groupName"] = "gpu"
    body["spec"]["workerGroupSpecs"].append(extra)
    cluster = await kclient.create(body)
    await wait_policies(kclient, namespace, build_network_policies(cluster))

    cluster["spec"]["networkPolicy"]["mode"] = "DenyAllEgress"
    cluster["spec"]["networkPolicy"]["worker"]["egressRules"].append(
        {"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"port": 443}]}
    )
    cluster = await kclient.update(cluster)
    live = await wait_policies(kclient, namespace, build_network_policies(cluster))
    assert live["modes-workers-gpu"]["spec"]["policyTypes"] == ["Egress"]
    assert "ingress" not in live["modes-head"]["spec"]
    await wait_event_reasons(kclient, namespace, "modes", {"UpdatedNetworkPolicy"})

    cluster["spec"]["workerGroupSpecs"] = cluster["spec"]["workerGroupSpecs"][:1]
    cluster = await kclient.update(cluster)
    live = await wait_policies(kclient, namespace, build_network_policies(cluster))
    assert "modes-workers-gpu" not in live
    await wait_event_reasons(kclient, namespace, "modes", {"DeletedNetworkPolicy"})


async def test_removing_network_policy_deletes_owned_policies_only(
    netpol_operator: Any, kclient: Client, namespace: str
) -> None:
    cluster = await kclient.create(sample(namespace, "gone"))
    await wait_policies(kclient, namespace, build_network_policies(cluster))
    # A user's policy labelled with the cluster but not controlled by it survives.
    mine = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {
            "name": "users-own",
            "namespace": namespace,
            "labels": {"ray.io/cluster": "gone"},
        },
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
    }
    await kclient.create(mine)
    del cluster["spec"]["networkPolicy"]
    await kclient.update(cluster)

    async def only_users_left() -> bool:
        return sorted(await policies(kclient, namespace)) == ["users-own"]

    await eventually(only_users_left, timeout=60, message="owned policies deleted")


async def test_name_collision_warns_and_leaves_the_policy_alone(
    netpol_operator: Any, kclient: Client, namespace: str
) -> None:
    squatter = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "clash-head", "namespace": namespace},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
    }
    created = await kclient.create(squatter)
    await kclient.create(sample(namespace, "clash"))
    events = await wait_event_reasons(kclient, namespace, "clash", {"NetworkPolicyNameCollision"})
    warning = next(e for e in events if e["reason"] == "NetworkPolicyNameCollision")
    assert warning["type"] == "Warning"
    assert f"{namespace}/clash-head already exists and is not owned" in warning["message"]
    live = await kclient.get(*NP, "clash-head", namespace)
    assert live["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]

    # Once the name is free, the retried pass creates the cluster's own policy.
    await kclient.delete(*NP, "clash-head", namespace)
    cluster = await get_cluster(kclient, namespace, "clash")
    await wait_policies(kclient, namespace, build_network_policies(cluster))


async def test_rayjob_owned_cluster_admits_its_submitter(
    netpol_operator: Any, kclient: Client, namespace: str
) -> None:
    job = await kclient.create(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": "my-job", "namespace": namespace},
            "spec": {"entrypoint": "python -c 'print(1)'", "suspend": True},
        }
    )
    body = sample(namespace, "my-job-raycluster")
    body["metadata"]["labels"] = {"ray.io/job-submission-mode": "K8sJobMode"}
    body["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "name": "my-job",
            "uid": job["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    body["spec"]["headGroupSpec"]["rayStartParams"]["dashboard-port"] = "8266"
    cluster = await kclient.create(body)
    live = await wait_policies(kclient, namespace, build_network_policies(cluster))
    ingress = live["my-job-raycluster-head"]["spec"]["ingress"]
    assert ingress[1] == {
        "ports": [{"protocol": "TCP", "port": 8266}],
        "from": [
            {
                "podSelector": {
                    "matchLabels": {
                        "ray.io/originated-from-cr-name": "my-job",
                        "ray.io/originated-from-crd": "RayJob",
                    }
                }
            }
        ],
    }
    # Workers get no submitter rule.
    assert len(live["my-job-raycluster-workers-workergroup"]["spec"]["ingress"]) == 1


async def test_hand_edit_is_reverted_and_unchanged_world_makes_zero_writes(
    netpol_operator: Any, kclient: Client, namespace: str
) -> None:
    body = sample(namespace, "idem")
    # a custom rule without a protocol: the apiserver defaults it, which must not loop
    body["spec"]["networkPolicy"]["worker"]["egressRules"].append(
        {"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"port": 443}]}
    )
    cluster = await kclient.create(body)
    expected = build_network_policies(cluster)
    await wait_policies(kclient, namespace, expected)

    live = await kclient.get(*NP, "idem-head", namespace)
    live["spec"]["egress"] = live["spec"]["egress"][:1]
    await kclient.update(live)
    await wait_policies(kclient, namespace, expected)

    await wait_quiet(lambda: kclient.stats.writes, quiet=3.0, timeout=60, message="writes")
    recorder = netpol_operator.reconciler.ctx.recorder
    await recorder.flush()
    before = kclient.stats.writes
    for _ in range(3):
        await netpol_operator.reconciler.reconcile(Request(namespace, "idem"))
    await recorder.flush()
    assert kclient.stats.writes == before


async def test_deleting_cluster_is_skipped(
    netpol_operator: Any, kclient: Client, namespace: str
) -> None:
    body = sample(namespace, "going")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    cluster = await kclient.create(body)
    await wait_policies(kclient, namespace, build_network_policies(cluster))
    await kclient.delete("ray.io/v1", "RayCluster", "going", namespace)

    async def deleting() -> bool:
        cached = netpol_operator.manager.cache.get("ray.io/v1", "RayCluster", namespace, "going")
        return bool(cached and cached["metadata"].get("deletionTimestamp"))

    await eventually(deleting, timeout=30, message="deletion seen")
    await kclient.delete(*NP, "going-head", namespace)

    def forgotten() -> bool:
        cache = netpol_operator.manager.cache
        return cache.get(*NP, namespace, "going-head") is None

    await eventually(forgotten, timeout=30, message="policy deletion seen")
    await netpol_operator.reconciler.reconcile(Request(namespace, "going"))
    await netpol_operator.reconciler.ctx.recorder.flush()
    try:
        await kclient.get(*NP, "going-head", namespace)
        recreated = True
    except NotFound:
        recreated = False
    assert not recreated
    rc = await get_cluster(kclient, namespace, "going")
    rc["metadata"]["finalizers"] = []
    await kclient.update(rc)
