"""The incremental upgrade's I/O for one pass (KubeRay ``reconcileRollbackState``,
``reconcilePerClusterServeService``, ``reconcileGateway``, ``reconcileHTTPRoute`` and
``reconcileServeTargetCapacity``); the decisions are ``incremental_plan``'s.

* Rollback state: while ``UpgradeInProgress`` is True, ``RollbackInProgress`` follows the
  goal hash (``rollback_wanted``) with KubeRay's reason and messages.
* ``<cluster>-serve-svc`` for the active and pending clusters: created when missing, owned by
  the RayCluster (garbage-collected with it), never updated.
* Gateway ``<rs>-gateway`` and HTTPRoute ``<rs>-httproute``: created, or their spec replaced
  when it differs (``gateway.apply_*``); read directly from the apiserver (the operator does
  not watch Gateway API kinds, so it also runs where they are not installed). No HTTPRoute
  without an active cluster.
* ``target_capacity``: sent through the dashboard poller (never awaited here) with the Serve
  config last applied to that cluster (when this process does not remember it, e.g. after a
  restart: the config Serve reports it runs, see ``running``; else ``serveConfigV2`` as
  KubeRay), only while the gateway reports the HTTPRoute's current
  generation (beyond KubeRay; a lowered capacity also waits ``ROUTE_SETTLE_SECONDS`` after
  that cluster's weight changed); a value counts in the status only once Serve accepted
  it (:attr:`Routing.confirmed`). A value is sent once per change of the wanted value.
* Traffic moves to the pending cluster once its Serve settled, or once a due step waited for
  that ``settle.hold_bound`` seconds (beyond KubeRay; then a Warning names what had not
  settled); when the wait began is kept in memory per RayService and pending cluster.
* An abandoned upgrade (``ray.io/upgrade-timeout``) whose pending cluster is still named runs
  ``abandon.plan_abandon`` instead of the stepping plan: weights held until the active
  cluster's Serve reports ``target_capacity`` 100, then 100/0, then the pending cluster retired.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs
import structlog

from kuberay.api.v1 import constants as C
from kuberay.api.v1.constants import FIELD_MANAGER
from kuberay.controllers.builders.owner import set_controller_reference
from kuberay.controllers.builders.service import build_serve_service_for_ray_service
from kuberay.controllers.common.objects import as_map, as_str
from kuberay.controllers.dashboard import DashboardClient, ServeDetails
from kuberay.controllers.dashboard.target import DashboardTarget
from kuberay.controllers.rayservice import status as S
from kuberay.controllers.rayservice.abandon import (
    AbandonWorld,
    ReportedCapacity,
    abandoning,
    capacity_reached,
    keep_pending_on_abandon,
    plan_abandon,
    replicas_starting,
    reported_capacity,
)
from kuberay.controllers.rayservice.cluster_builder import goal_cluster_hash, serve_config_payload
from kuberay.controllers.rayservice.context import Ctx, ObjectKey, owner_key
from kuberay.controllers.rayservice.gateway import Action, apply_gateway, apply_http_route
from kuberay.controllers.rayservice.gateway_builder import (
    GATEWAY_API_VERSION,
    build_gateway,
    build_http_route,
    gateway_name,
    http_route_name,
    is_gateway_ready,
    is_http_route_current,
    is_http_route_ready,
)
from kuberay.controllers.rayservice.incremental import ClusterShare, StepOptions, step_options
from kuberay.controllers.rayservice.incremental_plan import (
    IncrementalPlan,
    IncrementalWorld,
    plan_incremental_step,
    rollback_wanted,
)
from kuberay.controllers.rayservice.incremental_status import routing_problem, share_of
from kuberay.controllers.rayservice.running import running_serve_config
from kuberay.controllers.rayservice.serve import ServeResult
from kuberay.controllers.rayservice.settle import (
    SettleGate,
    SettleWorld,
    hold_bound,
    settle_gate,
    unsettled,
)
from kuberay.kube import ApiError, NotFound
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import NORMAL, WARNING, RequeueError
from kuberay.reconcile.children import ensure
from kuberay.reconcile.clock import parse_time

log = structlog.get_logger("kuberay.rayservice")

__all__ = ["Routing", "TrafficReconciler", "gateway_api_missing"]

DESIRED_SPEC_CHANGED = "DesiredClusterSpecChanged"

ROUTE_SETTLE_SECONDS = 5.0
"""How long a cluster's HTTPRoute weight must have stood before its ``target_capacity`` is
lowered: a gateway reports a route as observed before its data plane has switched (Traefik
applies provider changes up to 2 s later), and requests still in flight to the cluster need
its replicas."""


async def gateway_api_missing(ctx: Ctx) -> str | None:
    """The Gateway API kinds this build needs that the apiserver does not serve, in words
    (None: both Gateway and HTTPRoute are served)."""
    missing = []
    for kind in ("Gateway", "HTTPRoute"):
        try:
            await ctx.client.resource(GATEWAY_API_VERSION, kind)
        except NotFound:
            missing.append(kind)
    if not missing:
        return None
    return (
        "spec.upgradeStrategy.type NewClusterWithIncrementalUpgrade needs the Gateway API: "
        f"the apiserver does not serve {' and '.join(missing)} of {GATEWAY_API_VERSION} "
        "(install the Gateway API CRDs, or use upgradeStrategy.type NewCluster)"
    )


@attrs.define
class Routing:
    """What the pass did with traffic: the HTTPRoute weights written (None: no route), the
    plan (None without both clusters), whether Gateway and HTTPRoute are ready and if not
    why, the capacities Serve accepted this pass by role, (``abandon``) whether an
    abandoned upgrade is restoring the active cluster and whether its pending cluster is
    dropped this pass, and what the active cluster's Serve reported of its capacity."""

    weights: tuple[int, int] | None = None
    plan: IncrementalPlan | None = None
    ready: bool = False
    problem: str | None = None
    confirmed: dict[str, int] = attrs.field(factory=dict)
    abandoning: bool = False
    retire: bool = False
    reported: ReportedCapacity | None = None


