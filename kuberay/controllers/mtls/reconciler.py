"""The mTLS controller's reconcile (KubeRay ``RayClusterMTLSController.Reconcile``).

For a RayCluster with TLS enabled (gate ``RayClusterMTLS`` and ``tlsOptions.enabled``; gone,
deleting or ``spec.managedBy`` another controller: nothing), the named steps build the PKI of
:mod:`.builders` in order: ``self-signed issuer``, ``CA certificate``, ``CA issuer``, ``head
certificate``, ``worker certificate``. Issuers and the CA are created when missing and never
updated; a leaf Certificate is updated (Event ``MTLSCertificatesUpdated``) when its labels or
its DNS-name / IP-address sets differ from the desired ones -- the IPs follow the cluster's
live pods. Each Certificate's Secret, once cert-manager wrote it, gets a (non-controller) owner
reference to the Certificate so it goes with it.

The Secret holds the private key, so it is never read or written whole: its metadata is read
(``PartialObjectMetadata``) and the owner reference added with a JSON merge patch of
``metadata.ownerReferences`` (the full new list) guarded by ``metadata.resourceVersion``,
answered metadata-only too. Once a Secret is seen owned, it is not read again while its
Certificate keeps the same uid, ``secretName`` and issued ``status.revision`` (cert-manager
re-issues, so bumps the revision, when the Secret is deleted), for at most
:data:`OWNER_RECHECK` -- a steady-state pass sends no Secret request at all.

A failed step records Warning ``MTLSFailedToReconcile`` and the pass is retried with backoff.
Then readiness: both leaf Certificates ``Ready`` at their current generation -> Event
``MTLSPKIReady``, a Warning ``MTLSCertificateExpiringSoon`` per certificate (leaves and CA)
expiring within 24 h, requeue in 60 s; otherwise Event ``MTLSCertsNotReady``, requeue in 30 s.

Differences from KubeRay, none visible in the objects: existence is read from the informer
cache (KubeRay GETs, and creates on NotFound), and a Secret already owned by its Certificate is
not written again (KubeRay GETs and updates it whole on every pass); an owner reference removed
by hand comes back within :data:`OWNER_RECHECK` or at the next issuance. A 409 on an update or
on the Secret's patch requeues quietly.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs
import structlog

from kuberay.api.v1 import constants as c
from kuberay.api.v1.constants import API_VERSION, FIELD_MANAGER, KIND_RAYCLUSTER
from kuberay.api.v1.rules import is_tls_enabled, managed_elsewhere
from kuberay.controllers.builders.names import tls_cert_name
from kuberay.controllers.builders.owner import set_controller_reference
from kuberay.controllers.common.constants import DEFAULT_DOMAIN_NAME
from kuberay.controllers.mtls.builders import (
    CERT_MANAGER_API_VERSION,
    CERTIFICATE_KIND,
    ISSUER_KIND,
    build_ca_certificate,
    build_ca_issuer,
    build_leaf_certificate,
    build_selfsigned_issuer,
    ca_certificate_name,
    certificate_needs_update,
    certificate_not_after,
    is_certificate_ready,
    pod_ips,
)
from kuberay.kube import ApiError, Client, Conflict, Forbidden, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import NORMAL, WARNING, Cache, EventRecorder, Request, Result
from kuberay.reconcile.children import ensure
from kuberay.reconcile.clock import utc_now

log = structlog.get_logger("kuberay.mtls")

NOT_READY_REQUEUE = 30.0
PERIODIC_REQUEUE = 60.0
EXPIRY_WARNING = dt.timedelta(hours=24)
#: How long a Secret seen owned by its (unchanged) Certificate is trusted to stay so.
OWNER_RECHECK = dt.timedelta(minutes=10)


@attrs.define
class MTLSSettings:
    """Operator-level inputs: the gates, the cluster domain of the head Service FQDN
    (``CLUSTER_DOMAIN``), and the clock expiry is measured against."""

    features: dict[str, bool] = attrs.field(factory=dict)
    cluster_domain: str = DEFAULT_DOMAIN_NAME
    now: Callable[[], dt.datetime] = utc_now


@attrs.define
class Ctx:
    """Per-controller dependencies (not per reconcile)."""

    client: Client
    cache: Cache
    recorder: EventRecorder
    settings: MTLSSettings

    def event(self, cluster: Obj, etype: str, reason: str, message: str, action: str) -> None:
        """An Event regarding ``cluster``."""
        self.recorder.event(cluster, etype, reason, message, action)


class MTLSError(Exception):
    """A step failed; retried with backoff."""


class _StaleCache(Exception):
    """An update lost a race with a newer write: requeue without an error."""


def _go_list(values: list[str]) -> str:
    return "[" + " ".join(values) + "]"


@attrs.frozen
class _Owned:
    """A Secret seen owned by its Certificate: which Certificate state it was seen at
    (uid, ``secretName``, ``status.revision``) and until when that is trusted."""

    cert_uid: str
    secret_name: str
    revision: object
    until: dt.datetime


class MTLSReconciler:
    """Reconciles the cert-manager PKI of one RayCluster per call."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        self.steps: list[tuple[str, Callable[[Obj], Awaitable[None]]]] = [
            ("self-signed issuer", self.reconcile_selfsigned_issuer),
            ("CA certificate", self.reconcile_ca_certificate),
            ("CA issuer", self.reconcile_ca_issuer),
            ("head certificate", self.reconcile_head_certificate),
            ("worker certificate", self.reconcile_worker_certificate),
        ]
        # (namespace, Certificate name) -> the last time its Secret was seen owned by it.
        self._owned: dict[tuple[str, str], _Owned] = {}
        # set on the first 403 to a Secret patch (KubeRay's RBAC has no patch on secrets)
        self._secret_patch_forbidden = False

    async def reconcile(self, request: Request) -> Result:
        cluster = self.ctx.cache.get(API_VERSION, KIND_RAYCLUSTER, request.namespace, request.name)
        if cluster is None or k8s.meta(cluster).get("deletionTimestamp"):
            self._forget(request)
            return Result()
        managed_by = managed_elsewhere(cluster)
        if managed_by:
            log.info("skipping RayCluster managed by a custom controller", managed_by=managed_by)
            self._forget(request)
            return Result()
        if not is_tls_enabled(cluster, self.ctx.settings.features):
            self._forget(request)
            return Result()
        for step_name, step in self.steps:
            try:
                await step(cluster)
            except _StaleCache as exc:
                log.debug("stale object in the cache; requeued", step=step_name, detail=str(exc))
                return Result(requeue=True)
            except (ApiError, MTLSError) as exc:
                self.ctx.event(
                    cluster,
                    WARNING,
                    "MTLSFailedToReconcile",
                    f"Failed to reconcile mTLS {step_name}: {exc}",
                    "Reconcile",
                )
                raise MTLSError(f"{step_name}: {exc}") from exc
        if not self._leaves_ready(cluster):
            self.ctx.event(
                cluster,
                NORMAL,
                "MTLSCertsNotReady",
                "Waiting for cert-manager to issue mTLS certificates",
                "Reconcile",
            )
            return Result(requeue_after=NOT_READY_REQUEUE)
        self.ctx.event(
            cluster,
            NORMAL,
            "MTLSPKIReady",
            "mTLS PKI is ready: CA, head, and worker certificates issued",
            "Reconcile",
        )
        self._warn_expiring(cluster)
        return Result(requeue_after=PERIODIC_REQUEUE)

    # ----- steps ------------------------------------------------------------------------
    async def reconcile_selfsigned_issuer(self, cluster: Obj) -> None:
        """Create the self-signed Issuer if missing."""
        await self._create_if_missing(build_selfsigned_issuer(cluster))

    async def reconcile_ca_certificate(self, cluster: Obj) -> None:
        """Create the CA Certificate if missing; own its Secret once issued."""
        existing = await self._create_if_missing(build_ca_certificate(cluster))
        if existing is not None:
            await self._own_secret(existing)

    async def reconcile_ca_issuer(self, cluster: Obj) -> None:
        """Create the CA Issuer if missing."""
        await self._create_if_missing(build_ca_issuer(cluster))

    async def reconcile_head_certificate(self, cluster: Obj) -> None:
        """Create or update the head Certificate (head pod IPs)."""
        await self._reconcile_leaf(cluster, c.HEAD_NODE)

    async def reconcile_worker_certificate(self, cluster: Obj) -> None:
        """Create or update the worker Certificate (worker pod IPs)."""
        await self._reconcile_leaf(cluster, c.WORKER_NODE)

    # ----- helpers ----------------------------------------------------------------------
    def _cached(self, kind: str, namespace: str, name: str) -> Obj | None:
        return self.ctx.cache.get(CERT_MANAGER_API_VERSION, kind, namespace, name)

    async def _create_if_missing(self, desired: Obj) -> Obj | None:
        """The existing object (cache, else live after AlreadyExists), None once created."""
        meta = desired["metadata"]
        existing = self._cached(desired["kind"], meta["namespace"], meta["name"])
        if existing is not None:
            return existing
        done = await ensure(self.ctx.client, desired, field_manager=FIELD_MANAGER)
        if not done.created:
            try:
                live: Obj = await self.ctx.client.get(
                    CERT_MANAGER_API_VERSION, desired["kind"], meta["name"], meta["namespace"]
                )
            except NotFound:
                raise _StaleCache(f"{meta['name']} vanished while being created") from None
            return live
        log.info("created cert-manager object", kind=desired["kind"], object=meta["name"])
        return None

    async def _reconcile_leaf(self, cluster: Obj, node_type: str) -> None:
        meta = cluster["metadata"]
        pods = self.ctx.cache.list("v1", "Pod", meta["namespace"])
        ips = pod_ips(pods, node_type, meta["name"])
        desired = build_leaf_certificate(cluster, node_type, ips, self.ctx.settings.cluster_domain)
        existing = await self._create_if_missing(desired)
        if existing is None:
            return
        if certificate_needs_update(existing, desired):
            updated = copy.deepcopy(existing)
            updated.setdefault("apiVersion", CERT_MANAGER_API_VERSION)
            updated.setdefault("kind", CERTIFICATE_KIND)
            updated["metadata"]["labels"] = desired["metadata"]["labels"]
            updated["spec"] = desired["spec"]
            set_controller_reference(updated, cluster)
            log.info("updating certificate", certificate=desired["metadata"]["name"], ips=ips)
            self.ctx.event(
                cluster,
                NORMAL,
                "MTLSCertificatesUpdated",
                f"Updated {node_type} certificate SANs (IPs: {_go_list(ips)})",
                "Update",
            )
            try:
                existing = await self.ctx.client.update(updated, field_manager=FIELD_MANAGER)
            except Conflict as exc:
                raise _StaleCache(str(exc)) from exc
        await self._own_secret(existing)

    async def _own_secret(self, cert: Obj) -> None:
        """Give the Certificate's Secret an owner reference to it (if it exists yet).

        Reads the Secret metadata-only and adds the reference with a merge patch of
        ``metadata.ownerReferences`` at the read ``resourceVersion`` (a 409 raises
        :class:`_StaleCache`); no request at all while the Secret was seen owned by this
        Certificate at its current revision within :data:`OWNER_RECHECK`. Where RBAC forbids
        patching Secrets (KubeRay's ClusterRole grants only update), the whole Secret is read
        and PUT instead, from then on."""
        meta = cert["metadata"]
        namespace, cert_name, cert_uid = meta["namespace"], meta["name"], meta.get("uid")
        secret_name = k8s.spec(cert).get("secretName")
        if not secret_name or not cert_uid:
            return
        revision = k8s.status(cert).get("revision")
        key = (namespace, cert_name)
        now = self.ctx.settings.now()
        seen = self._owned.get(key)
        if (
            seen is not None
            and (seen.cert_uid, seen.secret_name, seen.revision)
            == (cert_uid, secret_name, revision)
            and now < seen.until
        ):
            return
        self._owned.pop(key, None)
        client = self.ctx.client
        try:
            secret = await client.get("v1", "Secret", secret_name, namespace, metadata_only=True)
        except NotFound:
            return
        smeta = k8s.meta(secret)
        refs = list(smeta.get("ownerReferences") or [])
        if not any(r.get("uid") == cert_uid for r in refs):
            refs = [r for r in refs if not _is_certificate_ref(r, cert_name)]
            refs.append(
                {
                    "apiVersion": CERT_MANAGER_API_VERSION,
                    "kind": CERTIFICATE_KIND,
                    "name": cert_name,
                    "uid": cert_uid,
                }
            )
            patch = {
                "metadata": {
                    "ownerReferences": refs,
                    "resourceVersion": smeta.get("resourceVersion"),
                }
            }
            try:
                if self._secret_patch_forbidden:
                    await self._put_owner_refs(secret_name, namespace, refs, smeta)
                else:
                    await client.patch(
                        "v1",
                        "Secret",
                        secret_name,
                        patch,
                        namespace,
                        patch_type="merge",
                        field_manager=FIELD_MANAGER,
                        metadata_only=True,
                    )
            except Forbidden:
                # KubeRay's ClusterRole grants update on Secrets but not patch: from now on,
                # read the Secret whole and PUT it (once per issued Secret, as KubeRay does)
                log.info(
                    "no RBAC permission to patch Secrets: owner references are written with "
                    "update (grant patch on secrets to keep Secret data off the wire)",
                    secret=secret_name,
                )
                self._secret_patch_forbidden = True
                try:
                    await self._put_owner_refs(secret_name, namespace, refs, smeta)
                except NotFound:
                    return
                except Conflict as exc:
                    raise _StaleCache(str(exc)) from exc
            except NotFound:
                return  # gone since the read: cert-manager will write it again
            except Conflict as exc:
                raise _StaleCache(str(exc)) from exc
            log.info("secret owned by its certificate", secret=secret_name, certificate=cert_name)
        self._owned[key] = _Owned(cert_uid, secret_name, revision, now + OWNER_RECHECK)

    async def _put_owner_refs(
        self, secret_name: str, namespace: str, refs: list[Obj], seen: Mapping[str, Any]
    ) -> None:
        """The fallback without ``patch`` RBAC: the whole Secret read and written back with
        ``refs`` at the ``resourceVersion`` of the metadata read (a 409 if it changed)."""
        client = self.ctx.client
        secret = await client.get("v1", "Secret", secret_name, namespace)
        meta = secret.setdefault("metadata", {})
        if meta.get("resourceVersion") != seen.get("resourceVersion"):
            raise Conflict(409, "Conflict", f"secret {secret_name} changed since it was read")
        meta["ownerReferences"] = refs
        secret.setdefault("apiVersion", "v1")
        secret.setdefault("kind", "Secret")
        await client.update(secret, field_manager=FIELD_MANAGER)

    def _forget(self, request: Request) -> None:
        """Drop what was remembered about the Secrets of a cluster no longer handled."""
        for cert_name in (
            ca_certificate_name(request.name),
            tls_cert_name(request.name, c.HEAD_NODE),
            tls_cert_name(request.name, c.WORKER_NODE),
        ):
            self._owned.pop((request.namespace, cert_name), None)

    def _leaves_ready(self, cluster: Obj) -> bool:
        meta = cluster["metadata"]
        for node_type in (c.HEAD_NODE, c.WORKER_NODE):
            cert = self._cached(
                CERTIFICATE_KIND, meta["namespace"], tls_cert_name(meta["name"], node_type)
            )
            if cert is None or not is_certificate_ready(cert):
                return False
        return True

    def _warn_expiring(self, cluster: Obj) -> None:
        meta = cluster["metadata"]
        now = self.ctx.settings.now()
        names = [
            tls_cert_name(meta["name"], c.HEAD_NODE),
            tls_cert_name(meta["name"], c.WORKER_NODE),
            ca_certificate_name(meta["name"]),
        ]
        for name in names:
            cert = self._cached(CERTIFICATE_KIND, meta["namespace"], name)
            not_after = certificate_not_after(cert) if cert is not None else None
            if not_after is None:
                continue
            remaining = not_after - now
            if remaining < EXPIRY_WARNING:
                hours = remaining.total_seconds() / 3600
                self.ctx.event(
                    cluster,
                    WARNING,
                    "MTLSCertificateExpiringSoon",
                    f"TLS certificate {name} expires in {hours:.1f} hours; Ray does not "
                    "hot-reload certs so a pod restart will be needed after renewal",
                    "Reconcile",
                )


def _is_certificate_ref(ref: Obj, cert_name: str) -> bool:
    """An owner reference to a cert-manager Certificate named ``cert_name`` (any uid)."""
    return (
        str(ref.get("apiVersion", "")).startswith("cert-manager.io/")
        and ref.get("kind") == CERTIFICATE_KIND
        and ref.get("name") == cert_name
    )


__all__ = ["ISSUER_KIND", "MTLSError", "MTLSReconciler", "MTLSSettings"]
