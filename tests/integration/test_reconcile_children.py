"""kuberay.reconcile.children against the real apiserver: create-or-adopt and create-or-update
make the requests they promise, and a second pass over an unchanged object writes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from kuberay.kube import Client, Conflict, NotFound
from kuberay.reconcile.children import create_or_update, ensure


def svc(name: str, ns: str, port: int = 80, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": ns, "labels": labels or {"app": "t"}},
        "spec": {"selector": {"app": "t"}, "ports": [{"name": "http", "port": port}]},
    }


async def test_ensure_creates_then_adopts_the_existing_object(
    kclient: Client, namespace: str
) -> None:
    first = await ensure(kclient, svc("a", namespace), field_manager="test")
    assert first.created and first.object is not None
    uid = first.object["metadata"]["uid"]

    writes = kclient.stats.writes
    again = await ensure(kclient, svc("a", namespace, port=81), reader=kclient)
    assert not again.created
    assert again.object is not None
    assert again.object["metadata"]["uid"] == uid  # the existing object, not changed
    assert again.object["spec"]["ports"][0]["port"] == 80
    assert (again.object["apiVersion"], again.object["kind"]) == ("v1", "Service")
    assert kclient.stats.writes == writes + 1  # the refused create only

    unread = await ensure(kclient, svc("a", namespace))
    assert unread == (False, None)


async def test_ensure_reports_an_object_deleted_before_it_was_read(
    kclient: Client, namespace: str
) -> None:
    await kclient.create(svc("gone", namespace))

    class DeletingReader:
        async def get(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            await kclient.delete("v1", "Service", "gone", namespace)
            return await kclient.get(*args, **kwargs)

    with pytest.raises(NotFound):
        await ensure(kclient, svc("gone", namespace), reader=DeletingReader())  # type: ignore[arg-type]


async def test_create_or_update_creates_patches_owned_fields_and_is_idempotent(
    kclient: Client, namespace: str
) -> None:
    desired = svc("b", namespace)
    obj, op = await create_or_update(kclient, desired, fields=("spec", "metadata.labels"))
    assert op == "created"

    # Server-defaulted fields (clusterIP, type, sessionAffinity, port protocol...) do not
    # count as a difference: the second pass makes no write.
    writes = kclient.stats.writes
    obj, op = await create_or_update(kclient, desired, fields=("spec", "metadata.labels"))
    assert op == "unchanged"
    obj, op = await create_or_update(
        kclient, desired, current=obj, fields=("spec", "metadata.labels")
    )
    assert op == "unchanged"
    assert kclient.stats.writes == writes

    cluster_ip = obj["spec"]["clusterIP"]
    changed = svc("b", namespace, port=81, labels={"app": "t", "tier": "x"})
    obj, op = await create_or_update(kclient, changed, fields=("spec", "metadata.labels"))
    assert op == "updated"
    assert kclient.stats.writes == writes + 1
    assert obj["spec"]["ports"][0]["port"] == 81
    assert obj["spec"]["clusterIP"] == cluster_ip  # the defaulted field stayed
    assert obj["metadata"]["labels"] == {"app": "t", "tier": "x"}

    # Fields not owned are neither compared nor written.
    other = svc("b", namespace, port=81, labels={"app": "other"})
    _, op = await create_or_update(kclient, other, fields=("spec",))
    assert op == "unchanged"
    assert kclient.stats.writes == writes + 1


async def test_create_or_update_from_a_stale_copy_conflicts(
    kclient: Client, namespace: str
) -> None:
    stale, _ = await create_or_update(kclient, svc("c", namespace))
    await create_or_update(kclient, svc("c", namespace, port=82))
    with pytest.raises(Conflict):
        await create_or_update(kclient, svc("c", namespace, port=83), current=stale)
