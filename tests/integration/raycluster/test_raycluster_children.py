"""Children of a RayCluster on the real apiserver: names taken by someone else's object,
user-supplied autoscaler ServiceAccounts, the label-scoped Secret cache, the embedded
GCS PVC's owner reference following ``deletionPolicy``, the autoscaler-v1 warning."""

from __future__ import annotations

import asyncio
from typing import Any

from kuberay.kube import Client, NotFound
from tests.helpers import eventually
from tests.integration.raycluster.conftest import Operator, start_operator
from tests.integration.raycluster.helpers import (
    condition,
    events_for,
    get_cluster,
    pods_of,
    raycluster,
)

CONFLICT = "ChildResourceConflict"


async def get_or_none(
    client: Client, api_version: str, kind: str, name: str, ns: str
) -> dict[str, Any] | None:
    try:
        return await client.get(api_version, kind, name, ns)
    except NotFound:
        return None


async def warning_messages(client: Client, ns: str, cluster: str, reason: str) -> list[str]:
    return [
        str(e.get("note") or e.get("message") or "")
        for e in await events_for(client, ns, cluster)
        if e["reason"] == reason
    ]


async def test_foreign_head_service_blocks_pods_until_deleted(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    foreign = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "taken-head-svc", "namespace": namespace, "labels": {"app": "x"}},
        "spec": {"selector": {"app": "x"}, "ports": [{"name": "http", "port": 80}]},
    }
    created = await kclient.create(foreign)
    await kclient.create(raycluster("taken", namespace, replicas=1))

    async def warned() -> list[str]:
        return await warning_messages(kclient, namespace, "taken", "FailedToCreateService")

    messages = await eventually(warned, timeout=60, message="FailedToCreateService event")
    assert "Service" in messages[0] and f"{namespace}/taken-head-svc" in messages[0]
    assert "owned by someone else" in messages[0]

    async def conflicted() -> dict[str, Any] | None:
        return condition(await get_cluster(kclient, namespace, "taken"), CONFLICT)

    cond = await eventually(conflicted, timeout=60, message="conflict condition")
    assert cond["status"] == "True" and cond["reason"] == "FailedToCreateService"
    assert "taken-head-svc" in cond["message"]
    await asyncio.sleep(2.0)  # a few passes later: still nothing created, nothing touched
    assert await pods_of(kclient, namespace, "taken") == []
    live = await kclient.get("v1", "Service", "taken-head-svc", namespace)
    assert live["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert not live["metadata"].get("ownerReferences")

    # The name is freed: the cluster converges on its own (backoff retry) and the
    # condition goes away.
    await kclient.delete("v1", "Service", "taken-head-svc", namespace)

    async def converged() -> bool:
        svc = await get_or_none(kclient, "v1", "Service", "taken-head-svc", namespace)
        rc = await get_cluster(kclient, namespace, "taken")
        owned = bool(svc and svc["metadata"].get("ownerReferences"))
        pods = await pods_of(kclient, namespace, "taken")
        return owned and len(pods) == 2 and condition(rc, CONFLICT) is None

    await eventually(converged, timeout=60, message="cluster converges once the name is free")


async def test_every_child_name_conflict_is_reported(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    """One cluster per child kind, each with that child's name pre-taken."""
    ns = namespace

    def meta(name: str) -> dict[str, Any]:
        return {"name": name, "namespace": ns}

    cases: list[tuple[str, dict[str, Any], dict[str, Any], str]] = []
    # autoscaler ServiceAccount / Role / RoleBinding (the generated names are the cluster's)
    for cname, kind, api, extra in (
        ("as-sa", "ServiceAccount", "v1", {}),
        ("as-role", "Role", "rbac.authorization.k8s.io/v1", {"rules": []}),
        (
            "as-rb",
            "RoleBinding",
            "rbac.authorization.k8s.io/v1",
            {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "x"}},
        ),
    ):
        body = raycluster(cname, ns, replicas=0, enableInTreeAutoscaling=True)
        obj = {"apiVersion": api, "kind": kind, "metadata": meta(cname), **extra}
        cases.append((cname, body, obj, f"FailedToCreate{kind}"))
    ing = raycluster("ing-x", ns, replicas=0)
    ing["spec"]["headGroupSpec"]["enableIngress"] = True
    ing_obj = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": meta("ing-x-head-ingress"),
        "spec": {"defaultBackend": {"service": {"name": "x", "port": {"number": 80}}}},
    }
    cases.append(("ing-x", ing, ing_obj, "FailedToCreateIngress"))
    # An unlabelled Secret is outside the operator's cache: found by the create's 409.
    sec = raycluster("sec-x", ns, replicas=0, rayVersion="2.52.0", authOptions={"mode": "token"})
    sec_obj = {"apiVersion": "v1", "kind": "Secret", "metadata": meta("sec-x"), "data": {}}
    cases.append(("sec-x", sec, sec_obj, "FailedToCreateSecret"))
    mh = raycluster("mh-x", ns, replicas=1)
    mh["spec"]["workerGroupSpecs"][0]["numOfHosts"] = 2
    svc_spec = {"selector": {"a": "b"}, "ports": [{"name": "p", "port": 1}]}
    mh_obj = {"apiVersion": "v1", "kind": "Service", "metadata": meta("mh-x-headless")}
    mh_obj["spec"] = svc_spec
    cases.append(("mh-x", mh, mh_obj, "FailedToCreateService"))
    srv = raycluster("srv-x", ns, replicas=0)
    srv["metadata"]["annotations"] = {"ray.io/enable-serve-service": "true"}
    srv["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "serve", "containerPort": 8000}
    ]
    srv_obj = {"apiVersion": "v1", "kind": "Service", "metadata": meta("srv-x-serve-svc")}
    srv_obj["spec"] = svc_spec
    cases.append(("srv-x", srv, srv_obj, "FailedToCreateService"))

    versions: dict[str, str] = {}
    for cname, body, obj, _ in cases:
        made = await kclient.create(obj)
        versions[cname] = made["metadata"]["resourceVersion"]
        await kclient.create(body)

    for cname, _, obj, reason in cases:

        async def reported(cname: str = cname, reason: str = reason) -> list[str]:
            return await warning_messages(kclient, ns, cname, reason)

        messages = await eventually(reported, timeout=60, message=f"{cname}: {reason}")
        assert any(
            f"{ns}/{obj['metadata']['name']}" in m and "owned by someone else" in m
            for m in messages
        ), messages

        async def flagged(cname: str = cname, reason: str = reason) -> bool:
            # the status is written after the Event is recorded: poll it too
            rc = await get_cluster(kclient, ns, cname)
            cond = condition(rc, CONFLICT)
            assert cond is not None and cond["reason"] == reason, (cname, rc.get("status"))
            return True

        await eventually(flagged, timeout=60, message=f"{cname}: {CONFLICT} condition")
        assert await pods_of(kclient, ns, cname) == [], cname
        live = await kclient.get(obj["apiVersion"], obj["kind"], obj["metadata"]["name"], ns)
        assert live["metadata"]["resourceVersion"] == versions[cname], cname


