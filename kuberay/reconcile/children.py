"""Writing a controller's children: create-or-adopt and create-or-update.

controller-runtime's ``controllerutil.CreateOrUpdate`` adapted to how this project writes:

* :func:`ensure` creates an object and, when its name is taken (``AlreadyExists``: the
  cache had not seen it yet, or does not hold that kind), reads and returns the existing
  object so the caller can adopt it or refuse it (an ownership check is the caller's).
  One create, plus one get only after ``AlreadyExists``; no Event, no log: the caller
  knows its Event reasons.
* :func:`create_or_update` creates the object when there is none, else writes only the
  owned fields whose value differs, and writes nothing when they are equal -- so a
  second reconcile over an unchanged world makes zero writes. It writes with a merge patch,
  or with an update (PUT) for kinds the controller's role may ``update`` but not ``patch``
  (KubeRay's ClusterRole on Gateway API objects).

Catching ``AlreadyExists`` to create-or-adopt lives here and nowhere else.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from kuberay.kube.errors import AlreadyExists, NotFound
from kuberay.kube.interfaces import Reader, ReadWriter, Writer
from kuberay.kube.objects import Object, key_of, meta

__all__ = ["Ensured", "Operation", "WriteVerb", "covers", "create_or_update", "ensure"]

#: What :func:`create_or_update` did (controller-runtime's ``OperationResult``).
Operation = Literal["created", "updated", "unchanged"]

#: How :func:`create_or_update` writes a difference: a merge patch of the differing fields,
#: or an update (PUT) of the live object with that patch applied.
WriteVerb = Literal["patch", "update"]


class Ensured(NamedTuple):
    """The answer of :func:`ensure`.

    ``created`` is True when this call created the object; ``object`` is then what the
    apiserver stored. Otherwise ``object`` is the existing object as read live (labelled
    with the desired ``apiVersion``/``kind``), or None when the caller asked not to read it.
    """

    created: bool
    object: Object | None


async def ensure(
    client: Writer,
    obj: Object,
    *,
    field_manager: str | None = None,
    reader: Reader | None = None,
) -> Ensured:
    """Create ``obj``; on ``AlreadyExists`` read the existing one with ``reader`` (create-or-adopt).

    Without a ``reader`` the existing object is not read (``Ensured(False, None)``): for
    callers to whom an existing object is as good as a created one. Raises ``NotFound``
    when the existing object was deleted between the create and the read; any other error
    of the create or the read propagates unchanged."""
    try:
        if field_manager is None:
            created = await client.create(obj)
        else:
            created = await client.create(obj, field_manager=field_manager)
    except AlreadyExists:
        if reader is None:
            return Ensured(False, None)
        key = key_of(obj)
        existing = await reader.get(
            str(obj["apiVersion"]), str(obj["kind"]), key.name, key.namespace or None
        )
        existing.setdefault("apiVersion", obj["apiVersion"])
        existing.setdefault("kind", obj["kind"])
        return Ensured(False, existing)
    return Ensured(True, created)


def covers(have: Any, want: Any) -> bool:
    """True when ``have`` already holds everything ``want`` says: mappings key by key (a
    ``None`` in ``want`` means the key must be absent or null; keys only ``have`` holds, such as
    apiserver defaults, do not matter), lists of the same length element by element, other
    values by equality. This is what a merge patch of ``want`` would change nothing of, also
    inside lists the apiserver defaults fields of (a Service's ports, a Pod's containers)."""
    if isinstance(want, Mapping):
        if not isinstance(have, Mapping):
            return False
        for key, value in want.items():
            if value is None:
                if have.get(key) is not None:
                    return False
            elif key not in have or not covers(have[key], value):
                return False
        return True
    if isinstance(want, list):
        return (
            isinstance(have, list)
            and len(have) == len(want)
            and all(covers(h, w) for h, w in zip(have, want, strict=True))
        )
    return bool(have == want)


_MISSING = object()


def _at(obj: Mapping[str, Any], path: str) -> Any:
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _put(target: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[last] = copy.deepcopy(value)


def _merged(target: Any, patch: Any) -> Any:
    """``target`` with the JSON merge patch ``patch`` applied (RFC 7386: a mapping merges key
    by key, None removes a key, anything else -- lists included -- replaces), so an update
    writes what the apiserver would make of the patch."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    merged = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = _merged(merged.get(key), value)
    return merged


async def create_or_update(
    client: ReadWriter,
    desired: Object,
    *,
    current: Mapping[str, Any] | None = None,
    read: bool = True,
    fields: Sequence[str] = ("spec",),
    field_manager: str | None = None,
    verb: WriteVerb = "patch",
) -> tuple[Object, Operation]:
    """Make the object hold ``desired``'s values at the owned ``fields`` (dotted paths such
    as ``"spec"``, ``"data"`` or ``"metadata.labels"``).

    ``current`` is the object as the caller's cache holds it; when None and ``read``, it is
    read live (``NotFound``: there is none). No object: :func:`ensure` creates ``desired``
    (and one that appeared meanwhile is compared like a current one). Otherwise each owned
    field present in ``desired`` is compared with :func:`covers`, so fields the apiserver
    defaulted are no difference, and a ``None`` in ``desired`` asks for a key's removal. The
    differing fields travel in one merge patch (lists in it replace the whole list) carrying
    the current ``resourceVersion`` (``Conflict`` when the object changed since it was
    read); covered fields mean no request at all.

    ``verb="update"`` is for roles that may ``update`` a kind but not ``patch`` it: the same
    merge patch is applied here to the live object and the result written as one update
    (PUT) at the live ``resourceVersion`` (``Conflict`` likewise), so the object ends as the
    patch would leave it. The live object is written back whole: pass one read from the
    apiserver or from a cache that keeps every field.

    Returns the object as the apiserver holds it and what was done."""
    api_version, kind = str(desired["apiVersion"]), str(desired["kind"])
    key = key_of(desired)
    namespace = key.namespace or None
    live: Mapping[str, Any] | None = current
    if live is None and read:
        try:
            live = await client.get(api_version, kind, key.name, namespace)
        except NotFound:
            live = None
    if live is None:
        done = await ensure(client, desired, field_manager=field_manager, reader=client)
        assert done.object is not None
        if done.created:
            return done.object, "created"
        live = done.object
    patch: dict[str, Any] = {}
    for path in fields:
        want = _at(desired, path)
        if want is _MISSING:
            continue
        have = _at(live, path)
        if not covers(None if have is _MISSING else have, want):
            _put(patch, path, want)
    if not patch:
        return dict(live), "unchanged"
    if verb == "update":
        replaced = _merged(live, patch)  # new mappings along the patch: ``live`` is untouched
        replaced["apiVersion"], replaced["kind"] = api_version, kind
        if field_manager is None:
            return await client.update(replaced), "updated"
        return await client.update(replaced, field_manager=field_manager), "updated"
    version = meta(live).get("resourceVersion")
    if version:
        patch.setdefault("metadata", {})["resourceVersion"] = version
    written = await client.patch(
        api_version, kind, key.name, patch, namespace, field_manager=field_manager
    )
    return written, "updated"
