"""Serve applications of one cluster, through the dashboard poller (KubeRay ``reconcileServe``
and ``updateHeadPodServeLabel``); nothing here awaits a dashboard.

* Readiness: the head is ready (cluster ``HeadPodReady`` with gate RayClusterStatusConditions,
  else the head pod Running and Ready); then ``GET /api/serve/applications/`` (refreshed every
  ``serve_max_age``); the cluster is ready when at least one application exists and all are
  ``RUNNING`` in an answer whose request was *sent after* the last config this operator sent
  had been accepted (an answer to a request sent earlier may describe the previous config,
  however late it arrives).
* Submission: ``PUT /api/serve/applications/`` when nothing is cached for the cluster, the
  cached config differs from ``serveConfigV2``, or a fresh answer lists zero applications
  (head restarted without GCS FT). Each submission has its own poller key (it replaces the
  previous one's outcome), so a config that returns to an earlier value is sent again; a
  failed one is retried by the poller.
  Events ``UpdatedServeApplications`` / ``FailedToUpdateServeApplications`` once per
  submission outcome.
* Proxy health: ``GET /-/healthz`` on the head pod's serve port.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs
import structlog

from kuberay.api.v1 import constants as C
from kuberay.controllers.common.objects import as_list, as_map, as_str
from kuberay.controllers.common.pod_health import is_running_and_ready
from kuberay.controllers.dashboard import DashboardClient, ServeDetails
from kuberay.controllers.dashboard.target import DashboardTarget, ServeProxyTarget
from kuberay.controllers.raycluster import conditions as rc_cond
from kuberay.controllers.rayservice.cluster_builder import need_serve_submit, serve_config_payload
from kuberay.controllers.rayservice.context import Ctx, ObjectKey, owner_key
from kuberay.featuregates.kuberay_gates import RAY_CLUSTER_STATUS_CONDITIONS
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import NORMAL, WARNING

log = structlog.get_logger("kuberay.rayservice")

DEFAULT_APP_NAME = "default"


@attrs.define
class ServeResult:
    """What one pass learned of a cluster's Serve applications."""

    ready: bool = False
    #: ``applicationStatuses`` for the status (None: nothing read yet / read failed).
    applications: dict[str, Any] | None = None
    #: Why the cluster is not ready, in words (None when ready).
    problem: str | None = None
    #: Serve's answer this pass (None: nothing read yet / read failed).
    details: ServeDetails | None = None


@attrs.define
class _Submission:
    seq: int
    config: str
    payload: bytes
    ok: bool = False
    reported: str | None = None


@attrs.frozen
class _Read:
    """A Serve status answer, and the last submission (``seq``) Ray had accepted when its
    request was sent; the latter does not count in equality (the poller compares outcomes to
    decide whether a RayService is to be woken)."""

    details: ServeDetails
    after: int = attrs.field(eq=False)


def app_statuses(details: ServeDetails) -> dict[str, Any]:
    """Ray's answer as ``applicationStatuses`` (the unnamed app is ``default``)."""
    out: dict[str, Any] = {}
    for name, app in details.applications.items():
        entry: dict[str, Any] = {"status": app.status}
        if app.message:
            entry["message"] = app.message
        deployments = {}
        for dep_name, dep in app.deployments.items():
            dep_entry = {"status": dep.status}
            if dep.message:
                dep_entry["message"] = dep.message
            deployments[dep_name] = dep_entry
        if deployments:
            entry["serveDeploymentStatuses"] = deployments
        out[name or DEFAULT_APP_NAME] = entry
    return out


def head_pod_ready(
    cluster: Mapping[str, Any], head_pod: Mapping[str, Any] | None, gated: bool
) -> bool:
    """KubeRay's gate for talking to a cluster's dashboard."""
    if gated:
        conds = list(as_list(as_map(cluster.get("status")).get("conditions")))
        return rc_cond.is_true(conds, rc_cond.HEAD_POD_READY)
    return head_pod is not None and is_running_and_ready(head_pod)


