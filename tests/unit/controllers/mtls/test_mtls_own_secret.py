"""How the mTLS reconciler owns a cert-manager Secret, with a recording fake client: a
metadata-only read, a merge patch of only ``metadata.ownerReferences`` at the read
resourceVersion (never a PUT, never the Secret's data), nothing at all on later passes while
the Certificate is unchanged, a quiet requeue on 409. (The real apiserver's side is in
``tests/integration/mtls/test_mtls_secret_writes.py``.)"""

from __future__ import annotations

import datetime as dt
from typing import Any, cast

from kuberay.controllers.mtls.builders import (
    build_ca_certificate,
    build_ca_issuer,
    build_leaf_certificate,
    build_selfsigned_issuer,
)
from kuberay.controllers.mtls.reconciler import OWNER_RECHECK, Ctx, MTLSReconciler, MTLSSettings
from kuberay.kube import Client, Conflict, Forbidden, NotFound
from kuberay.reconcile import Cache, EventRecorder, Request

Obj = dict[str, Any]
NS, NAME = "ns", "rc"
CLUSTER: Obj = {
    "apiVersion": "ray.io/v1",
    "kind": "RayCluster",
    "metadata": {"name": NAME, "namespace": NS, "uid": "0123456789abcdef"},
    "spec": {"tlsOptions": {"enabled": True}, "headGroupSpec": {}},
}
READY = {
    "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1}],
    "revision": 1,
}


def _issued(obj: Obj, uid: str) -> Obj:
    obj["metadata"].update(uid=uid, generation=1, resourceVersion="1")
    obj["status"] = dict(READY)
    return obj


class FakeCache:
    def __init__(self, objs: list[Obj]) -> None:
        self.objs = {(o["kind"], o["metadata"]["name"]): o for o in objs}

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        return self.objs.get((kind, name))

    def list(self, api_version: str, kind: str, namespace: str) -> list[Obj]:
        return []


class FakeRecorder:
    def __init__(self) -> None:
        self.reasons: list[str] = []

    def event(self, obj: Obj, etype: str, reason: str, message: str, action: str) -> None:
        self.reasons.append(reason)


class FakeClient:
    """Secrets by name (metadata only is what the reconciler may see); records calls."""

    def __init__(self, secrets: dict[str, Obj]) -> None:
        self.secrets = secrets
        self.calls: list[tuple[str, str, Any]] = []
        self.conflict = False

    async def get(self, api_version: str, kind: str, name: str, namespace: str, **kw: Any) -> Obj:
        self.calls.append(("get", name, kw))
        if kind != "Secret" or name not in self.secrets:
            raise NotFound(404, "NotFound", f"{kind} {name} not found")
        return {"apiVersion": "v1", "kind": "Secret", "metadata": self.secrets[name]}

    async def patch(
        self, api_version: str, kind: str, name: str, patch: Obj, namespace: str, **kw: Any
    ) -> Obj:
        self.calls.append(("patch", name, (patch, kw)))
        if self.conflict:
            raise Conflict(409, "Conflict", "the object has been modified")
        meta = self.secrets[name]
        assert patch["metadata"]["resourceVersion"] == meta["resourceVersion"]
        meta["ownerReferences"] = patch["metadata"]["ownerReferences"]
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
        return {"metadata": meta}

    async def update(self, obj: Obj, **kw: Any) -> Obj:
        raise AssertionError("no PUT")

    async def create(self, obj: Obj, **kw: Any) -> Obj:
        raise AssertionError("nothing to create")


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now


def _world() -> tuple[MTLSReconciler, FakeClient, FakeRecorder, Clock, dict[str, Obj]]:
    certs = [
        _issued(build_ca_certificate(CLUSTER), "uid-ca"),
        _issued(build_leaf_certificate(CLUSTER, "head", ["127.0.0.1"], "cluster.local"), "uid-h"),
        _issued(build_leaf_certificate(CLUSTER, "worker", ["127.0.0.1"], "cluster.local"), "uid-w"),
    ]
    cache = FakeCache([CLUSTER, build_selfsigned_issuer(CLUSTER), build_ca_issuer(CLUSTER), *certs])
    stranger = {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "uid-x"}
    secrets = {
        c["spec"]["secretName"]: {
            "name": c["spec"]["secretName"],
            "resourceVersion": "5",
            "ownerReferences": [dict(stranger)],
        }
        for c in certs
    }
    client = FakeClient(secrets)
    recorder = FakeRecorder()
    clock = Clock()
    ctx = Ctx(
        client=cast(Client, client),
        cache=cast(Cache, cache),
        recorder=cast(EventRecorder, recorder),
        settings=MTLSSettings(features={"RayClusterMTLS": True}, now=clock),
    )
    by_cert = {c["metadata"]["name"]: c for c in certs}
    return MTLSReconciler(ctx), client, recorder, clock, by_cert


