"""Pure rules of ``kubectl ray why`` and the dashboard's "Why": a snapshot of what the API
shows in, findings out.

A :class:`Snapshot` holds the resource, its pods, the Events about both, the Secrets
and Services it references and, for a RayJob or RayService, the snapshots of its
RayClusters. :func:`diagnose` returns a :class:`Diagnosis`: whether the resource is
ready, the one-line verdict (the most severe finding, checks ordered by how
directly they block progress) and every finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kuberay.api.v1 import constants as C
from kuberay.api.v1.constants import POD_TEMPLATE_HASH_KEY
from kuberay.api.v1.rules import managed_elsewhere
from kuberay.controllers.builders.auth import auth_token_secret_name
from kuberay.controllers.builders.hashing import ray_cluster_recreate_hash
from kuberay.diagnosis.cluster_changes import check_older_templates, check_removed_groups
from kuberay.diagnosis.conditions import condition_true, pod_ready
from kuberay.diagnosis.findings import (
    ERROR,
    INFO,
    WARNING,
    Diagnosis,
    Finding,
    Snapshot,
    check_deletion,
    check_events,
    check_pod,
    condition_finding,
    ref,
)
from kuberay.kube import objects as k8s

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj

_RANK = {ERROR: 0, WARNING: 1, INFO: 2}
AUTH_TOKEN_KEY = "auth_token"
RECREATE_HASH_ANNOTATION = C.UPGRADE_STRATEGY_RECREATE_HASH_KEY
#: How the operator's "why it waits" RayJob messages start (``rayjob.status.WAIT_PREFIX``;
#: not imported, to keep the plugin off the controller's imports).
WAIT_PREFIX = "Waiting: "
#: What the wait message about failing dashboard status checks says first.
DASHBOARD_WAIT = "the Ray dashboard of RayCluster "
#: Joins a timeout message and the last status-check failure (``rayjob.status.LAST_ERROR``).
LAST_ERROR = ": last error: "


# ----- RayCluster ------------------------------------------------------------------------
def check_auth_secret(snap: Snapshot) -> list[Finding]:
    """Token auth without its Secret (or without the ``auth_token`` key); nothing when
    ``snap.secrets`` has no entry for it (the Secret was not read)."""
    cluster = snap.obj
    auth = k8s.spec(cluster).get("authOptions") or {}
    if auth.get("mode") != "token":
        return []
    name = auth_token_secret_name(cluster["metadata"]["name"], auth)
    if name not in snap.secrets:  # not looked at (or not readable by who asked): no verdict
        return []
    secret = snap.secrets[name]
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

    found = condition_finding(cluster, "InvalidSpec", "True", ERROR, "InvalidSpec", str)
    if found:
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
                ref(cluster),
                "the spec is invalid: " + "; ".join(str(e) for e in errors),
                "fix the named fields; the operator creates nothing for an invalid spec",
            )
        )
    return found


def check_ignored_change(snap: Snapshot) -> list[Finding]:
    """A spec change the operator will not roll out to existing pods. A head pod that carries
    this operator's template hash is judged per group by :func:`check_older_templates`
    instead (finer: which groups, how many pods), so the change is reported once."""
    cluster = snap.obj
    found: list[Finding] = []
    meta = k8s.meta(cluster)
    status = k8s.status(cluster)
    generation, observed = meta.get("generation"), status.get("observedGeneration")
    if generation and observed and int(observed) < int(generation):
        found.append(
            Finding(
                WARNING,
                "SpecNotObserved",
                ref(cluster),
                f"generation {generation} has not been processed yet (operator saw {observed})",
                "is the operator running and watching this namespace?",
            )
        )
    strategy = (k8s.spec(cluster).get("upgradeStrategy") or {}).get("type")
    heads = [
        p
        for p in snap.pods
        if k8s.labels(p).get(C.RAY_NODE_TYPE_LABEL_KEY) == C.HEAD_NODE
        and not k8s.meta(p).get("deletionTimestamp")
    ]
    annotations = k8s.annotations(heads[0]) if heads else {}
    if heads and strategy != "Recreate" and POD_TEMPLATE_HASH_KEY not in annotations:
        stamped = str(annotations.get(RECREATE_HASH_ANNOTATION) or "")
        try:
            current = ray_cluster_recreate_hash(cluster)
        except Exception:  # a spec the hasher cannot read is reported by other checks
            current = stamped
        if stamped and current and stamped != current:
            found.append(
                Finding(
                    WARNING,
                    "SpecChangeIgnored",
                    ref(cluster),
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
        found += condition_finding(cluster, ctype, "True", ERROR, ctype, str)
    found += condition_finding(
        cluster,
        "HeadPodReady",
        "False",
        WARNING,
        "HeadPodNotReady",
        lambda m: "head pod not ready" + (f": {m}" if m else ""),
    )
    if condition_true(cluster, "RayClusterSuspended"):
        found.append(Finding(INFO, "Suspended", ref(cluster), "the cluster is suspended"))
    return found


def check_dashboard(snap: Snapshot) -> list[Finding]:
    """Is the dashboard reachable through the head Service: the Service exists and its
    selector picks a ready head pod (only judged once the head pod is ready)."""
    heads = [p for p in snap.pods if k8s.labels(p).get(C.RAY_NODE_TYPE_LABEL_KEY) == C.HEAD_NODE]
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
    selector = k8s.spec(service).get("selector") or {}
    ready_heads = [p for p in heads if pod_ready(p)]
    if not any(all(k8s.labels(p).get(k) == v for k, v in selector.items()) for p in ready_heads):
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
    ports = {p.get("port") for p in k8s.spec(service).get("ports") or []}
    if 8265 not in ports and not any(
        p.get("name") == "dashboard" for p in k8s.spec(service).get("ports") or []
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
    if k8s.meta(cluster).get("deletionTimestamp"):
        return False
    status = k8s.status(cluster)
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
    found += check_older_templates(snap)
    found += check_removed_groups(snap)
    found += check_events(snap.events, snap.now)
    managed_by = managed_elsewhere(cluster)
    if managed_by:
        found.append(
            Finding(
                INFO, "ManagedElsewhere", ref(cluster), f"managed by {managed_by}, not by KubeRay"
            )
        )
    if not cluster.get("status") and not snap.pods:
        found += _not_reconciled(
            "RayCluster",
            cluster,
            found,
            "no status and no pods",
            "is the KubeRay operator running and watching this namespace? (kubectl ray version)",
        )
    return found


def _not_reconciled(
    kind: str,
    obj: Obj,
    found: list[Finding],
    what: str,
    hint: str = "is the KubeRay operator running?",
) -> list[Finding]:
    """The ``NotReconciled`` finding for ``obj`` (a ``kind``) showing ``what`` (no status...),
    unless ``found`` already holds an error that explains more."""
    if any(f.severity == ERROR for f in found):
        return []
    message = f"{what}: the operator has not processed this {kind}"
    return [Finding(ERROR, "NotReconciled", ref(obj), message, hint)]


# ----- RayJob / RayService ---------------------------------------------------------------
def _dashboard_hint(text: str) -> str:
    if "KUBERAY_DASHBOARD_ALLOWED_NETWORKS" in text:
        return (
            "the operator runs outside the cluster: set KUBERAY_DASHBOARD_ALLOWED_NETWORKS to "
            "include the head pod's address, or run the operator in the cluster"
        )
    if "auth token Secret" in text:
        return "check the RayCluster's auth token Secret (authOptions)"
    return "check that the head pod runs and the operator can reach its dashboard port"


def check_job_wait(job: Obj) -> list[Finding]:
    """What the operator wrote into a live RayJob's message about why it waits (e.g. the
    dashboard's status checks fail, with the cause), as an error: the job does not progress."""
    status = k8s.status(job)
    message = status.get("message")
    deploy = status.get("jobDeploymentStatus") or ""
    if not isinstance(message, str) or not message.startswith(WAIT_PREFIX):
        return []
    if deploy in ("Complete", "Failed", "ValidationFailed"):
        return []
    text = message.removeprefix(WAIT_PREFIX)
    if text.startswith(DASHBOARD_WAIT):
        return [Finding(ERROR, "JobStatusChecksFailing", ref(job), text, _dashboard_hint(text))]
    return [Finding(ERROR, "Waiting", ref(job), text)]


