"""ConfigMap mirror: copy labelled ConfigMaps into every opted-in namespace.

A small controller of the kind a platform team writes with :mod:`kuberay.reconcile`.

What it does:

* A ConfigMap labelled ``mirror.example.com/source=true`` is a *source* (only in
  ``--source-namespace`` when that is set; in any namespace otherwise). Copies of
  sources outside that namespace are left alone, so instances with different source
  namespaces do not fight.
* Every namespace labelled ``mirror.example.com/enabled=true`` (and not being deleted,
  and not the source's own namespace) gets a *copy* with the same name, ``data`` and
  ``binaryData``. A copy carries the label ``mirror.example.com/copy-of=<ns>.<name>``
  (a hash when that exceeds the 63 characters a label value may have), the annotation
  ``mirror.example.com/copied-from=<ns>/<name>`` and the annotation
  ``mirror.example.com/source-resource-version`` with the source's resourceVersion it
  was last copied from.
* Copies follow the source's content. A copy is deleted when its source is deleted or
  loses its label, or when its namespace loses the label. A copy deleted or edited by
  hand is recreated or restored. A ConfigMap of the same name that is not our copy is
  never overwritten: that namespace is reported as failed.
* ConfigMaps have no status, so the status lives on the source as the annotation
  ``mirror.example.com/status`` (JSON ``{"copies": N, "namespaces": [...]}``, plus
  ``"failed": [...]`` when some namespace failed), written only when it changes;
  Events on the source: ``Mirrored`` (copies created, updated or deleted),
  ``MirrorFailed`` (one per failing namespace) and ``MirrorRemoved`` (the source lost
  its label and its copies were deleted).

How it is wired (see :func:`add_to_manager`):

* ``for_("v1", "ConfigMap")`` with a predicate that passes sources (and former
  sources, so a removed label is noticed) and drops updates that only touched our own
  status annotation.
* ``watches("v1", "ConfigMap", copy -> its source)``: ownerReferences cannot cross
  namespaces, so a copy names its source in labels/annotations and a map function
  turns a copy's change back into the source's request.
* ``watches("v1", "Namespace", namespace -> every source)`` when a namespace starts or
  stops being a target.
* Reads come from ``mgr.cache`` (an index on the copy label finds a source's copies);
  writes go through ``mgr.client``. :class:`~kuberay.reconcile.Expectations` keep a
  reconcile from acting on a cache that has not yet seen its own creates/deletes.
  A reconcile over an unchanged world makes no writes.

Run it::

    python -m examples.configmap_mirror --kubeconfig PATH \\
        [--source-namespace NS] [--metrics-bind-address :8080] \\
        [--health-probe-bind-address :8081] \\
        [--leader-elect --leader-election-namespace NS]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import hashlib
import json
import sys
from collections.abc import Sequence
from typing import Any

import structlog

from kuberay.kube import Conflict, KubeError, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.logging import configure_logging
from kuberay.reconcile import (
    NORMAL,
    WARNING,
    Expectations,
    LeaderElectionLost,
    Manager,
    ManagerOptions,
    Predicate,
    Request,
    Result,
    create_or_update,
    ensure,
)

log = structlog.get_logger("examples.configmap_mirror")

CONTROLLER_NAME = "configmap-mirror"
LEADER_ELECTION_ID = "configmap-mirror.mirror.example.com"

SOURCE_LABEL = "mirror.example.com/source"
ENABLED_LABEL = "mirror.example.com/enabled"
COPY_OF_LABEL = "mirror.example.com/copy-of"
COPIED_FROM_ANNOTATION = "mirror.example.com/copied-from"
SOURCE_RV_ANNOTATION = "mirror.example.com/source-resource-version"
STATUS_ANNOTATION = "mirror.example.com/status"
COPY_INDEX = "mirror.example.com/copy-of"

REASON_MIRRORED = "Mirrored"
REASON_FAILED = "MirrorFailed"
REASON_REMOVED = "MirrorRemoved"

# What a copy's update writes (a merge patch of the fields that differ).
MIRRORED_FIELDS = ("metadata.labels", "metadata.annotations", "data", "binaryData")

# How soon to look again while our own creates/deletes are not in the cache yet.
EXPECTATIONS_RECHECK = 2.0

_MAX_LABEL_VALUE = 63


# --------------------------------------------------------------------------- object helpers


def copy_label_value(namespace: str, name: str) -> str:
    """The ``copy-of`` label value for source ``namespace/name``.

    ``<ns>.<name>`` (a namespace has no dots, so the first dot splits it) when it fits
    a label value, else a hex digest (the annotation still names the source exactly).
    """
    value = f"{namespace}.{name}"
    if len(value) <= _MAX_LABEL_VALUE:
        return value
    return hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:40]


def is_copy(obj: Obj) -> bool:
    """True for a ConfigMap this controller created as a copy."""
    return COPY_OF_LABEL in k8s.labels(obj)


def source_of(copy_obj: Obj) -> Request | None:
    """The source a copy was made from, or None if ``copy_obj`` is not a copy."""
    if not is_copy(copy_obj):
        return None
    ref = k8s.annotations(copy_obj).get(COPIED_FROM_ANNOTATION, "")
    if "/" in ref:
        ns, name = ref.split("/", 1)
        return Request(ns, name)
    value = k8s.labels(copy_obj)[COPY_OF_LABEL]
    if "." in value:
        ns, name = value.split(".", 1)
        return Request(ns, name)
    return None


def is_target_namespace(ns_obj: Obj) -> bool:
    """True for a namespace that opted in and is not being deleted."""
    if k8s.labels(ns_obj).get(ENABLED_LABEL) != "true":
        return False
    if k8s.meta(ns_obj).get("deletionTimestamp"):
        return False
    return k8s.status(ns_obj).get("phase") != "Terminating"


def _content(obj: Obj) -> tuple[Any, ...]:
    """What a source update must change to be worth a reconcile (not our status)."""
    annotations = dict(k8s.annotations(obj))
    annotations.pop(STATUS_ANNOTATION, None)
    return (
        obj.get("data") or {},
        obj.get("binaryData") or {},
        k8s.labels(obj),
        annotations,
        k8s.meta(obj).get("deletionTimestamp"),
    )


def _encode_status(status: Obj) -> str:
    return json.dumps(status, sort_keys=True, separators=(",", ":"))


def _decode_status(raw: str | None) -> Obj | None:
    if not raw:
        return None
    try:
        decoded = json.loads(raw)
    except ValueError:
        return None
    return decoded if isinstance(decoded, dict) else None


# --------------------------------------------------------------------------- reconciler


class ConfigMapMirror:
    """Reconciles one source ConfigMap: its copies, its status annotation, its Events."""

    def __init__(self, mgr: Manager, *, source_namespace: str | None = None) -> None:
        self.client = mgr.client  # writes
        self.cache = mgr.cache  # reads
        self.recorder = mgr.event_recorder(CONTROLLER_NAME)
        self.source_namespace = source_namespace or None
        # source key "ns/name" -> copy namespaces created/deleted but not yet in the cache
        self.expectations = Expectations(ttl=60.0)

    # ----- what counts as what -------------------------------------------
    def in_scope(self, namespace: str) -> bool:
        """Whether sources in ``namespace`` are this instance's business."""
        return self.source_namespace is None or namespace == self.source_namespace

    def is_source(self, obj: Obj) -> bool:
        """A ConfigMap labelled as a source (in the source namespace, if one is set)."""
        if k8s.labels(obj).get(SOURCE_LABEL) != "true" or is_copy(obj):
            return False
        return self.in_scope(k8s.meta(obj).get("namespace") or "")

    def source_predicate(self) -> Predicate:
        """Sources and former sources; drops updates that only changed our status."""

        def update(old: Obj, new: Obj) -> bool:
            if not (self.is_source(old) or self.is_source(new)):
                return False
            if k8s.meta(old).get("resourceVersion") == k8s.meta(new).get("resourceVersion"):
                return True  # a resync: let it through
            return _content(old) != _content(new)

        return Predicate(
            create=self.is_source, update=update, delete=self.is_source, generic=self.is_source
        )

    @staticmethod
    def copy_predicate() -> Predicate:
        """Copies (and former copies, so a stripped label is noticed)."""
        return Predicate(
            create=is_copy,
            update=lambda old, new: is_copy(old) or is_copy(new),
            delete=is_copy,
            generic=is_copy,
        )

    @staticmethod
    def namespace_predicate() -> Predicate:
        """Namespaces that become, stop being, or were targets."""
        return Predicate(
            create=is_target_namespace,
            update=lambda old, new: is_target_namespace(old) != is_target_namespace(new),
            delete=is_target_namespace,
            generic=is_target_namespace,
        )

    # ----- map functions (run in the informer's event handlers) ----------
    def map_copy(self, obj: Obj) -> list[Request]:
        """A copy's change -> its source's request; also settles expectations."""
        req = source_of(obj)
        if req is None or not self.in_scope(req.namespace):
            return []  # copies of other instances' sources are theirs to manage
        meta = k8s.meta(obj)
        ns = meta.get("namespace") or ""
        if meta.get("name") == req.name:
            # The informer updated its cache before calling us: observe what it holds now.
            key = str(req)
            if self.cache.get("v1", "ConfigMap", ns, req.name) is None:
                self.expectations.deletion_observed(key, ns)
            else:
                self.expectations.creation_observed(key, ns)
        return [req]

    def map_namespace(self, obj: Obj) -> list[Request]:
        """A namespace (un)labelled -> every source."""
        return [
            Request(k8s.meta(cm).get("namespace") or "", k8s.meta(cm)["name"])
            for cm in self.cache.list(
                "v1", "ConfigMap", self.source_namespace, labels={SOURCE_LABEL: "true"}
            )
            if self.is_source(cm)
        ]

    # ----- reconcile -----------------------------------------------------
    def target_namespaces(self, source_ns: str) -> list[str]:
        """Names of the namespaces that should hold a copy, sorted."""
        return sorted(
            name
            for ns in self.cache.list("v1", "Namespace", labels={ENABLED_LABEL: "true"})
            if is_target_namespace(ns) and (name := k8s.meta(ns)["name"]) != source_ns
        )

    def copies_of(self, req: Request) -> dict[str, Obj]:
        """Our copies of ``req`` in the cache, by namespace."""
        found = self.cache.list(
            "v1", "ConfigMap", index=(COPY_INDEX, copy_label_value(req.namespace, req.name))
        )
        return {
            k8s.meta(c)["namespace"]: c
            for c in found
            if k8s.meta(c).get("name") == req.name and source_of(c) == req
        }

    async def reconcile(self, req: Request) -> Result:
        if not self.in_scope(req.namespace):
            return Result()
        key = str(req)
        if not self.expectations.satisfied(key):
            adds, deletes = self.expectations.pending(key)
            log.debug("waiting for the cache", creates=sorted(adds), deletes=sorted(deletes))
            return Result(requeue_after=EXPECTATIONS_RECHECK)
        source = self.cache.get("v1", "ConfigMap", req.namespace, req.name)
        if (
            source is None
            or not self.is_source(source)
            or k8s.meta(source).get("deletionTimestamp")
        ):
            return await self._remove(req, source)

        targets = self.target_namespaces(req.namespace)
        existing = self.copies_of(req)
        to_create: list[str] = []
        to_update: list[Obj] = []
        failed: dict[str, str] = {}
        in_sync: list[str] = []
        for ns in targets:
            current = existing.get(ns)
            if current is None:
                other = self.cache.get("v1", "ConfigMap", ns, req.name)
                if other is None:
                    to_create.append(ns)
                else:
                    failed[ns] = _not_ours(other)
            elif self._in_sync(current, source, req):
                in_sync.append(ns)
            else:
                to_update.append(current)
        to_delete = [c for ns, c in sorted(existing.items()) if ns not in targets]

        created: list[str] = []
        updated: list[str] = []
        deleted: list[str] = []
        retry = False
        if to_create:
            self.expectations.expect_creations(key, to_create)
        for ns in to_create:
            try:
                done = await ensure(self.client, self._desired(source, ns, req))
            except KubeError as exc:
                self.expectations.lower(key, ns)
                failed[ns] = f"create: {exc}"
                continue
            if done.created:
                created.append(ns)
            else:
                self.expectations.lower(key, ns)
                retry = True  # the cache is behind; look again
        for current in to_update:
            ns = k8s.meta(current)["namespace"]
            try:
                _, outcome = await create_or_update(
                    self.client,
                    self._wanted(current, source, req),
                    current=current,
                    fields=MIRRORED_FIELDS,
                )
                if outcome == "updated":
                    updated.append(ns)
            except (Conflict, NotFound):
                retry = True  # changed or deleted meanwhile; its event brings us back
            except KubeError as exc:
                failed[ns] = f"update: {exc}"
        retry = await self._delete_copies(key, to_delete, deleted) or retry

        mirrored = sorted([*in_sync, *created, *updated])
        status: Obj = {"copies": len(mirrored), "namespaces": mirrored}
        if failed:
            status["failed"] = sorted(failed)
        await self._write_status(source, status)
        if created or updated or deleted:
            self.recorder.event(
                source,
                NORMAL,
                REASON_MIRRORED,
                f"mirrored to {len(mirrored)} namespace(s): created {len(created)}, "
                f"updated {len(updated)}, deleted {len(deleted)}",
            )
        for ns, why in sorted(failed.items()):
            self.recorder.event(source, WARNING, REASON_FAILED, f"namespace {ns}: {why}")
        if created or updated or deleted or failed:
            log.info(
                "mirrored",
                created=created,
                updated=updated,
                deleted=deleted,
                failed=sorted(failed),
            )
        if failed or retry:
            return Result(requeue=True)  # backoff; failures are not fixed by events of ours
        return Result()

    async def _remove(self, req: Request, source: Obj | None) -> Result:
        """The source is gone or no longer a source: delete its copies, clear its status."""
        key = str(req)
        deleted: list[str] = []
        copies = [c for _, c in sorted(self.copies_of(req).items())]
        retry = await self._delete_copies(key, copies, deleted)
        if source is not None and not k8s.meta(source).get("deletionTimestamp"):
            if STATUS_ANNOTATION in k8s.annotations(source):
                await self.client.patch(
                    "v1",
                    "ConfigMap",
                    req.name,
                    {"metadata": {"annotations": {STATUS_ANNOTATION: None}}},
                    req.namespace,
                )
            if deleted:
                self.recorder.event(
                    source,
                    NORMAL,
                    REASON_REMOVED,
                    f"no longer a source: deleted {len(deleted)} copies",
                )
        if deleted:
            log.info("copies deleted", deleted=deleted, source_present=source is not None)
        return Result(requeue=True) if retry else Result()

    async def _delete_copies(self, key: str, copies: list[Obj], deleted: list[str]) -> bool:
        """Delete ``copies`` (pinned to their uid), appending their namespaces to
        ``deleted``; True if something must be retried."""
        if not copies:
            return False
        retry = False
        self.expectations.expect_deletions(key, [k8s.meta(c)["namespace"] for c in copies])
        for c in copies:
            meta = k8s.meta(c)
            try:
                await self.client.delete(
                    "v1",
                    "ConfigMap",
                    meta["name"],
                    meta["namespace"],
                    preconditions={"uid": meta["uid"]},
                )
                deleted.append(meta["namespace"])
            except NotFound:
                self.expectations.lower(key, meta["namespace"])
            except KubeError as exc:
                self.expectations.lower(key, meta["namespace"])
                log.warning("could not delete copy", namespace=meta["namespace"], error=str(exc))
                retry = True
        return retry

    async def _write_status(self, source: Obj, status: Obj) -> None:
        """Patch the status annotation onto the source, only if it changed."""
        if _decode_status(k8s.annotations(source).get(STATUS_ANNOTATION)) == status:
            return
        meta = k8s.meta(source)
        await self.client.patch(
            "v1",
            "ConfigMap",
            meta["name"],
            {"metadata": {"annotations": {STATUS_ANNOTATION: _encode_status(status)}}},
            meta["namespace"],
        )

    # ----- desired state -------------------------------------------------
    @staticmethod
    def _in_sync(current: Obj, source: Obj, req: Request) -> bool:
        labels = k8s.labels(current)
        annotations = k8s.annotations(current)
        return (
            (current.get("data") or {}) == (source.get("data") or {})
            and (current.get("binaryData") or {}) == (source.get("binaryData") or {})
            and labels.get(COPY_OF_LABEL) == copy_label_value(req.namespace, req.name)
            and annotations.get(COPIED_FROM_ANNOTATION) == str(req)
            and SOURCE_RV_ANNOTATION in annotations
        )

    @staticmethod
    def _desired(source: Obj, namespace: str, req: Request) -> Obj:
        obj: Obj = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": req.name,
                "namespace": namespace,
                "labels": {COPY_OF_LABEL: copy_label_value(req.namespace, req.name)},
                "annotations": {
                    COPIED_FROM_ANNOTATION: str(req),
                    SOURCE_RV_ANNOTATION: str(k8s.meta(source).get("resourceVersion", "")),
                },
            },
        }
        for field in ("data", "binaryData"):
            if source.get(field):
                obj[field] = copy.deepcopy(source[field])
        return obj

    @staticmethod
    def _wanted(current: Obj, source: Obj, req: Request) -> Obj:
        """What :func:`~kuberay.reconcile.create_or_update` makes the copy ``current`` hold
        at :data:`MIRRORED_FIELDS`: the source's ``data``/``binaryData`` (a key only the copy
        holds is ``None``: removed), our label and annotations (other labels and annotations
        are left alone)."""
        obj = ConfigMapMirror._desired(source, k8s.meta(current)["namespace"], req)
        for field in ("data", "binaryData"):
            want: dict[str, Any] = dict.fromkeys(current.get(field) or {})
            want.update(source.get(field) or {})
            obj[field] = want
        return obj


