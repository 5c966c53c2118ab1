"""GVK -> REST resource mapping (a tiny RESTMapper over discovery).

``ResourceInfo`` says where a kind lives on the wire: its plural and whether it is
namespaced. A small table covers the built-in kinds the runtime and operator use so
that no discovery round-trip is needed for them; anything else is discovered once
per group/version and cached. A miss re-reads discovery once, so a CRD installed
after start-up is found.
"""

from __future__ import annotations

import attrs

from kuberay.kube.paths import segment


@attrs.frozen
class ResourceInfo:
    """Where a kind is served: ``/api[s]/<group>/<version>/[namespaces/<ns>/]<plural>``."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        """``group/version``, or just ``version`` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(
        self, namespace: str | None = None, name: str | None = None, sub: str | None = None
    ) -> str:
        """URL path of the collection, or of one object (and subresource) when ``name`` is set.

        Every segment is checked and escaped (:mod:`kuberay.kube.paths`): a name, namespace
        or subresource that cannot be one path segment raises
        :class:`~kuberay.kube.paths.InvalidPathSegment` and no path is built."""
        base = api_path(self.group, self.version)
        if self.namespaced and namespace:
            base += f"/namespaces/{segment('namespace', namespace)}"
        base += f"/{segment('resource', self.plural)}"
        if name is not None:
            base += f"/{segment('name', name)}"
            if sub:
                base += f"/{segment('subresource', sub)}"
        return base


def api_path(group: str, version: str) -> str:
    """``/apis/<group>/<version>``, or ``/api/<version>`` for the core group; each segment
    checked and escaped (:func:`kuberay.kube.paths.segment`)."""
    if group:
        return f"/apis/{segment('group', group)}/{segment('version', version)}"
    return f"/api/{segment('version', version)}"


def split_api_version(api_version: str) -> tuple[str, str]:
    """``"apps/v1"`` -> ``("apps", "v1")``; ``"v1"`` -> ``("", "v1")``."""
    if "/" in api_version:
        group, version = api_version.split("/", 1)
        return group, version
    return "", api_version


_BUILTIN: list[tuple[str, str, str, bool]] = [
    # (apiVersion, kind, plural, namespaced)
    ("v1", "Pod", "pods", True),
    ("v1", "Service", "services", True),
    ("v1", "ConfigMap", "configmaps", True),
    ("v1", "Secret", "secrets", True),
    ("v1", "ServiceAccount", "serviceaccounts", True),
    ("v1", "Event", "events", True),
    ("v1", "Endpoints", "endpoints", True),
    ("v1", "PersistentVolumeClaim", "persistentvolumeclaims", True),
    ("v1", "Namespace", "namespaces", False),
    ("v1", "Node", "nodes", False),
    ("apps/v1", "Deployment", "deployments", True),
    ("batch/v1", "Job", "jobs", True),
    ("batch/v1", "CronJob", "cronjobs", True),
    ("coordination.k8s.io/v1", "Lease", "leases", True),
    ("events.k8s.io/v1", "Event", "events", True),
    ("rbac.authorization.k8s.io/v1", "Role", "roles", True),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", True),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False),
    ("networking.k8s.io/v1", "Ingress", "ingresses", True),
    ("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", True),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        False,
    ),
]

BUILTIN_RESOURCES: dict[tuple[str, str], ResourceInfo] = {
    (api_version, kind): ResourceInfo(*split_api_version(api_version), kind, plural, namespaced)
    for api_version, kind, plural, namespaced in _BUILTIN
}
