"""Pure rules of ``kubectl ray why``: a snapshot of what the API shows in, findings out.

A :class:`Snapshot` holds the resource, its pods, the Events about both, the Secrets
and Services it references and, for a RayJob or RayService, the snapshots of its
RayClusters. :func:`diagnose` returns a :class:`Diagnosis`: whether the resource is
ready, the one-line verdict (the most severe finding, checks ordered by how
directly they block progress) and every finding.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import attrs

from kuberay.cmd.kubectl_ray.common import condition_true, find_condition, pod_ready
from kuberay.cmd.kubectl_ray.output import parse_time
from kuberay.controllers.common.auth import auth_token_secret_name
from kuberay.controllers.common.hashing import ray_cluster_recreate_hash

Obj = dict[str, Any]

ERROR, WARNING, INFO = "error", "warning", "info"
_RANK = {ERROR: 0, WARNING: 1, INFO: 2}
AUTH_TOKEN_KEY = "auth_token"
RECREATE_HASH_ANNOTATION = "ray.io/upgrade-strategy-recreate-hash"
#: Events older than this are not "recent".
RECENT_EVENT_SECONDS = 3600.0
#: Container waiting reasons that are only a normal step of starting.
_BENIGN_WAITING = {"ContainerCreating", "PodInitializing"}


@attrs.define
class Finding:
    """One observation: ``severity`` error|warning|info, a machine ``reason``, the
    ``object`` it is about (``Kind/name``), a human ``message`` and a ``hint``."""

    severity: str
    reason: str
    object: str
    message: str
    hint: str = ""

    def as_dict(self) -> Obj:
        """JSON form."""
        return attrs.asdict(self)


@attrs.define
class Snapshot:
    """What the API showed about one resource."""

    obj: Obj
    pods: list[Obj] = attrs.field(factory=list)
    events: list[Obj] = attrs.field(factory=list)
    secrets: dict[str, Obj | None] = attrs.field(factory=dict)
    services: dict[str, Obj | None] = attrs.field(factory=dict)
    clusters: list[Snapshot] = attrs.field(factory=list)
    jobs: list[Obj] = attrs.field(factory=list)
    now: dt.datetime = attrs.field(factory=lambda: dt.datetime.now(dt.UTC))


@attrs.define
class Diagnosis:
    """The verdict on one resource."""

    kind: str
    namespace: str
    name: str
    ready: bool
    summary: str
    findings: list[Finding]

    def as_dict(self) -> Obj:
        """JSON form (``-o json``)."""
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "ready": self.ready,
            "summary": self.summary,
            "findings": [f.as_dict() for f in self.findings],
        }


def _ref(obj: Obj) -> str:
    return f"{obj.get('kind') or 'Object'}/{(obj.get('metadata') or {}).get('name', '')}"


# ----- shared checks ---------------------------------------------------------------------
def check_deletion(obj: Obj, now: dt.datetime) -> list[Finding]:
    """Deleted but held by finalizers."""
    meta = obj.get("metadata") or {}
    since = parse_time(meta.get("deletionTimestamp"))
    if since is None:
        return []
    finalizers = meta.get("finalizers") or []
    if not finalizers:
        return [Finding(INFO, "Deleting", _ref(obj), "is being deleted")]
    waited = int((now - since).total_seconds())
    return [
        Finding(
            ERROR,
            "FinalizerBlocking",
            _ref(obj),
            f"deletion requested {waited}s ago is blocked by finalizers {finalizers}",
            "the controller owning each finalizer must remove it (is the operator running?); "
            "as a last resort remove it with kubectl patch --type=json",
        )
    ]


def check_events(events: list[Obj], now: dt.datetime, limit: int = 5) -> list[Finding]:
    """Recent Warning Events (newest first, one per object and reason)."""
    seen: set[tuple[str, str]] = set()
    found: list[Finding] = []

    def when(e: Obj) -> dt.datetime:
        for key in ("lastTimestamp", "eventTime", "firstTimestamp"):
            t = parse_time(e.get(key))
            if t is not None:
                return t
        t = parse_time((e.get("metadata") or {}).get("creationTimestamp"))
        return t or now

    for e in sorted(events, key=when, reverse=True):
        if e.get("type") != "Warning" or (now - when(e)).total_seconds() > RECENT_EVENT_SECONDS:
            continue
        involved = e.get("involvedObject") or e.get("regarding") or {}
        ref = f"{involved.get('kind', '')}/{involved.get('name', '')}"
        key = (ref, str(e.get("reason")))
        if key in seen:
            continue
        seen.add(key)
        message = str(e.get("message") or e.get("note") or "")
        count = e.get("count") or ((e.get("series") or {}).get("count"))
        if count and int(count) > 1:
            message += f" (x{count})"
        severity = ERROR if _is_invalid_reason(str(e.get("reason"))) else WARNING
        found.append(Finding(severity, f"Event:{e.get('reason')}", ref, message))
        if len(found) >= limit:
            break
    return found


def _is_invalid_reason(reason: str) -> bool:
    return reason == "ValidationFailed" or reason.startswith("Invalid")


def check_pod(pod: Obj) -> list[Finding]:
    """Why one pod is not running and ready."""
    ref = _ref({"kind": "Pod", **pod})
    found: list[Finding] = []
    status = pod.get("status") or {}
    scheduled = find_condition(pod, "PodScheduled")
    if scheduled is not None and scheduled.get("status") == "False":
        found.append(
            Finding(
                ERROR,
                str(scheduled.get("reason") or "Unschedulable"),
                ref,
                f"cannot be scheduled: {scheduled.get('message') or 'no reason given'}",
                "lower the pod's resource requests, relax its nodeSelector/affinity/"
                "tolerations, or add nodes that fit",
            )
        )
    statuses = [("init container", s) for s in status.get("initContainerStatuses") or []] + [
        ("container", s) for s in status.get("containerStatuses") or []
    ]
    for what, cs in statuses:
        state = cs.get("state") or {}
        waiting = state.get("waiting")
        last = (cs.get("lastState") or {}).get("terminated") or {}
        if waiting and waiting.get("reason") not in _BENIGN_WAITING:
            reason = str(waiting.get("reason") or "Waiting")
            message = f"{what} {cs.get('name')} is waiting: {reason}"
            if waiting.get("message"):
                message += f": {waiting['message']}"
            if last:
                message += (
                    f" (last exit: {last.get('reason') or 'Error'}, code {last.get('exitCode')})"
                )
            found.append(Finding(ERROR, reason, ref, message, _waiting_hint(reason, cs)))
        terminated = state.get("terminated")
        if terminated and terminated.get("exitCode", 0) != 0:
            found.append(
                Finding(
                    ERROR,
                    str(terminated.get("reason") or "Error"),
                    ref,
                    f"{what} {cs.get('name')} terminated: {terminated.get('reason') or 'Error'} "
                    f"(exit code {terminated.get('exitCode')})"
                    + (f": {terminated['message']}" if terminated.get("message") else ""),
                    "see `kubectl ray log` or `kubectl logs --previous`",
                )
            )
    if status.get("phase") == "Failed":
        found.append(
            Finding(
                ERROR,
                str(status.get("reason") or "PodFailed"),
                ref,
                f"pod failed: {status.get('message') or status.get('reason') or 'unknown'}",
            )
        )
    if (
        not found
        and not pod_ready(pod)
        and not (pod.get("metadata") or {}).get("deletionTimestamp")
    ):
        phase = status.get("phase") or "Pending"
        if scheduled is None and not status.get("conditions"):
            msg = "has no status yet: no scheduler/kubelet has reported on it"
        else:
            msg = f"is {phase} and not ready"
        found.append(Finding(WARNING, "PodNotReady", ref, msg))
    found.extend(check_deletion({"kind": "Pod", **pod}, dt.datetime.now(dt.UTC)))
    return found


def _waiting_hint(reason: str, cs: Obj) -> str:
    if reason in ("ImagePullBackOff", "ErrImagePull", "InvalidImageName"):
        return f"check the image name/tag ({cs.get('image')}) and registry credentials"
    if reason == "CrashLoopBackOff":
        return "the container keeps exiting; read its logs (`kubectl ray log`)"
    if reason in ("CreateContainerConfigError", "CreateContainerError"):
        return "a referenced Secret/ConfigMap or key is missing, or the container spec is invalid"
    return ""


# ----- RayCluster ------------------------------------------------------------------------
def check_auth_secret(snap: Snapshot) -> list[Finding]:
    """Token auth without its Secret (or without the ``auth_token`` key)."""
    cluster = snap.obj
    auth = (cluster.get("spec") or {}).get("authOptions") or {}
    if auth.get("mode") != "token":
        return []
    name = auth_token_secret_name(cluster["metadata"]["name"], auth)
    secret = snap.secrets.get(name)
    user_named = bool(auth.get("secretName"))
    if secret is None:
        hint = (
            f"create it: kubectl create secret generic {name} --from-literal={AUTH_TOKEN_KEY}=..."
            if user_named
            else "the operator creates this Secret; is it running? (kubectl ray version)"
        )
        return [
            Finding(
                ERROR,
                "AuthSecretMissing",
                f"Secret/{name}",
                f"token authentication needs Secret {name}"
                + (" (authOptions.secretName)" if user_named else "")
                + " but it does not exist; Ray pods cannot start without it",
                hint,
            )
        ]
    if AUTH_TOKEN_KEY not in (secret.get("data") or {}):
        return [
            Finding(
                ERROR,
                "AuthSecretInvalid",
                f"Secret/{name}",
                f"Secret {name} has no key {AUTH_TOKEN_KEY}",
                f"add the key {AUTH_TOKEN_KEY} to the Secret",
            )
        ]
    return []


def check_spec_validity(cluster: Obj) -> list[Finding]:
    """The operator's InvalidSpec condition (and the same rules run locally)."""
    from kuberay.api.v1.validation import validate_raycluster

    found: list[Finding] = []
    cond = find_condition(cluster, "InvalidSpec")
    if cond is not None and cond.get("status") == "True":
        found.append(
            Finding(
                ERROR,
                str(cond.get("reason") or "InvalidSpec"),
                _ref(cluster),
                str(cond.get("message")),
            )
        )
        return found
    try:
        errors = [e for e in validate_raycluster(cluster) if e.source != "webhook"]
    except Exception:  # a spec too broken to validate is reported by the operator
        errors = []
    if errors:
        found.append(
            Finding(
                ERROR,
                "InvalidSpec",
                _ref(cluster),
                "the spec is invalid: " + "; ".join(str(e) for e in errors),
                "fix the named fields; the operator creates nothing for an invalid spec",
            )
        )
    return found