def _not_ours(obj: Obj) -> str:
    ref = source_of(obj)
    if ref is not None:
        return f"a ConfigMap of this name is already a copy of {ref}"
    return "a ConfigMap of this name exists and is not a mirror copy"


# --------------------------------------------------------------------------- wiring


def _copy_index(obj: Obj) -> list[str]:
    value = k8s.labels(obj).get(COPY_OF_LABEL)
    return [value] if value else []


def add_to_manager(
    mgr: Manager, *, source_namespace: str | None = None, max_concurrent_reconciles: int = 1
) -> ConfigMapMirror:
    """Create the mirror controller on ``mgr`` and return its reconciler."""
    mirror = ConfigMapMirror(mgr, source_namespace=source_namespace)
    mgr.cache.add_index("v1", "ConfigMap", COPY_INDEX, _copy_index)
    (
        mgr.controller(CONTROLLER_NAME)
        .for_("v1", "ConfigMap", predicates=[mirror.source_predicate()])
        .watches("v1", "ConfigMap", mirror.map_copy, predicates=[mirror.copy_predicate()])
        .watches("v1", "Namespace", mirror.map_namespace, predicates=[mirror.namespace_predicate()])
        .with_options(max_concurrent_reconciles=max_concurrent_reconciles)
        .complete(mirror)
    )
    return mirror


