"""Kubernetes objects as plain dicts: the type, null-safe accessors, keys, owners, finalizers.

Objects are what the apiserver returns, decoded from JSON: any field may be missing or
``null``. The accessors here return an empty mapping instead (Go's zero value), so callers
write ``labels(obj).get("app")`` instead of ``((obj.get("metadata") or {}).get("labels") or
{}).get("app")``. Each accessor is exactly ``obj.get(key) or {}`` for JSON values: the
object's own dict when it is a non-empty one (read without copying), else a fresh empty dict
(also when the object holds an empty one). Treat the results as read-only.

The mutating helpers (:func:`add_finalizer`, :func:`remove_finalizer`,
:func:`set_owner_reference`) change the object in place and report whether they did, as
controller-runtime's ``controllerutil`` does.
"""

from collections.abc import Mapping, MutableMapping
from typing import Any, NamedTuple, TypeAlias

__all__ = [
    "Object",
    "ObjectKey",
    "add_finalizer",
    "annotations",
    "controller_of",
    "has_finalizer",
    "is_deleting",
    "key_of",
    "labels",
    "meta",
    "owner_reference",
    "owner_references",
    "remove_finalizer",
    "set_owner_reference",
    "spec",
    "status",
]

#: One Kubernetes object (or any JSON object inside one), as the apiserver returns it.
Object: TypeAlias = dict[str, Any]


class ObjectKey(NamedTuple):
    """``(namespace, name)`` of an object; ``namespace`` is ``""`` for cluster-scoped ones."""

    namespace: str
    name: str

    def __str__(self) -> str:
        """``namespace/name`` (``name`` alone when cluster-scoped), the informer store key."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def _field(obj: Mapping[str, Any], name: str) -> dict[str, Any]:
    # exactly ``obj.get(name) or {}`` for JSON values: an empty mapping is a fresh one too
    value = obj.get(name)
    return value if isinstance(value, dict) and value else {}


def meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``obj["metadata"]``, or ``{}`` when missing, ``null`` or not a mapping."""
    return _field(obj, "metadata")


def spec(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``obj["spec"]``, or ``{}`` when missing, ``null`` or not a mapping."""
    return _field(obj, "spec")


def status(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``obj["status"]``, or ``{}`` when missing, ``null`` or not a mapping."""
    return _field(obj, "status")


def labels(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata.labels``, or ``{}`` when any level is missing or ``null``."""
    return _field(meta(obj), "labels")


def annotations(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata.annotations``, or ``{}`` when any level is missing or ``null``."""
    return _field(meta(obj), "annotations")


def key_of(obj: Mapping[str, Any]) -> ObjectKey:
    """The object's :class:`ObjectKey` (missing namespace/name read as ``""``)."""
    m = meta(obj)
    return ObjectKey(str(m.get("namespace") or ""), str(m.get("name") or ""))


def is_deleting(obj: Mapping[str, Any]) -> bool:
    """True once the object has a ``metadata.deletionTimestamp``."""
    return bool(meta(obj).get("deletionTimestamp"))


# ----- owner references ---------------------------------------------------------------


def owner_references(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``metadata.ownerReferences`` (entries that are not mappings are skipped); ``[]``."""
    refs = meta(obj).get("ownerReferences")
    if not isinstance(refs, list):
        return []
    return [r for r in refs if isinstance(r, Mapping)]


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The owner reference with ``controller: true`` (``metav1.GetControllerOf``), or None."""
    for ref in owner_references(obj):
        if ref.get("controller") is True:
            return ref
    return None


def owner_reference(
    owner: Mapping[str, Any], *, controller: bool = True, block_owner_deletion: bool = True
) -> Object:
    """An owner reference to ``owner`` (its apiVersion, kind, name and uid).

    ``controller``/``blockOwnerDeletion`` are set (to true) only when asked for, as
    ``metav1.NewControllerRef`` does for both."""
    m = meta(owner)
    ref: Object = {
        "apiVersion": str(owner.get("apiVersion") or ""),
        "kind": str(owner.get("kind") or ""),
        "name": str(m.get("name") or ""),
        "uid": str(m.get("uid") or ""),
    }
    if controller:
        ref["controller"] = True
    if block_owner_deletion:
        ref["blockOwnerDeletion"] = True
    return ref


def _group(api_version: object) -> str:
    text = str(api_version or "")
    return text.split("/", 1)[0] if "/" in text else ""


def set_owner_reference(obj: MutableMapping[str, Any], ref: Mapping[str, Any]) -> bool:
    """Add ``ref`` to ``obj``'s owner references, replacing the one to the same owner
    (same API group, kind and name, as controller-runtime compares them); True when the
    references changed."""
    m = obj.get("metadata")
    if not isinstance(m, MutableMapping):
        m = obj["metadata"] = {}
    refs = [dict(r) for r in owner_references(obj)]
    for i, existing in enumerate(refs):
        if (
            _group(existing.get("apiVersion")) == _group(ref.get("apiVersion"))
            and existing.get("kind") == ref.get("kind")
            and existing.get("name") == ref.get("name")
        ):
            if existing == dict(ref):
                return False
            refs[i] = dict(ref)
            break
    else:
        refs.append(dict(ref))
    m["ownerReferences"] = refs
    return True


# ----- finalizers ---------------------------------------------------------------------


def _finalizers(obj: Mapping[str, Any]) -> list[str]:
    found = meta(obj).get("finalizers")
    return [str(f) for f in found] if isinstance(found, list) else []


def has_finalizer(obj: Mapping[str, Any], finalizer: str) -> bool:
    """True when ``metadata.finalizers`` holds ``finalizer``."""
    return finalizer in _finalizers(obj)


def add_finalizer(obj: MutableMapping[str, Any], finalizer: str) -> bool:
    """Append ``finalizer`` unless present; True when it was added."""
    current = _finalizers(obj)
    if finalizer in current:
        return False
    m = obj.get("metadata")
    if not isinstance(m, MutableMapping):
        m = obj["metadata"] = {}
    m["finalizers"] = [*current, finalizer]
    return True


def remove_finalizer(obj: MutableMapping[str, Any], finalizer: str) -> bool:
    """Remove every ``finalizer`` entry; True when one was removed."""
    current = _finalizers(obj)
    if finalizer not in current:
        return False
    m = obj["metadata"]
    m["finalizers"] = [f for f in current if f != finalizer]
    return True
