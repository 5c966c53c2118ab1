"""kuberay.kube.Client against the real apiserver: CRUD, patches, errors, paging, watch."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import REGISTRY

from kuberay.kube import AlreadyExists, Client, Conflict, Gone, Invalid, NotFound


def cm(name: str, ns: str, data: dict[str, str] | None = None) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "t"}},
        "data": data or {"k": "v"},
    }


async def test_create_get_update_delete(kclient: Client, namespace: str) -> None:
    created = await kclient.create(cm("a", namespace))
    assert created["metadata"]["uid"]
    got = await kclient.get("v1", "ConfigMap", "a", namespace)
    assert got["data"] == {"k": "v"}

    got["data"]["k"] = "w"
    updated = await kclient.update(got)
    assert updated["data"]["k"] == "w"

    # The stale copy now conflicts.
    with pytest.raises(Conflict):
        await kclient.update(got)

    with pytest.raises(AlreadyExists):
        await kclient.create(cm("a", namespace))

    await kclient.delete("v1", "ConfigMap", "a", namespace)
    with pytest.raises(NotFound):
        await kclient.get("v1", "ConfigMap", "a", namespace)


async def test_patches_and_server_side_apply(kclient: Client, namespace: str) -> None:
    await kclient.create(cm("p", namespace))
    merged = await kclient.patch("v1", "ConfigMap", "p", {"data": {"x": "1"}}, namespace)
    assert merged["data"] == {"k": "v", "x": "1"}
    jsonp = await kclient.patch(
        "v1", "ConfigMap", "p", [{"op": "remove", "path": "/data/k"}], namespace, patch_type="json"
    )
    assert jsonp["data"] == {"x": "1"}
    applied = await kclient.apply(cm("p", namespace, {"y": "2"}), field_manager="test-ssa")
    assert applied["data"]["y"] == "2"
    managers = {m["manager"] for m in applied["metadata"]["managedFields"]}
    assert "test-ssa" in managers


async def test_metadata_only_get_and_patch_leave_the_data_on_the_server(
    kclient: Client, namespace: str
) -> None:
    await kclient.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s", "namespace": namespace, "labels": {"a": "1"}},
            "stringData": {"tls.key": "private"},
        }
    )
    meta = await kclient.get("v1", "Secret", "s", namespace, metadata_only=True)
    assert set(meta) == {"apiVersion", "kind", "metadata"}
    assert (meta["apiVersion"], meta["kind"]) == ("v1", "Secret")
    rv = meta["metadata"]["resourceVersion"]
    patch = {"metadata": {"annotations": {"b": "2"}, "resourceVersion": rv}}
    patched = await kclient.patch("v1", "Secret", "s", patch, namespace, metadata_only=True)
    assert set(patched) == {"apiVersion", "kind", "metadata"}
    assert patched["metadata"]["annotations"] == {"b": "2"}
    assert patched["metadata"]["labels"] == {"a": "1"}
    with pytest.raises(Conflict):  # the resourceVersion guards the merge patch
        await kclient.patch("v1", "Secret", "s", patch, namespace, metadata_only=True)
    full = await kclient.get("v1", "Secret", "s", namespace)
    assert full["data"] == {"tls.key": "cHJpdmF0ZQ=="}


async def test_invalid_object_reports_causes(kclient: Client, namespace: str) -> None:
    bad = cm("Bad_Name", namespace)
    with pytest.raises(Invalid) as info:
        await kclient.create(bad)
    assert info.value.status == 422
    assert any(c.get("field") == "metadata.name" for c in info.value.causes)


async def test_delete_precondition_on_uid(kclient: Client, namespace: str) -> None:
    await kclient.create(cm("d", namespace))
    with pytest.raises(Conflict):
        await kclient.delete(
            "v1",
            "ConfigMap",
            "d",
            namespace,
            preconditions={"uid": "00000000-0000-0000-0000-000000000000"},
        )
    await kclient.delete("v1", "ConfigMap", "d", namespace, propagation_policy="Background")


async def test_paged_list_returns_everything(kclient: Client, namespace: str) -> None:
    for i in range(7):
        await kclient.create(cm(f"page-{i}", namespace))
    before = kclient.stats.by_verb["list"]
    items, rv = await kclient.list_all(
        "v1", "ConfigMap", namespace, label_selector="app=t", page_size=3
    )
    assert sorted(i["metadata"]["name"] for i in items) == [f"page-{i}" for i in range(7)]
    assert rv
    assert kclient.stats.by_verb["list"] - before == 3  # 3 + 3 + 1


async def test_status_subresource_patch(kclient: Client, namespace: str) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "s", "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    await kclient.create(pod)
    patched = await kclient.patch_status(
        "v1", "Pod", "s", {"status": {"phase": "Running"}}, namespace
    )
    assert patched["status"]["phase"] == "Running"
    # The spec is untouched by a status write.
    assert patched["spec"]["containers"][0]["image"] == "busybox"


async def test_watch_streams_events_and_expired_rv_is_gone(kclient: Client, namespace: str) -> None:
    _, rv = await kclient.list_all("v1", "ConfigMap", namespace)
    seen: list[tuple[str, str]] = []

    async def consume() -> None:
        async for ev in kclient.watch(
            "v1", "ConfigMap", namespace, resource_version=rv, timeout_seconds=30
        ):
            if ev.type == "BOOKMARK":
                continue
            seen.append((ev.type, ev.object["metadata"]["name"]))
            if ev.type == "DELETED":
                return

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.3)
    await kclient.create(cm("w", namespace))
    await kclient.patch("v1", "ConfigMap", "w", {"data": {"a": "b"}}, namespace)
    await kclient.delete("v1", "ConfigMap", "w", namespace)
    await asyncio.wait_for(task, 60)
    assert seen == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]


async def test_watch_from_compacted_rv_raises_gone(
    kclient: Client, namespace: str, control_plane: object
) -> None:
    compact = getattr(control_plane, "compact_etcd", None)
    if compact is None:
        pytest.skip("needs the local control plane to compact etcd")

    def event(name: str) -> dict[str, object]:
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": namespace},
            "reason": "Test",
            "message": name,
            "type": "Normal",
        }

    # Events bypass the apiserver's watch cache, so the watch goes to etcd itself.
    first = await kclient.create(event("e1"))
    await kclient.create(event("e2"))
    await kclient.create(event("e3"))
    compact()
    with pytest.raises(Gone):
        async for _ in kclient.watch(
            "v1",
            "Event",
            namespace,
            resource_version=first["metadata"]["resourceVersion"],
            timeout_seconds=5,
        ):
            pass


async def test_requests_are_counted(kclient: Client, namespace: str) -> None:
    host = kclient.host.split("://", 1)[1]

    def value() -> float:
        v = REGISTRY.get_sample_value(
            "rest_client_requests_total", {"code": "404", "method": "GET", "host": host}
        )
        return v or 0.0

    before = value()
    with pytest.raises(NotFound):
        await kclient.get("v1", "ConfigMap", "missing", namespace)
    assert value() == before + 1
    assert kclient.stats.by_code[("get", 404)] >= 1


async def test_discovers_resources_of_api_groups(kclient: Client) -> None:
    info = await kclient.resource("storage.k8s.io/v1", "StorageClass")
    assert info.plural == "storageclasses"
    assert info.namespaced is False
    with pytest.raises(NotFound):
        await kclient.resource("v1", "NoSuchKind")