async def test_user_service_account_with_a_long_name(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    sa_name = "user-sa-" + "a" * 52
    assert len(sa_name) == 60
    body = raycluster("longsa", namespace, replicas=1, enableInTreeAutoscaling=True)
    body["spec"]["headGroupSpec"]["template"]["spec"]["serviceAccountName"] = sa_name
    await kclient.create(body)

    async def not_found() -> list[str]:
        return await warning_messages(
            kclient, namespace, "longsa", "AutoscalerServiceAccountNotFound"
        )

    assert sa_name in (await eventually(not_found, timeout=60))[0]
    assert await pods_of(kclient, namespace, "longsa") == []
    await kclient.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": sa_name, "namespace": namespace},
        }
    )
    # The cluster itself did not change: the retry (backoff) finds the account.

    async def head() -> dict[str, Any] | None:
        heads = await pods_of(kclient, namespace, "longsa", **{"ray.io/node-type": "head"})
        return heads[0] if heads else None

    pod = await eventually(head, timeout=60, message="head pod once the SA exists")
    assert pod["spec"]["serviceAccountName"] == sa_name
    binding = await eventually(
        lambda: kclient.get("rbac.authorization.k8s.io/v1", "RoleBinding", "longsa", namespace),
        timeout=60,
        message="autoscaler RoleBinding",
    )
    assert binding["subjects"][0]["name"] == sa_name
    sa = await kclient.get("v1", "ServiceAccount", sa_name, namespace)
    assert not sa["metadata"].get("ownerReferences")  # the user's, left alone
    # No ServiceAccount of our own was made under the clipped name.
    assert await get_or_none(kclient, "v1", "ServiceAccount", sa_name[-50:], namespace) is None


