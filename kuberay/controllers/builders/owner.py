"""Controller owner references to a RayCluster (controller-runtime ``SetControllerReference``)."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.controllers.common.objects import as_list, metadata

__all__ = ["AlreadyOwnedError", "controller_owner_reference", "set_controller_reference"]


class AlreadyOwnedError(ValueError):
    """The object already has a different controller owner."""


def controller_owner_reference(
    owner: Mapping[str, Any], kind: str = c.KIND_RAYCLUSTER
) -> dict[str, Any]:
    """``{apiVersion: ray.io/v1, kind, name, uid, controller: true, blockOwnerDeletion: true}``."""
    meta = metadata(owner)
    return {
        "apiVersion": c.API_VERSION,
        "kind": kind,
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _group(api_version: object) -> str:
    text = str(api_version or "")
    return text.split("/", 1)[0] if "/" in text else ""


def set_controller_reference(
    obj: MutableMapping[str, Any], owner: Mapping[str, Any], kind: str = c.KIND_RAYCLUSTER
) -> None:
    """Add (or replace) ``owner`` as the controller reference of ``obj`` in place."""
    ref = controller_owner_reference(owner, kind)
    meta = obj.setdefault("metadata", {})
    refs = [dict(r) for r in as_list(meta.get("ownerReferences"))]
    for existing in refs:
        same = (
            _group(existing.get("apiVersion")) == _group(ref["apiVersion"])
            and existing.get("kind") == ref["kind"]
            and existing.get("name") == ref["name"]
        )
        if existing.get("controller") is True and not same:
            raise AlreadyOwnedError(
                f"object is already owned by another {existing.get('kind')} controller "
                f"{existing.get('name')}"
            )
    for i, existing in enumerate(refs):
        if (
            _group(existing.get("apiVersion")) == _group(ref["apiVersion"])
            and existing.get("kind") == ref["kind"]
            and existing.get("name") == ref["name"]
        ):
            refs[i] = ref
            break
    else:
        refs.append(ref)
    meta["ownerReferences"] = refs