async def test_owner_reference_is_merge_patched_from_a_metadata_read() -> None:
    reconciler, client, recorder, _, certs = _world()
    await reconciler.reconcile(Request(NS, NAME))
    assert all(kw == {"metadata_only": True} for verb, _, kw in client.calls if verb == "get")
    patches = [args for verb, _, args in client.calls if verb == "patch"]
    assert len(patches) == 3 and len(client.calls) == 6
    for patch, kw in patches:
        assert kw == {
            "patch_type": "merge",
            "field_manager": "kuberay-operator",
            "metadata_only": True,
        }
        assert set(patch) == {"metadata"}
        assert set(patch["metadata"]) == {"ownerReferences", "resourceVersion"}
        assert patch["metadata"]["resourceVersion"] == "5"
    for cert in certs.values():
        refs = client.secrets[cert["spec"]["secretName"]]["ownerReferences"]
        assert [r["uid"] for r in refs] == ["uid-x", cert["metadata"]["uid"]]
    assert "MTLSFailedToReconcile" not in recorder.reasons


async def test_no_secret_request_once_owned_until_revision_or_recheck() -> None:
    reconciler, client, _, clock, certs = _world()
    await reconciler.reconcile(Request(NS, NAME))
    client.calls.clear()
    await reconciler.reconcile(Request(NS, NAME))
    await reconciler.reconcile(Request(NS, NAME))
    assert client.calls == []
    # a re-issued certificate (new revision): its Secret is read again, not written
    certs[f"ray-head-cert-{NAME}"]["status"]["revision"] = 2
    await reconciler.reconcile(Request(NS, NAME))
    assert [(v, n) for v, n, _ in client.calls] == [("get", f"ray-head-secret-{NAME}")]
    client.calls.clear()
    clock.now += OWNER_RECHECK
    await reconciler.reconcile(Request(NS, NAME))
    assert sorted(v for v, _, _ in client.calls) == ["get", "get", "get"]


async def test_conflict_requeues_quietly() -> None:
    reconciler, client, recorder, _, _ = _world()
    client.conflict = True
    result = await reconciler.reconcile(Request(NS, NAME))
    assert result.requeue is True
    assert "MTLSFailedToReconcile" not in recorder.reasons
    client.conflict = False
    await reconciler.reconcile(Request(NS, NAME))
    assert all(len(m["ownerReferences"]) == 2 for m in client.secrets.values())


class NoPatchClient(FakeClient):
    """KubeRay's ClusterRole: update on Secrets, but no patch (403)."""

    async def get(self, api_version: str, kind: str, name: str, namespace: str, **kw: Any) -> Obj:
        got = await super().get(api_version, kind, name, namespace, **kw)
        if not kw.get("metadata_only"):
            got["data"] = {"tls.key": "c2VjcmV0"}
        return got

    async def patch(
        self, api_version: str, kind: str, name: str, patch: Obj, namespace: str, **kw: Any
    ) -> Obj:
        self.calls.append(("patch", name, (patch, kw)))
        raise Forbidden(403, "Forbidden", f'secrets "{name}" is forbidden: cannot patch')

    async def update(self, obj: Obj, **kw: Any) -> Obj:
        self.calls.append(("update", obj["metadata"]["name"], obj))
        meta = self.secrets[obj["metadata"]["name"]]
        assert obj["metadata"]["resourceVersion"] == meta["resourceVersion"]
        assert obj["data"] == {"tls.key": "c2VjcmV0"}  # the whole Secret, data kept
        meta["ownerReferences"] = obj["metadata"]["ownerReferences"]
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
        return obj


async def test_without_patch_rbac_the_owner_reference_is_put_once_per_secret() -> None:
    """With KubeRay's RBAC (no patch on secrets) the first 403 switches to a whole read and
    PUT, which keeps the Secret's data and the other owners; the reconcile does not fail,
    no further patch is tried, and the next pass sends nothing."""
    reconciler, fake, recorder, _, certs = _world()
    client = NoPatchClient(fake.secrets)
    reconciler.ctx.client = cast(Client, client)
    await reconciler.reconcile(Request(NS, NAME))
    verbs = [verb for verb, _, _ in client.calls]
    assert verbs.count("patch") == 1 and verbs.count("update") == 3, verbs
    for cert in certs.values():
        refs = client.secrets[cert["spec"]["secretName"]]["ownerReferences"]
        assert [r["uid"] for r in refs] == ["uid-x", cert["metadata"]["uid"]]
    assert "MTLSFailedToReconcile" not in recorder.reasons
    client.calls.clear()
    await reconciler.reconcile(Request(NS, NAME))
    assert client.calls == []
