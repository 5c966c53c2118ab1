"""kuberay.reconcile.children without an apiserver: which requests ensure/create_or_update
make, and what counts as a difference."""

from __future__ import annotations

from typing import Any

import pytest

from kuberay.kube import AlreadyExists, NotFound
from kuberay.reconcile.children import covers, create_or_update, ensure


class FakeClient:
    """Objects by (kind, namespace, name); records every request."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.calls: list[str] = []

    async def get(self, api_version: str, kind: str, name: str, namespace: Any = None) -> Any:
        self.calls.append("get")
        try:
            return dict(self.objects[(kind, namespace or "", name)])
        except KeyError:
            raise NotFound(404, "NotFound", name) from None

    async def create(self, obj: dict[str, Any], **kw: Any) -> Any:
        self.calls.append("create")
        key = (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        if key in self.objects:
            raise AlreadyExists(409, "AlreadyExists", key[2])
        stored = {**obj, "metadata": {**obj["metadata"], "resourceVersion": "1"}}
        self.objects[key] = stored
        return dict(stored)

    async def patch(self, api_version: str, kind: str, name: str, patch: Any, ns: Any, **kw: Any):
        self.calls.append("patch")
        self.last_patch = patch
        obj = self.objects[(kind, ns or "", name)]
        obj.update({k: v for k, v in patch.items() if k != "metadata"})
        return dict(obj)

    async def update(self, obj: dict[str, Any], **kw: Any) -> Any:
        self.calls.append("update")
        self.last_update = obj
        self.last_update_kw = kw
        key = (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        self.objects[key] = dict(obj)
        return dict(obj)


def cm(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "namespace": "ns"},
        "data": data,
    }


async def test_ensure_without_a_reader_makes_one_request() -> None:
    client = FakeClient()
    assert (await ensure(client, cm({"k": "v"}))).created  # type: ignore[arg-type]
    again = await ensure(client, cm({"k": "w"}))  # type: ignore[arg-type]
    assert again == (False, None)
    assert client.calls == ["create", "create"]
    adopted = await ensure(client, cm({"k": "w"}), reader=client)  # type: ignore[arg-type]
    assert adopted.object is not None and adopted.object["data"] == {"k": "v"}
    assert client.calls[-2:] == ["create", "get"]


async def test_create_or_update_patches_only_differing_owned_fields() -> None:
    client = FakeClient()
    _, op = await create_or_update(client, cm({"k": "v"}), fields=("data",))  # type: ignore[arg-type]
    assert op == "created"
    _, op = await create_or_update(client, cm({"k": "v"}), fields=("data",))  # type: ignore[arg-type]
    assert op == "unchanged"
    assert client.calls == ["get", "create", "get"]
    obj, op = await create_or_update(client, cm({"k": "w"}), fields=("data",))  # type: ignore[arg-type]
    assert op == "updated"
    assert client.last_patch == {"data": {"k": "w"}, "metadata": {"resourceVersion": "1"}}
    assert obj["data"] == {"k": "w"}


async def test_create_or_update_with_update_puts_the_live_object_as_the_patch_would_leave_it() -> (
    None
):
    client = FakeClient()
    live = {
        **cm({"k": "v", "gone": "x", "other": "o"}),
        "metadata": {
            "name": "a",
            "namespace": "ns",
            "resourceVersion": "5",
            "labels": {"someone": "else"},
        },
        "binaryData": {"b": "AA=="},
    }
    client.objects[("ConfigMap", "ns", "a")] = live
    _, op = await create_or_update(
        client,  # type: ignore[arg-type]
        cm({"k": "v"}),
        current=live,
        fields=("data",),
        verb="update",
    )
    assert op == "unchanged" and client.calls == []
    _, op = await create_or_update(
        client,  # type: ignore[arg-type]
        cm({"k": "w", "gone": None}),
        current=live,
        fields=("data",),
        verb="update",
        field_manager="me",
    )
    assert op == "updated" and client.calls == ["update"]
    sent = client.last_update
    # what the merge patch would leave: "k" changed, "gone" removed, "other" (not desired's) kept
    assert sent["data"] == {"k": "w", "other": "o"}
    assert sent["metadata"]["resourceVersion"] == "5"  # pinned: a Conflict if it moved
    assert sent["metadata"]["labels"] == {"someone": "else"}  # not owned: kept
    assert sent["binaryData"] == {"b": "AA=="}
    assert client.last_update_kw == {"field_manager": "me"}
    assert live["data"] == {"k": "v", "gone": "x", "other": "o"}  # the cache's copy untouched


@pytest.mark.parametrize(
    ("have", "want", "expected"),
    [
        ({"a": 1, "defaulted": 2}, {"a": 1}, True),
        ({"a": 1}, {"a": 2}, False),
        ({"a": 1}, {"a": None}, False),
        ({}, {"a": None}, True),
        ([{"port": 80, "protocol": "TCP"}], [{"port": 80}], True),
        ([{"port": 80}], [{"port": 80}, {"port": 81}], False),
        (None, {"a": 1}, False),
        ("x", "x", True),
    ],
)
def test_covers(have: Any, want: Any, expected: bool) -> None:
    assert covers(have, want) is expected