def check_ignored_change(snap: Snapshot) -> list[Finding]:
    """A spec change the operator will not roll out to existing pods."""
    cluster = snap.obj
    found: list[Finding] = []
    meta = cluster.get("metadata") or {}
    status = cluster.get("status") or {}
    generation, observed = meta.get("generation"), status.get("observedGeneration")
    if generation and observed and int(observed) < int(generation):
        found.append(
            Finding(
                WARNING,
                "SpecNotObserved",
                _ref(cluster),
                f"generation {generation} has not been processed yet (operator saw {observed})",
                "is the operator running and watching this namespace?",
            )
        )
    strategy = ((cluster.get("spec") or {}).get("upgradeStrategy") or {}).get("type")
    heads = [
        p
        for p in snap.pods
        if ((p.get("metadata") or {}).get("labels") or {}).get("ray.io/node-type") == "head"
        and not (p.get("metadata") or {}).get("deletionTimestamp")
    ]
    if heads and strategy != "Recreate":
        stamped = str(
            ((heads[0].get("metadata") or {}).get("annotations") or {}).get(
                RECREATE_HASH_ANNOTATION
            )
            or ""
        )
        try:
            current = ray_cluster_recreate_hash(cluster)
        except Exception:  # a spec the hasher cannot read is reported by other checks
            current = stamped
        if stamped and current and stamped != current:
            found.append(
                Finding(
                    WARNING,
                    "SpecChangeIgnored",
                    _ref(cluster),
                    "the pod templates changed after the pods were created; the operator "
                    "does not update running pods, so the change has no effect on them",
                    "delete the pods to have them recreated, or set "
                    "spec.upgradeStrategy.type: Recreate",
                )
            )
    return found