class ServeReconciler:
    """Per-controller Serve state: the submission in progress per (RayService, cluster)."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        self._submissions: dict[tuple[ObjectKey, str], _Submission] = {}
        #: the last submission Ray accepted, per (RayService, cluster), set when its PUT
        #: returned (not when a reconcile next looks)
        self._accepted: dict[tuple[ObjectKey, str], int] = {}
        self._seq = 0

    def forget(self, owner: ObjectKey, keep: set[str] | None = None) -> None:
        """Drop the submission state of ``owner``'s clusters not in ``keep`` (all if None);
        with ``keep``, also ``owner``'s poller calls to other clusters (every RayService call
        name is ``<what>/<cluster>``), so retired clusters leave nothing behind."""
        for table in (self._submissions, self._accepted):
            for key in [k for k in table if k[0] == owner]:
                if keep is None or key[1] not in keep:
                    del table[key]
        if keep is not None:
            self.ctx.dashboard.forget(owner, keep=lambda call: call.partition("/")[2] in keep)

    def reconcile_clusters(
        self,
        rs: Obj,
        active: Obj | None,
        pending: Obj | None,
        active_pod: Obj | None,
        pending_pod: Obj | None,
        *,
        incremental: bool,
        active_wanted: bool,
        held: bool,
    ) -> tuple[ServeResult, ServeResult]:
        """KubeRay's choice of clusters whose Serve applications are reconciled: the pending
        one; the active one when there is no pending one and ``active_wanted`` (no new
        cluster about to be named), or also during an incremental upgrade (its config held
        back unless rolling back; the pending one's held during a rollback). ``held``: the
        active cluster's config is held back (an abandoned upgrade's). With the incremental
        strategy a config carries the cluster's status ``targetCapacity``."""
        status = rs["status"]
        rolling = incremental and _true(rs, "RollbackInProgress")
        upgrading = incremental and _true(rs, "UpgradeInProgress")

        def capacity(which: str) -> int | None:
            value = as_map(status.get(which)).get("targetCapacity") if incremental else None
            return value if isinstance(value, int) else None

        active_serve = ServeResult()
        pending_serve = ServeResult()
        if pending is not None:
            pending_serve = self.reconcile_serve(
                rs,
                pending,
                pending_pod,
                skip_config_update=rolling,
                target_capacity=capacity("pendingServiceStatus"),
            )
        if active is not None and (active_wanted or (pending is not None and incremental)):
            active_serve = self.reconcile_serve(
                rs,
                active,
                active_pod,
                skip_config_update=held or (upgrading and not rolling),
                target_capacity=capacity("activeServiceStatus"),
            )
        return active_serve, pending_serve

    def reconcile_serve(
        self,
        rs: Obj,
        cluster: Obj,
        head_pod: Obj | None,
        *,
        skip_config_update: bool = False,
        target_capacity: int | None = None,
    ) -> ServeResult:
        """KubeRay ``reconcileServe`` for ``cluster``, answered from the poller."""
        meta = rs["metadata"]
        owner = owner_key(meta["namespace"], meta["name"])
        name = cluster["metadata"]["name"]
        gated = self.ctx.settings.gate(RAY_CLUSTER_STATUS_CONDITIONS, True)
        if not head_pod_ready(cluster, head_pod, gated):
            return ServeResult(problem=None)
        target = DashboardTarget.from_cluster(cluster)
        details_call = f"serve-details/{name}"
        key = (owner, name)

        async def get_details(client: DashboardClient) -> _Read:
            after = self._accepted.get(key, 0)  # read as the request is sent
            return _Read(await client.get_serve_details(), after)

        observed = self.ctx.dashboard.call(
            owner, details_call, target, get_details, max_age=self.ctx.settings.serve_max_age
        )
        if observed is None:
            return ServeResult(problem=f"waiting for the Serve status of RayCluster {name}")
        if observed.error is not None or observed.value is None:
            return ServeResult(
                problem=f"failed to get Serve application statuses of RayCluster {name}: "
                f"{observed.error}"
            )
        details = observed.value.details
        apps = app_statuses(details)
        sub = self._submissions.get(key)
        fresh = sub is None or not sub.ok or observed.value.after >= sub.seq
        cache_key = f"{meta['namespace']}/{meta['name']}"
        cached = self.ctx.serve_configs.get(cache_key, name)
        config = as_str(k8s.spec(rs).get("serveConfigV2"))
        count = len(apps) if fresh else max(len(apps), 1)
        need, why = need_serve_submit(cached, config, count)
        if need and not skip_config_update:
            result = self._submit(
                rs, cluster, owner, target, details_call, config, target_capacity, why, apps
            )
            result.details = details
            return result
        ready = fresh and details.all_running
        problem = None if ready else _apps_problem(name, apps)
        return ServeResult(ready=ready, applications=apps, problem=problem, details=details)

    def _submit(
        self,
        rs: Obj,
        cluster: Obj,
        owner: ObjectKey,
        target: DashboardTarget,
        details_call: str,
        config: str,
        target_capacity: int | None,
        why: str,
        apps: dict[str, Any],
    ) -> ServeResult:
        name = cluster["metadata"]["name"]
        ns = cluster["metadata"]["namespace"]
        key = (owner, name)
        try:
            payload = serve_config_payload(config, target_capacity)
        except Exception as exc:  # a YAML error: Ray would not get a config at all
            message = (
                f"Failed to update serve applications to the RayCluster {ns}/{name}: "
                f"serveConfigV2 is not valid: {exc}"
            )
            self._report(
                rs, key, f"invalid:{config}", WARNING, "FailedToUpdateServeApplications", message
            )
            return ServeResult(applications=apps, problem=message)
        sub = self._submissions.get(key)
        if sub is None or sub.payload != payload or sub.ok:
            self._seq += 1
            sub = _Submission(seq=self._seq, config=config, payload=payload)
            self._submissions[key] = sub
            log.info("submitting the Serve config", cluster=name, reason=why)

        seq = sub.seq

        async def put(client: DashboardClient) -> None:
            await client.update_serve_applications(payload)
            if key in self._submissions:  # not forgotten meanwhile
                self._accepted[key] = max(self._accepted.get(key, 0), seq)

        outcome = self.ctx.dashboard.call(
            owner,
            f"serve-update/{name}",
            target,
            put,
            max_age=math.inf,
            retry_failures=True,
            invalidates=details_call,
            key=sub.seq,
        )
        if outcome is None:
            return ServeResult(
                applications=apps, problem=f"submitting the Serve config to RayCluster {name}"
            )
        if outcome.error is not None:
            message = (
                f"Failed to update serve applications to the RayCluster {ns}/{name}: "
                "fail to create / update Serve applications. If you observe this error "
                'consistently, please check "Issue 5: Fail to create / update Serve '
                'applications." in https://docs.ray.io/en/master/cluster/kubernetes/'
                "troubleshooting/rayservice-troubleshooting.html#kuberay-raysvc-troubleshoot "
                f"for more details. err: {outcome.error}"
            )
            self._report(
                rs,
                key,
                f"{sub.seq}:{outcome.error}",
                WARNING,
                "FailedToUpdateServeApplications",
                message,
            )
            return ServeResult(applications=apps, problem=message)
        sub.ok = True
        meta = rs["metadata"]
        self.ctx.serve_configs.put(f"{meta['namespace']}/{meta['name']}", name, config)
        self._report(
            rs,
            key,
            f"{sub.seq}:ok",
            NORMAL,
            "UpdatedServeApplications",
            f"Updated serve applications to the RayCluster {ns}/{name}",
        )
        return ServeResult(
            applications=apps, problem=f"the Serve config was just sent to RayCluster {name}"
        )

    def _report(
        self, rs: Obj, key: tuple[ObjectKey, str], tag: str, etype: str, reason: str, message: str
    ) -> None:
        sub = self._submissions.get(key)
        if sub is not None:
            if sub.reported == tag:
                return
            sub.reported = tag
        self.ctx.event(rs, etype, reason, message, "Update")

    def proxy_healthy(self, rs: Obj, cluster: Obj, head_pod: Obj) -> bool | None:
        """The latest ``/-/healthz`` answer of the head's Serve proxy (None: none yet)."""
        target = ServeProxyTarget.from_head_pod(head_pod)
        if not target.pod_ip:
            return False
        meta = rs["metadata"]

        async def check(client: DashboardClient) -> None:
            await client.check_proxy_health()

        outcome = self.ctx.dashboard.call(
            owner_key(meta["namespace"], meta["name"]),
            f"proxy-health/{cluster['metadata']['name']}",
            target,
            check,
            max_age=self.ctx.settings.serve_max_age,
        )
        if outcome is None:
            return None
        return outcome.ok


def _true(rs: Mapping[str, Any], ctype: str) -> bool:
    return any(
        as_map(c).get("type") == ctype and as_map(c).get("status") == "True"
        for c in as_list(as_map(rs.get("status")).get("conditions"))
    )


def _apps_problem(cluster: str, apps: Mapping[str, Any]) -> str:
    if not apps:
        return f"no Serve application runs on RayCluster {cluster}"
    bad = [
        f"{name} {as_map(app).get('status')}"
        + (f" ({as_map(app).get('message')})" if as_map(app).get("message") else "")
        for name, app in sorted(apps.items())
        if as_map(app).get("status") != "RUNNING"
    ]
    if not bad:
        return f"waiting for a fresh Serve status of RayCluster {cluster}"
    return f"Serve applications of RayCluster {cluster} not RUNNING: " + "; ".join(bad)


def has_ready_serving_worker(pods: list[Obj]) -> bool:
    """Any worker pod Running and Ready (its readiness probe includes the Serve proxy)."""
    return any(
        as_map(as_map(p.get("metadata")).get("labels")).get(C.RAY_NODE_TYPE_LABEL_KEY)
        == C.WORKER_NODE
        and is_running_and_ready(p)
        for p in pods
    )