def diagnose_job(snap: Snapshot) -> list[Finding]:
    """A RayJob: its deployment/job status, submitter Job, Events and its cluster."""
    job = snap.obj
    status = k8s.status(job)
    found = check_deletion(job, snap.now)
    deploy = status.get("jobDeploymentStatus") or ""
    if deploy in ("Failed", "ValidationFailed"):
        message = str(status.get("message") or "")
        found.append(
            Finding(
                ERROR,
                str(status.get("reason") or deploy),
                ref(job),
                f"job deployment {deploy}" + (f": {message}" if message else ""),
                _dashboard_hint(message) if LAST_ERROR in message else "",
            )
        )
    found += check_job_wait(job)
    if status.get("jobStatus") in ("FAILED", "STOPPED"):
        found.append(
            Finding(
                ERROR,
                f"Job{status['jobStatus'].title()}",
                ref(job),
                f"Ray job {status['jobStatus']}: {status.get('message', '')}".rstrip(": "),
            )
        )
    for k8s_job in snap.jobs:
        found += condition_finding(
            k8s_job,
            "Failed",
            "True",
            ERROR,
            "SubmitterFailed",
            lambda m: m or "the submitter Job failed",
            where=ref({"kind": "Job", **k8s_job}),
        )
    for pod in snap.pods:
        found += check_pod(pod)
    found += check_events(snap.events, snap.now)
    for cluster in snap.clusters:
        found += diagnose_cluster(cluster)
    if not status:
        found += _not_reconciled("RayJob", job, found, "no status")
    return found


def diagnose_service(snap: Snapshot) -> list[Finding]:
    """A RayService: Ready condition, Serve application statuses and its clusters."""
    svc = snap.obj
    found = check_deletion(svc, snap.now)
    found += condition_finding(
        svc, "Ready", "False", WARNING, "NotReady", lambda m: m or "not ready"
    )
    status = k8s.status(svc)
    for which in ("activeServiceStatus", "pendingServiceStatus"):
        apps = (status.get(which) or {}).get("applicationStatuses") or {}
        for app, app_status in apps.items():
            if app_status.get("status") not in ("RUNNING", None):
                found.append(
                    Finding(
                        ERROR if "FAIL" in str(app_status.get("status")) else WARNING,
                        f"ServeApp{app_status.get('status')}",
                        ref(svc),
                        f"Serve application {app} ({which}) is {app_status.get('status')}"
                        + (f": {app_status['message']}" if app_status.get("message") else ""),
                    )
                )
    found += check_events(snap.events, snap.now)
    for cluster in snap.clusters:
        found += diagnose_cluster(cluster)
    if not status:
        found += _not_reconciled("RayService", svc, found, "no status")
    return found


def is_ready(snap: Snapshot) -> bool:
    """Whether the resource is in its good steady state."""
    obj = snap.obj
    kind = obj.get("kind")
    if kind == "RayCluster":
        return cluster_ready(obj)
    status = k8s.status(obj)
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
    meta = k8s.meta(obj)
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
    "check_job_wait",
    "check_pod",
    "diagnose",
    "diagnose_cluster",
    "diagnose_job",
    "diagnose_service",
]