@attrs.define
class _Capacity:
    value: int
    seq: int


class TrafficReconciler:
    """Per-controller state of the incremental upgrade: the ``target_capacity`` being sent
    per (RayService, cluster)."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        self._sending: dict[tuple[ObjectKey, str], _Capacity] = {}
        self._seq = 0
        #: (RayService, pending cluster) -> when a due traffic step began waiting for Serve
        self._held_since: dict[tuple[ObjectKey, str], datetime] = {}

    def forget(self, owner: ObjectKey, keep: set[str] | None = None) -> None:
        """Drop what is being sent to ``owner``'s clusters not in ``keep`` (all if None),
        and when their traffic steps began waiting."""
        for memory in (self._sending, self._held_since):
            for key in [k for k in memory if k[0] == owner]:
                if keep is None or key[1] not in keep:
                    del memory[key]

    # ----- rollback -----------------------------------------------------------------------
    def rollback_state(self, rs: Obj, active: Obj | None, pending: Obj | None, now: str) -> None:
        """KubeRay ``reconcileRollbackState`` (only while ``UpgradeInProgress`` is True)."""
        if not S.is_true(rs, S.UPGRADE_IN_PROGRESS):
            return
        if active is None:
            self.ctx.event(
                rs,
                WARNING,
                "RollbackImpossible",
                "Active cluster not found, rollback cannot be initiated",
                "Reconcile",
            )
            return
        if pending is None:
            return
        goal = goal_cluster_hash(rs)
        key = C.HASH_WITHOUT_REPLICAS_AND_WORKERS_TO_DELETE_KEY
        active_hash = as_str(as_map(active["metadata"].get("annotations")).get(key))
        pending_hash = as_str(as_map(pending["metadata"].get("annotations")).get(key))
        rolling = S.is_true(rs, S.ROLLBACK_IN_PROGRESS)
        if not rollback_wanted(goal, active_hash, pending_hash):
            if rolling:
                log.info("goal matches the pending cluster again: rollback cancelled")
                S.conditions_of(rs)[:] = [
                    c for c in S.conditions_of(rs) if c.get("type") != S.ROLLBACK_IN_PROGRESS
                ]
            return
        if rolling:
            return
        message = (
            "Goal state reverted to original cluster, rolling back."
            if goal == active_hash
            else "Goal state changed mid-upgrade, rolling back to original cluster."
        )
        log.info("rolling back the incremental upgrade", goal=goal)
        S.set_cond(rs, S.ROLLBACK_IN_PROGRESS, True, DESIRED_SPEC_CHANGED, message, now)

    # ----- one pass -----------------------------------------------------------------------
    async def reconcile(
        self,
        rs: Obj,
        active: Obj | None,
        pending: Obj | None,
        *,
        pending_ready: bool,
        pending_head_ready: bool,
        serve: Mapping[str, ServeResult],
    ) -> Routing:
        """Per-cluster serve Services, Gateway, HTTPRoute and ``target_capacity`` for this
        pass. ``serve``: per cluster name, what this pass read of its Serve applications; a
        capacity change needs them read (its head ready and its dashboard answering)."""
        for cluster in (active, pending):
            if cluster is not None:
                await self._per_cluster_serve_service(rs, cluster)
        desired_gateway = build_gateway(rs)
        gateway = await self._apply(
            rs,
            desired_gateway,
            apply_gateway,
            "Gateway",
            await self._read("Gateway", desired_gateway["metadata"]["name"], rs),
        )
        routing = Routing()
        if active is None:
            return routing
        active_read = serve.get(active["metadata"]["name"])
        routing.reported = reported_capacity(active_read.details if active_read else None)
        reported = routing.reported
        status = rs["status"]
        active_share = share_of(as_map(status.get("activeServiceStatus")))
        pending_share = share_of(as_map(status.get("pendingServiceStatus")))
        rollback = S.is_true(rs, S.ROLLBACK_IN_PROGRESS)
        options = step_options(rs)
        live_route = await self._read("HTTPRoute", http_route_name(rs["metadata"]["name"]), rs)
        unsettled_step: str | None = None  # a step taken before Serve settled: what had not
        if pending is None or options is None:
            routing.weights = (100, 0)
        elif abandoning(rs):
            return await self._abandon(rs, gateway, live_route, active, pending, serve, reported)
        else:
            routing.ready = is_gateway_ready(gateway) and is_http_route_ready(live_route, gateway)
            pending_read = serve.get(pending["metadata"]["name"])
            details = pending_read.details if pending_read else None
            # traffic moves to the pending cluster once Serve there runs the capacity it was
            # given, or once a due step has waited for that for the bound (``settle``)
            gate = self._settle_gate(
                rs, pending, active_share, pending_share, options, pending_ready, details, rollback
            )
            serving = gate.serving
            if pending_ready and not serving:
                routing.problem = (
                    replicas_starting(pending["metadata"]["name"], pending_share.capacity, details)
                    + f"; a due traffic step waits at most {self._hold_bound(options):g}s for it"
                )
            routing.plan = plan_incremental_step(
                IncrementalWorld(
                    active=active_share,
                    pending=pending_share,
                    options=options,
                    rollback=rollback,
                    # a rollback ends early when the pending head is not ready (KubeRay)
                    pending_ready=pending_head_ready if rollback else serving,
                    routing_ready=routing.ready,
                    now=self.ctx.now(),
                    settle_seconds=ROUTE_SETTLE_SECONDS,
                )
            )
            routing.weights = routing.plan.weights
            before = (
                100 if active_share.traffic is None else active_share.traffic,
                0 if pending_share.traffic is None else pending_share.traffic,
            )
            if gate.overdue and routing.weights != before:
                unsettled_step = unsettled(details, pending_share.capacity)
        route = build_http_route(rs, gateway, active, pending, *routing.weights)
        live = await self._apply(rs, route, apply_http_route, "HTTPRoute", live_route)
        if unsettled_step is not None and pending is not None:
            self._warn_unsettled(rs, pending, routing.weights, unsettled_step, options)
        if pending is None or routing.plan is None:
            if keep_pending_on_abandon(active_share, None, reported) and is_gateway_ready(gateway):
                # Beyond KubeRay: the active cluster was left scaled down (an abandoned
                # upgrade; a lower capacity that reached Serve after the abandon).
                self._send(rs, active, 100, "active", routing, serve)
            return routing
        routing.ready = is_gateway_ready(gateway) and is_http_route_ready(live, gateway)
        if not routing.ready:
            routing.problem = routing_problem(
                gateway, live, gateway_name(rs["metadata"]["name"]), route["metadata"]["name"]
            )
            return routing
        if not is_http_route_current(live, gateway):
            # Beyond KubeRay: the gateway has not yet seen the weights just written; a
            # capacity moved now could drop replicas it still sends traffic to.
            log.debug("waiting for the gateway to observe the HTTPRoute's generation")
            return routing
        if routing.plan.send_active is not None:
            self._send(rs, active, routing.plan.send_active, "active", routing, serve)
        if routing.plan.send_pending is not None:
            self._send(rs, pending, routing.plan.send_pending, "pending", routing, serve)
        return routing

    async def _abandon(
        self,
        rs: Obj,
        gateway: Obj,
        live_route: Obj | None,
        active: Obj,
        pending: Obj,
        serve: Mapping[str, ServeResult],
        reported: ReportedCapacity | None,
    ) -> Routing:
        """A pass of an abandoned upgrade (``abandon.plan_abandon``): the HTTPRoute held or
        moved back, ``target_capacity`` 100 sent to the active cluster, or the pending
        cluster retired."""
        status = rs["status"]
        ready = is_gateway_ready(gateway) and is_http_route_ready(live_route, gateway)
        plan = plan_abandon(
            AbandonWorld(
                active=share_of(as_map(status.get("activeServiceStatus"))),
                pending=share_of(as_map(status.get("pendingServiceStatus"))),
                reported=reported,
                route_observed=not ready or is_http_route_current(live_route, gateway),
                now=self.ctx.now(),
                active_name=active["metadata"]["name"],
                abandoned_since=parse_time(
                    (S.find(rs, S.UPGRADE_ABANDONED) or {}).get("lastTransitionTime")
                ),
            )
        )
        routing = Routing(
            weights=plan.weights,
            plan=plan.as_incremental(),
            ready=ready,
            problem=plan.waiting,
            abandoning=True,
            retire=plan.retire,
            reported=reported,
        )
        route = build_http_route(rs, gateway, active, pending, *plan.weights)
        await self._apply(rs, route, apply_http_route, "HTTPRoute", live_route)
        if plan.send_active is not None:
            self._send(rs, active, plan.send_active, "active", routing, serve)
        meta = rs["metadata"]
        log.debug(
            "abandoned upgrade pass",
            namespace=meta["namespace"],
            name=meta["name"],
            weights=plan.weights,
            send_active=plan.send_active,
            retire=plan.retire,
            waiting=plan.waiting,
        )
        return routing

    # ----- the settled wait (beyond KubeRay, ``settle``) -----------------------------------
    def _hold_bound(self, options: StepOptions) -> float:
        return hold_bound(options, self.ctx.settings.settle_hold_floor_seconds)

    def _settle_gate(
        self,
        rs: Obj,
        pending: Obj,
        active_share: ClusterShare,
        pending_share: ClusterShare,
        options: StepOptions,
        pending_ready: bool,
        details: ServeDetails | None,
        rollback: bool,
    ) -> SettleGate:
        """``settle.settle_gate`` for this pass, keeping when the current hold began (per
        RayService and pending cluster; dropped once nothing is held back). A rollback
        moves traffic away from the pending cluster: nothing is held."""
        meta = rs["metadata"]
        key = (owner_key(meta["namespace"], meta["name"]), pending["metadata"]["name"])
        now = self.ctx.now()
        if rollback:
            self._held_since.pop(key, None)
            settled = capacity_reached(reported_capacity(details), pending_share.capacity)
            return SettleGate(serving=pending_ready and settled, holding=False, overdue=False)
        gate = settle_gate(
            SettleWorld(
                active=active_share,
                pending=pending_share,
                options=options,
                pending_ready=pending_ready,
                reported=reported_capacity(details),
                held_since=self._held_since.get(key),
                now=now,
                bound=self._hold_bound(options),
            )
        )
        if not gate.holding:
            self._held_since.pop(key, None)
        elif key not in self._held_since:
            self._held_since[key] = now
            log.info(
                "traffic step held until the pending cluster's Serve settles",
                cluster=key[1],
                bound_seconds=self._hold_bound(options),
            )
        return gate

    def _warn_unsettled(
        self,
        rs: Obj,
        pending: Obj,
        weights: tuple[int, int],
        what: str,
        options: StepOptions | None,
    ) -> None:
        """The Warning Event of a traffic step taken without Serve settling."""
        bound = self._hold_bound(options) if options is not None else 0.0
        name = pending["metadata"]["name"]
        message = (
            f"Moved traffic to RayCluster {name} (weights {weights[0]}/{weights[1]}) although "
            f"its Serve had not settled within {bound:g}s: {what}"
        )
        log.warning("traffic moved before Serve settled", cluster=name, unsettled=what)
        self.ctx.event(rs, WARNING, "TrafficMovedBeforeServeSettled", message, "Reconcile")

    # ----- target_capacity ----------------------------------------------------------------
    def _send(
        self,
        rs: Obj,
        cluster: Obj,
        value: int,
        role: str,
        routing: Routing,
        serve: Mapping[str, ServeResult],
    ) -> None:
        name = cluster["metadata"]["name"]
        meta = rs["metadata"]
        read = serve.get(name)
        if read is None or read.details is None:
            return  # Serve cannot be reached: wait
        config = self.ctx.serve_configs.get(f"{meta['namespace']}/{meta['name']}", name)
        if config is None:
            # Nothing sent by this process (restart, failover, evicted): never only memory.
            spec_config = as_str(as_map(rs.get("spec")).get("serveConfigV2"))
            config = running_serve_config(read.details, spec_config) or spec_config
        try:
            payload = serve_config_payload(config, value)
        except Exception as exc:  # a YAML error in serveConfigV2
            routing.problem = f"cannot set the target_capacity of RayCluster {name}: {exc}"
            return
        owner = owner_key(meta["namespace"], meta["name"])
        key = (owner, name)
        sending = self._sending.get(key)
        if sending is None or sending.value != value:
            self._seq += 1
            sending = _Capacity(value, self._seq)
            self._sending[key] = sending
            log.info("setting the Serve target_capacity", cluster=name, target_capacity=value)

        async def put(client: DashboardClient) -> None:
            await client.update_serve_applications(payload)

        outcome = self.ctx.dashboard.call(
            owner,
            f"target-capacity/{name}",
            DashboardTarget.from_cluster(cluster),
            put,
            max_age=math.inf,
            retry_failures=True,
            invalidates=f"serve-details/{name}",
            key=sending.seq,
        )
        ns = cluster["metadata"]["namespace"]
        if outcome is None:
            return
        if outcome.error is not None:
            routing.problem = (
                f"failed to update target_capacity of serve applications to the RayCluster "
                f"{ns}/{name}: {outcome.error}"
            )
            return
        routing.confirmed[role] = value

    # ----- objects ------------------------------------------------------------------------
    async def _read(self, kind: str, name: str, rs: Obj) -> Obj | None:
        try:
            found: Obj = await self.ctx.client.get(
                GATEWAY_API_VERSION, kind, name, rs["metadata"]["namespace"]
            )
        except NotFound:
            return None
        return found

    async def _apply(self, rs: Obj, desired: Obj, apply: Any, kind: str, live: Obj | None) -> Obj:
        ns = rs["metadata"]["namespace"]
        name = desired["metadata"]["name"]
        action: Action
        try:
            written, action = await apply(self.ctx.client, live, desired)
        except RequeueError:
            raise
        except ApiError as exc:
            verb = "create" if live is None else "update"
            reason = f"FailedTo{verb.capitalize()}{kind}"
            what = f"{kind} for RayService" if live is None else f"the {kind}"
            self.ctx.event(
                rs, WARNING, reason, f"Failed to {verb} {what} {ns}/{name}: {exc}", verb.title()
            )
            raise
        if action == "created":
            self.ctx.event(
                rs, NORMAL, f"Created{kind}", f"Created {kind} for RayService {ns}/{name}", "Create"
            )
        elif action == "updated":
            self.ctx.event(
                rs, NORMAL, f"Updated{kind}", f"Updated the {kind} {ns}/{name}", "Update"
            )
        result: Obj = written
        return result

    async def _per_cluster_serve_service(self, rs: Obj, cluster: Obj) -> None:
        svc = build_serve_service_for_ray_service(rs, cluster, self.ctx.settings.features)
        ns = rs["metadata"]["namespace"]
        svc["metadata"]["namespace"] = ns
        name = svc["metadata"]["name"]
        if self.ctx.cached("v1", "Service", ns, name) is not None:
            return
        set_controller_reference(svc, cluster, C.KIND_RAYCLUSTER)
        done = await ensure(self.ctx.client, copy.deepcopy(svc), field_manager=FIELD_MANAGER)
        if not done.created:
            return  # the cache had not seen it yet
        log.info("created the per-cluster serve Service", service=name)

    # ----- suspend ------------------------------------------------------------------------
    async def delete_routing(self, rs: Obj) -> bool:
        """Delete the Gateway and HTTPRoute (suspend); True when neither remained."""
        all_deleted = True
        ns = rs["metadata"]["namespace"]
        for kind, name in (
            ("Gateway", gateway_name(rs["metadata"]["name"])),
            ("HTTPRoute", http_route_name(rs["metadata"]["name"])),
        ):
            try:
                live = await self._read(kind, name, rs)
            except NotFound:
                continue
            if live is None:
                continue
            all_deleted = False
            if live["metadata"].get("deletionTimestamp"):
                continue
            try:
                await self.ctx.client.delete(
                    GATEWAY_API_VERSION, kind, name, ns, propagation_policy="Background"
                )
            except NotFound:
                continue
            except ApiError as exc:
                self.ctx.event(
                    rs,
                    WARNING,
                    f"FailedToDelete{kind}",
                    f"Failed to delete the {kind} {ns}/{name} during suspend: {exc}",
                    "Delete",
                )
                raise
            self.ctx.event(
                rs,
                NORMAL,
                f"Deleted{kind}",
                f"Deleted the {kind} {ns}/{name} during suspend",
                "Delete",
            )
        return all_deleted