def check_cluster_conditions(cluster: Obj) -> list[Finding]:
    """Conditions that say what is wrong (ReplicaFailure, conflicts, head not ready)."""
    found: list[Finding] = []
    for ctype in ("ReplicaFailure", "ChildResourceConflict"):
        c = find_condition(cluster, ctype)
        if c is not None and c.get("status") == "True":
            found.append(
                Finding(ERROR, str(c.get("reason") or ctype), _ref(cluster), str(c.get("message")))
            )
    head = find_condition(cluster, "HeadPodReady")
    if head is not None and head.get("status") == "False":
        found.append(
            Finding(
                WARNING,
                str(head.get("reason") or "HeadPodNotReady"),
                _ref(cluster),
                "head pod not ready" + (f": {head['message']}" if head.get("message") else ""),
            )
        )
    if condition_true(cluster, "RayClusterSuspended"):
        found.append(Finding(INFO, "Suspended", _ref(cluster), "the cluster is suspended"))
    return found


def check_dashboard(snap: Snapshot) -> list[Finding]:
    """Is the dashboard reachable through the head Service: the Service exists and its
    selector picks a ready head pod (only judged once the head pod is ready)."""
    heads = [
        p
        for p in snap.pods
        if ((p.get("metadata") or {}).get("labels") or {}).get("ray.io/node-type") == "head"
    ]
    if not heads or not any(pod_ready(p) for p in heads) or not snap.services:
        return []
    name, service = next(iter(snap.services.items()))
    if service is None:
        return [
            Finding(
                ERROR,
                "DashboardUnreachable",
                f"Service/{name}",
                f"the head Service {name} does not exist, so the dashboard (8265) and Ray "
                "client (10001) cannot be reached through it",
                "the operator recreates it on its next pass; is it running?",
            )
        ]
    selector = (service.get("spec") or {}).get("selector") or {}
    ready_heads = [p for p in heads if pod_ready(p)]
    if not any(
        all(
            ((p.get("metadata") or {}).get("labels") or {}).get(k) == v for k, v in selector.items()
        )
        for p in ready_heads
    ):
        return [
            Finding(
                ERROR,
                "DashboardUnreachable",
                f"Service/{name}",
                f"the head Service selector {selector} matches no ready head pod, so the "
                "dashboard is unreachable through it",
                "restore the Service's selector or the head pod's labels",
            )
        ]
    ports = {p.get("port") for p in (service.get("spec") or {}).get("ports") or []}
    if 8265 not in ports and not any(
        p.get("name") == "dashboard" for p in (service.get("spec") or {}).get("ports") or []
    ):
        return [
            Finding(
                WARNING,
                "DashboardPortMissing",
                f"Service/{name}",
                "the head Service exposes no dashboard port (8265)",
            )
        ]
    return []