# --------------------------------------------------------------------------- CLI


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m examples.configmap_mirror",
        description="Mirror ConfigMaps labelled mirror.example.com/source=true into every "
        "namespace labelled mirror.example.com/enabled=true.",
    )
    parser.add_argument("--kubeconfig", help="kubeconfig path (default: $KUBECONFIG, in-cluster)")
    parser.add_argument(
        "--source-namespace",
        default="",
        help="only mirror sources in this namespace (default: any)",
    )
    parser.add_argument("--metrics-bind-address", default=":8080", help='"0" disables')
    parser.add_argument("--health-probe-bind-address", default=":8081", help='"0" disables')
    parser.add_argument("--leader-elect", action="store_true", help="run with leader election")
    parser.add_argument(
        "--leader-election-namespace",
        default="",
        help="namespace of the Lease (default: the pod's own namespace)",
    )
    parser.add_argument("--max-concurrent-reconciles", type=int, default=1)
    parser.add_argument("--log-encoder", choices=("json", "console"), default="console")
    parser.add_argument("--log-level", default="info")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> int:
    """Run the controller until SIGTERM/SIGINT; the process exit code."""
    mgr = await Manager.from_kubeconfig(
        args.kubeconfig,
        ManagerOptions(
            leader_election=args.leader_elect,
            leader_election_id=LEADER_ELECTION_ID,
            leader_election_namespace=args.leader_election_namespace or None,
            metrics_bind_address=args.metrics_bind_address,
            health_probe_bind_address=args.health_probe_bind_address,
        ),
    )
    try:
        add_to_manager(
            mgr,
            source_namespace=args.source_namespace or None,
            max_concurrent_reconciles=args.max_concurrent_reconciles,
        )
        log.info(
            "starting configmap mirror",
            source_namespace=args.source_namespace or "*",
            leader_elect=args.leader_elect,
        )
        await mgr.run()
    except LeaderElectionLost as exc:
        log.error("leader election lost; exiting", error=str(exc))
        return 1
    finally:
        await mgr.client.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging(args.log_encoder, level=args.log_level)
    try:
        return asyncio.run(run(args))
    except (ValueError, KubeError) as exc:
        log.error("cannot start", error=str(exc))
        return 2


if __name__ == "__main__":
    sys.exit(main())
