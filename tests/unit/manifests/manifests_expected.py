"""What the install manifests must contain, written down independently of them: KubeRay
v1.7's RBAC (``ray-operator/config/rbac``, reference inventory section 8.1), our documented
additions, and the operator arguments KubeRay's chart renders by default. Shared by the unit
tests of the manifests and the chart tests on the apiserver."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[3]
MANIFESTS = REPO / "manifests"
RBAC_DIR = MANIFESTS / "rbac"
OPERATOR_DIR = MANIFESTS / "operator"
CHART_DIR = MANIFESTS / "helm" / "kuberay-operator"
APISERVER_DIR = MANIFESTS / "apiserver"
APISERVER_CHART_DIR = MANIFESTS / "helm" / "kuberay-apiserver"

Rule = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]

CRUD = ("create", "delete", "get", "list", "patch", "update", "watch")
RAY_KINDS = ("rayclusters", "raycronjobs", "rayjobs", "rayservices")

#: KubeRay's ClusterRole ``kuberay-operator`` (v1.7, plus v1.8's ``nodes: get``), rule by rule,
#: in its order.
KUBERAY_RULES: list[Rule] = [
    (("",), ("nodes",), ("get",)),  # v1.8: the pods/binding webhook reads the bound Node
    (("",), ("persistentvolumeclaims", "pods/status", "services"), CRUD),
    (
        ("",),
        ("pods",),
        ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"),
    ),
    (("",), ("pods/proxy", "services/status"), ("get", "patch", "update")),
    (("",), ("pods/resize",), ("patch",)),
    (("",), ("secrets",), ("create", "delete", "get", "list", "update", "watch")),
    (("",), ("serviceaccounts",), ("create", "delete", "get", "list", "watch")),
    (("",), ("services/proxy",), ("create", "get", "patch", "update")),
    (("batch",), ("jobs",), CRUD),
    (("cert-manager.io",), ("certificates",), ("create", "get", "list", "update", "watch")),
    (("cert-manager.io",), ("certificates/status",), ("get",)),
    (("cert-manager.io",), ("issuers",), ("create", "get", "list", "watch")),
    (("coordination.k8s.io",), ("leases",), ("create", "get", "list", "update")),
    (("discovery.k8s.io",), ("endpointslices",), ("get", "list", "watch")),
    (("events.k8s.io",), ("events",), ("create", "patch")),
    (("extensions", "networking.k8s.io"), ("ingresses",), CRUD),
    (
        ("gateway.networking.k8s.io",),
        ("gateways", "httproutes"),
        ("create", "delete", "get", "list", "update", "watch"),
    ),
    (("networking.k8s.io",), ("ingressclasses",), ("get", "list", "watch")),
    (
        ("networking.k8s.io",),
        ("networkpolicies",),
        ("create", "delete", "get", "list", "update", "watch"),
    ),
    (("ray.io",), RAY_KINDS, CRUD),
    (("ray.io",), tuple(f"{k}/finalizers" for k in RAY_KINDS), ("update",)),
    (("ray.io",), tuple(f"{k}/status" for k in RAY_KINDS), ("get", "patch", "update")),
    (
        ("rbac.authorization.k8s.io",),
        ("rolebindings",),
        ("create", "delete", "get", "list", "watch"),
    ),
    (
        ("rbac.authorization.k8s.io",),
        ("roles",),
        ("create", "delete", "get", "list", "update", "watch"),
    ),
    (("route.openshift.io",), ("routes",), CRUD),
]

#: What this implementation needs on top: ``patch`` on Secrets, for the mTLS controller's
#: metadata-only ownerReference patch (without it the operator reads and PUTs the whole
#: Secret, private key included, as KubeRay does). Events go through events.k8s.io/v1
#: (create, and patch for a series) as KubeRay's do, and the Lease rule above already grants
#: the get/create/update our elector uses.
OUR_ADDITIONS: list[Rule] = [(("",), ("secrets",), ("patch",))]

OPERATOR_RULES: list[Rule] = KUBERAY_RULES + OUR_ADDITIONS

#: Rules only the ClusterRole carries (KubeRay v1.8's chart: ``nodes`` are cluster-scoped, so
#: the per-namespace Roles of a single-namespace install leave them out).
CLUSTER_ONLY_RULES: list[Rule] = [(("",), ("nodes",), ("get",))]
#: The per-namespace Roles' rules.
NAMESPACED_RULES: list[Rule] = [r for r in OPERATOR_RULES if r not in CLUSTER_ONLY_RULES]

#: KubeRay's leader-election Role.
LEADER_ELECTION_RULES: list[Rule] = [
    (("",), ("configmaps",), ("create", "delete", "get", "list", "patch", "update", "watch")),
    (("",), ("events",), ("create",)),
    (("coordination.k8s.io",), ("leases",), ("create", "get", "list", "update")),
]

#: Chart additions by batch scheduler / gate (KubeRay's chart).
VOLCANO_RULE: Rule = (
    ("scheduling.volcano.sh",),
    ("podgroups",),
    ("create", "delete", "get", "list", "update", "watch"),
)
SCHEDULER_PLUGINS_RULE: Rule = (
    ("scheduling.x-k8s.io",),
    ("podgroups",),
    ("create", "get", "list", "watch"),
)
KUBERNETES_WAS_RULE: Rule = (("scheduling.k8s.io",), ("podgroups", "workloads"), CRUD)

DEFAULT_FEATURE_GATES_ARG = (
    "--feature-gates=RayClusterStatusConditions=true,RayJobDeletionPolicy=true,"
    "RayMultiHostIndexing=true,RayServiceIncrementalUpgrade=true,RayCronJob=false,"
    "RayClusterMTLS=false,RayClusterNetworkPolicy=false,RayClusterHistoryServer=false"
)
#: The operator arguments KubeRay's chart renders with its default values.
DEFAULT_ARGS = [
    "--log-stdout-encoder",
    "json",
    "--log-file-encoder",
    "json",
    "--enable-leader-election=true",
    "--enable-metrics=true",
    "--reconcile-concurrency=4",
    "--qps=100",
    "--burst=200",
    DEFAULT_FEATURE_GATES_ARG,
]

#: Value names of KubeRay's chart (v1.7, and v1.8's below) the chart must keep.
KUBERAY_VALUE_PATHS = [
    "nameOverride",
    "fullnameOverride",
    "componentOverride",
    "replicas",
    "image.repository",
    "image.tag",
    "image.pullPolicy",
    "imagePullSecrets",
    "nodeSelector",
    "priorityClassName",
    "labels",
    "annotations",
    "affinity",
    "tolerations",
    "serviceAccount.create",
    "serviceAccount.name",
    "logging.stdoutEncoder",
    "logging.fileEncoder",
    "logging.baseDir",
    "logging.fileName",
    "logging.sizeLimit",
    "batchScheduler.enabled",
    "batchScheduler.name",
    "configuration.enabled",
    "configuration.defaultContainerEnvs",
    "configuration.defaultPodAnnotations",
    "configuration.defaultPodLabels",
    "configuration.headSidecarContainers",
    "configuration.workerSidecarContainers",
    "featureGates",
    "metrics.enabled",
    "metrics.serviceMonitor.enabled",
    "metrics.serviceMonitor.interval",
    "metrics.serviceMonitor.honorLabels",
    "metrics.serviceMonitor.additionalLabels",
    "metrics.serviceMonitor.namespace",
    "operatorCommand",
    "leaderElectionEnabled",
    "reconcileConcurrency",
    "kubeClient.qps",
    "kubeClient.burst",
    "rbacEnable",
    "crNamespacedRbacEnable",
    "singleNamespaceInstall",
    "env",
    "resources",
    "livenessProbe.initialDelaySeconds",
    "livenessProbe.periodSeconds",
    "livenessProbe.failureThreshold",
    "readinessProbe.initialDelaySeconds",
    "readinessProbe.periodSeconds",
    "readinessProbe.failureThreshold",
    "podSecurityContext",
    "securityContext",
    "service.type",
    "service.port",
    # v1.8 (release text, grade B)
    "configuration.allowedNodeLabels",
    "nodeEventForwarder.enabled",
    "nodeEventForwarder.sources",
    "nodeEventForwarder.reasons",
    "nodeEventForwarder.types",
]


#: KubeRay's kuberay-apiserver chart: the rules of its ClusterRole ``kuberay-apiserver``, in
#: its order (the server's own rights when it does not act as its caller).
APISERVER_RULES: list[Rule] = [
    (("",), ("namespaces",), ("list",)),
    (("events.k8s.io",), ("events",), ("get", "list")),
    (("",), ("configmaps",), CRUD),
    (("ray.io",), ("rayclusters", "rayjobs", "rayservices"), CRUD),
]
#: ... and of ``kuberay-apiserver-service-access`` (with enableAPIServerV2).
APISERVER_SERVICE_ACCESS_RULES: list[Rule] = [
    (("",), ("services",), ("get", "list", "watch")),
    (("",), ("services/proxy",), ("get", "list", "watch")),
]

#: Value names of KubeRay's kuberay-apiserver chart the chart must keep (``security`` is
#: documented but unset: its proxy sidecar is not deployed).
APISERVER_VALUE_PATHS = [
    "replicaCount",
    "name",
    "image.repository",
    "image.tag",
    "image.pullPolicy",
    "cors",
    "labels",
    "annotations",
    "serviceAccount.create",
    "serviceAccount.name",
    "containerPort",
    "resources",
    "sidecarContainers",
    "nodeSelector",
    "affinity",
    "tolerations",
    "service.type",
    "service.ports",
    "ingress.enabled",
    "ingress.annotations",
    "ingress.className",
    "ingress.tls",
    "route.enabled",
    "route.annotations",
    "rbacEnable",
    "singleNamespaceInstall",
    "enableAPIServerV2",
]


def rule_of(rule: Mapping[str, Any]) -> Rule:
    """A PolicyRule as a comparable tuple (each list sorted)."""
    return (
        tuple(sorted(rule.get("apiGroups") or ())),
        tuple(sorted(rule.get("resources") or ())),
        tuple(sorted(rule.get("verbs") or ())),
    )


def rules_of(obj: Mapping[str, Any]) -> list[Rule]:
    """The rules of a Role or ClusterRole, in order."""
    return [rule_of(r) for r in obj.get("rules") or ()]


def normalized(rules: Iterable[Rule]) -> list[Rule]:
    return [(tuple(sorted(g)), tuple(sorted(r)), tuple(sorted(v))) for g, r, v in rules]


def load_yaml_dir(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """file name -> its documents, for every ``*.yaml`` but kustomization.yaml."""
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(directory.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        out[path.name] = [d for d in yaml.safe_load_all(path.read_text()) if d]
    return out


def find(docs: Iterable[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    for doc in docs:
        if doc.get("kind") == kind and doc["metadata"]["name"] == name:
            return doc
    raise KeyError(f"{kind} {name}")