def cluster_ready(cluster: Obj) -> bool:
    """Provisioned (or state ready) and not suspended / deleting."""
    if (cluster.get("metadata") or {}).get("deletionTimestamp"):
        return False
    status = cluster.get("status") or {}
    return status.get("state") == "ready" or condition_true(cluster, "RayClusterProvisioned")


def diagnose_cluster(snap: Snapshot) -> list[Finding]:
    """Every finding about a RayCluster snapshot."""
    cluster = snap.obj
    found = check_deletion(cluster, snap.now)
    found += check_spec_validity(cluster)
    found += check_auth_secret(snap)
    found += check_cluster_conditions(cluster)
    for pod in snap.pods:
        found += check_pod(pod)
    found += check_dashboard(snap)
    found += check_ignored_change(snap)
    found += check_events(snap.events, snap.now)
    managed_by = (cluster.get("spec") or {}).get("managedBy")
    if managed_by and managed_by != "ray.io/kuberay-operator":
        found.append(
            Finding(
                INFO, "ManagedElsewhere", _ref(cluster), f"managed by {managed_by}, not by KubeRay"
            )
        )
    if not cluster.get("status") and not snap.pods and not any(f.severity == ERROR for f in found):
        found.append(
            Finding(
                ERROR,
                "NotReconciled",
                _ref(cluster),
                "no status and no pods: the operator has not processed this RayCluster",
                "is the KubeRay operator running and watching this namespace? "
                "(kubectl ray version)",
            )
        )
    return found


