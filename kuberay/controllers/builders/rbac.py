"""RBAC objects for the in-tree autoscaler (only with ``enableInTreeAutoscaling: true``).

* ServiceAccount ``CheckName(<cluster>)`` — created only when the head template does not
  name one; a named one is the user's to create, looked up by exactly that name (KubeRay
  emits ``AutoscalerServiceAccountNotFound`` while it is missing, see
  :func:`user_provided_service_account`);
* Role ``CheckName(<cluster>)``: ``pods`` get/list/watch/patch, ``pods/resize`` patch,
  ``ray.io`` ``rayclusters`` get/patch;
* RoleBinding ``CheckName(<cluster>)`` binding that Role to the ServiceAccount (the user's
  name verbatim; KubeRay clips it with ``CheckName``, which breaks names over 50 chars).

All carry labels ``ray.io/cluster``, ``app.kubernetes.io/name=kuberay``,
``app.kubernetes.io/created-by=kuberay-operator`` and a controller owner reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.controllers.common.objects import as_map, as_str, metadata, pod_spec_of_template, spec

from .names import (
    autoscaler_role_binding_name,
    autoscaler_role_name,
    autoscaler_service_account_name,
    check_name,
    head_group_service_account_name,
)
from .owner import controller_owner_reference

__all__ = [
    "autoscaler_role_rules",
    "build_autoscaler_role",
    "build_autoscaler_role_binding",
    "build_autoscaler_service_account",
    "user_provided_service_account",
]


def _labels(cluster: Mapping[str, Any]) -> dict[str, str]:
    return {
        c.RAY_CLUSTER_LABEL_KEY: as_str(metadata(cluster).get("name")),
        c.KUBERNETES_APPLICATION_NAME_LABEL_KEY: c.APPLICATION_NAME,
        c.KUBERNETES_CREATED_BY_LABEL_KEY: c.COMPONENT_NAME,
    }


def _meta(cluster: Mapping[str, Any], name: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": as_str(metadata(cluster).get("namespace")),
        "labels": _labels(cluster),
        "ownerReferences": [controller_owner_reference(cluster)],
    }


def user_provided_service_account(cluster: Mapping[str, Any]) -> str | None:
    """The head template's ``serviceAccountName`` when set (the user must create it)."""
    head = as_map(spec(cluster).get("headGroupSpec"))
    account = pod_spec_of_template(head.get("template")).get("serviceAccountName")
    return account if isinstance(account, str) and account else None


def build_autoscaler_service_account(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """The ServiceAccount KubeRay creates for the autoscaler."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": _meta(cluster, check_name(head_group_service_account_name(cluster))),
    }


def autoscaler_role_rules() -> list[dict[str, Any]]:
    """Rules of the autoscaler Role."""
    return [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "patch"]},
        {"apiGroups": [""], "resources": ["pods/resize"], "verbs": ["patch"]},
        {"apiGroups": ["ray.io"], "resources": ["rayclusters"], "verbs": ["get", "patch"]},
    ]


def build_autoscaler_role(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """The autoscaler Role."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": _meta(cluster, autoscaler_role_name(as_str(metadata(cluster).get("name")))),
        "rules": autoscaler_role_rules(),
    }


def build_autoscaler_role_binding(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """The autoscaler RoleBinding (Role -> ServiceAccount)."""
    name = as_str(metadata(cluster).get("name"))
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": _meta(cluster, autoscaler_role_binding_name(name)),
        "subjects": [
            {
                "kind": "ServiceAccount",
                "name": autoscaler_service_account_name(cluster),
                "namespace": as_str(metadata(cluster).get("namespace")),
            }
        ],
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": check_name(name),
        },
    }