async def test_secret_cache_holds_only_operator_secrets(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    await kclient.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "user-secret", "namespace": namespace},
            "stringData": {"password": "hunter2"},
        }
    )
    await kclient.create(
        raycluster("tok", namespace, replicas=0, rayVersion="2.52.0", authOptions={"mode": "token"})
    )
    cache = operator.manager.cache

    async def auth_cached() -> bool:
        return cache.get("v1", "Secret", namespace, "tok") is not None

    await eventually(auth_cached, timeout=60, message="operator-made auth Secret cached")
    assert cache.get("v1", "Secret", namespace, "user-secret") is None
    cached_names = {s["metadata"]["name"] for s in cache.list("v1", "Secret", namespace)}
    assert cached_names == {"tok"}


async def test_gcs_pvc_owner_reference_follows_deletion_policy(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    async with start_operator(kclient, namespace, gates="GCSFaultToleranceEmbeddedStorage=true"):
        body = raycluster("keep", namespace, replicas=0)
        body["spec"]["gcsFaultToleranceOptions"] = {"backend": "rocksdb", "storage": {}}
        rc = await kclient.create(body)
        uid = rc["metadata"]["uid"]

        async def owner_uids() -> list[str] | None:
            pvc = await get_or_none(
                kclient, "v1", "PersistentVolumeClaim", "keep-gcs-pvc", namespace
            )
            if pvc is None:
                return None
            return [r["uid"] for r in pvc["metadata"].get("ownerReferences") or []]

        async def owned() -> bool:
            return await owner_uids() == [uid]

        async def unowned() -> bool:
            return await owner_uids() == []

        await eventually(owned, timeout=60, message="PVC owned (DeleteWithCluster)")

        async def set_storage(storage: dict[str, Any]) -> None:
            await kclient.patch(
                "ray.io/v1",
                "RayCluster",
                "keep",
                {"spec": {"gcsFaultToleranceOptions": {"storage": storage}}},
                namespace,
            )

        await set_storage({"deletionPolicy": "Retain"})
        await eventually(unowned, timeout=60, message="owner reference removed on Retain")
        await set_storage({"deletionPolicy": "DeleteWithCluster"})
        await eventually(owned, timeout=60, message="owner reference back")
        # A size change cannot be applied to the claim: one drift warning, claim kept.
        await set_storage({"deletionPolicy": "DeleteWithCluster", "size": "5Gi"})

        async def drift() -> list[str]:
            return [
                m
                for m in await warning_messages(kclient, namespace, "keep", "FailedToCreatePVC")
                if "cannot be reconfigured in place" in m
            ]

        messages = await eventually(drift, timeout=60, message="drift warning")
        assert "requested size 5Gi != current 1Gi" in messages[0]
        await asyncio.sleep(1.0)
        assert len(await drift()) == 1
        assert await owned()


async def test_autoscaler_v1_worker_restart_policy_warning(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    body = raycluster(
        "asv1",
        namespace,
        replicas=0,
        enableInTreeAutoscaling=True,
        autoscalerOptions={"version": "v1"},
    )
    body["spec"]["workerGroupSpecs"][0]["template"]["spec"]["restartPolicy"] = "OnFailure"
    await kclient.create(body)

    async def warned() -> list[str]:
        return [
            m
            for m in await warning_messages(kclient, namespace, "asv1", "InvalidRayClusterSpec")
            if "autoscaler V1" in m
        ]

    messages = await eventually(warned, timeout=60, message="autoscaler v1 warning")
    assert messages[0] == (
        f"RayCluster spec warning {namespace}/asv1: restartPolicy for worker groups "
        "[small-group] should be Never or unset when using autoscaler V1"
    )
    # Only a warning: the cluster is still reconciled.
    heads = await eventually(
        lambda: pods_of(kclient, namespace, "asv1", **{"ray.io/node-type": "head"}), timeout=60
    )
    assert len(heads) == 1