# ----- RayJob / RayService ---------------------------------------------------------------
def diagnose_job(snap: Snapshot) -> list[Finding]:
    """A RayJob: its deployment/job status, submitter Job, Events and its cluster."""
    job = snap.obj
    status = job.get("status") or {}
    found = check_deletion(job, snap.now)
    deploy = status.get("jobDeploymentStatus") or ""
    if deploy in ("Failed", "ValidationFailed"):
        found.append(
            Finding(
                ERROR,
                str(status.get("reason") or deploy),
                _ref(job),
                f"job deployment {deploy}"
                + (f": {status['message']}" if status.get("message") else ""),
            )
        )
    if status.get("jobStatus") in ("FAILED", "STOPPED"):
        found.append(
            Finding(
                ERROR,
                f"Job{status['jobStatus'].title()}",
                _ref(job),
                f"Ray job {status['jobStatus']}: {status.get('message', '')}".rstrip(": "),
            )
        )
    for k8s_job in snap.jobs:
        failed = find_condition(k8s_job, "Failed")
        if failed is not None and failed.get("status") == "True":
            found.append(
                Finding(
                    ERROR,
                    str(failed.get("reason") or "SubmitterFailed"),
                    _ref({"kind": "Job", **k8s_job}),
                    str(failed.get("message") or "the submitter Job failed"),
                )
            )
    for pod in snap.pods:
        found += check_pod(pod)
    found += check_events(snap.events, snap.now)
    for cluster in snap.clusters:
        found += diagnose_cluster(cluster)
    if not status and not any(f.severity == ERROR for f in found):
        found.append(
            Finding(
                ERROR,
                "NotReconciled",
                _ref(job),
                "no status: the operator has not processed this RayJob",
                "is the KubeRay operator running?",
            )
        )
    return found


def diagnose_service(snap: Snapshot) -> list[Finding]:
    """A RayService: Ready condition, Serve application statuses and its clusters."""
    svc = snap.obj
    found = check_deletion(svc, snap.now)
    ready = find_condition(svc, "Ready")
    if ready is not None and ready.get("status") == "False":
        found.append(
            Finding(
                WARNING,
                str(ready.get("reason") or "NotReady"),
                _ref(svc),
                str(ready.get("message") or "not ready"),
            )
        )
    status = svc.get("status") or {}
    for which in ("activeServiceStatus", "pendingServiceStatus"):
        apps = (status.get(which) or {}).get("applicationStatuses") or {}
        for app, app_status in apps.items():
            if app_status.get("status") not in ("RUNNING", None):
                found.append(
                    Finding(
                        ERROR if "FAIL" in str(app_status.get("status")) else WARNING,
                        f"ServeApp{app_status.get('status')}",
                        _ref(svc),
                        f"Serve application {app} ({which}) is {app_status.get('status')}"
                        + (f": {app_status['message']}" if app_status.get("message") else ""),
                    )
                )
    found += check_events(snap.events, snap.now)
    for cluster in snap.clusters:
        found += diagnose_cluster(cluster)
    if not status and not any(f.severity == ERROR for f in found):
        found.append(
            Finding(
                ERROR,
                "NotReconciled",
                _ref(svc),
                "no status: the operator has not processed this RayService",
                "is the KubeRay operator running?",
            )
        )
    return found


def is_ready(snap: Snapshot) -> bool:
    """Whether the resource is in its good steady state."""
    obj = snap.obj
    kind = obj.get("kind")
    if kind == "RayCluster":
        return cluster_ready(obj)
    status = obj.get("status") or {}
    if kind == "RayJob":
        return status.get("jobStatus") == "SUCCEEDED" or (
            status.get("jobDeploymentStatus") in ("Running", "Complete")
            and status.get("jobStatus") not in ("FAILED", "STOPPED")
        )
    return condition_true(obj, "Ready")


def diagnose(snap: Snapshot) -> Diagnosis:
    """The verdict for ``snap``: ready or not, one-line summary, ordered findings."""
    obj = snap.obj
    kind = str(obj.get("kind"))
    rules = {"RayCluster": diagnose_cluster, "RayJob": diagnose_job, "RayService": diagnose_service}
    findings = rules[kind](snap)
    findings.sort(key=lambda f: _RANK.get(f.severity, 3))  # stable: check order kept
    ready = is_ready(snap) and not any(f.severity == ERROR for f in findings)
    meta = obj.get("metadata") or {}
    if ready:
        summary = f"{kind} {meta.get('namespace')}/{meta.get('name')} is ready"
    elif findings:
        top = findings[0]
        summary = f"{top.object}: {top.message}"
    else:
        summary = "not ready yet and nothing the API shows explains it (still starting?)"
    return Diagnosis(
        kind, str(meta.get("namespace")), str(meta.get("name")), ready, summary, findings
    )


__all__ = [
    "Diagnosis",
    "Finding",
    "Snapshot",
    "check_auth_secret",
    "check_dashboard",
    "check_deletion",
    "check_events",
    "check_ignored_change",
    "check_pod",
    "diagnose",
    "diagnose_cluster",
    "diagnose_job",
    "diagnose_service",
]
