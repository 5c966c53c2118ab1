"""Names KubeRay derives for the objects it creates (``utils/util.go`` and the controllers).

Truncation rules are the subtle part: :func:`check_name` (50 chars) and :func:`check_label`
(63 chars) keep the **suffix** of a long name and replace a leading digit or punctuation
character with ``r``, whereas :func:`pod_name` keeps the **first** 50 characters. Names are
Kubernetes names (ASCII); lengths are counted in characters.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import unicodedata
from collections.abc import Mapping

from kuberay.api.v1.constants import KIND_RAYCLUSTER, KIND_RAYJOB, KIND_RAYSERVICE
from kuberay.api.v1.raycluster_types import RayClusterSpec

__all__ = [
    "RANDOM_ALPHABET",
    "auth_secret_name",
    "autoscaler_role_name",
    "autoscaler_service_account_name",
    "ca_secret_name",
    "check_label",
    "check_name",
    "check_route_name",
    "cluster_domain",
    "fqdn_service_name",
    "gateway_name",
    "generate_ray_cluster_name",
    "generate_ray_job_id",
    "generate_worker_replica_group_name",
    "head_service_name",
    "headless_service_name",
    "httproute_name",
    "identifier",
    "ingress_name",
    "network_policy_head_name",
    "network_policy_worker_name",
    "pod_name",
    "random_suffix",
    "raycronjob_child_name",
    "redis_cleanup_job_name",
    "route_name",
    "serve_service_label",
    "serve_service_name",
    "tls_secret_name",
]

#: Alphabet of ``k8s.io/apimachinery/pkg/util/rand.String`` (no vowels, no confusable digits).
RANDOM_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_MAX_NAME_LENGTH = 50  # 63 - ("-worker-" + 5 random chars)
_MAX_LABEL_LENGTH = 63


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


def check_name(name: str) -> str:
    """``CheckName``: keep the last 50 characters; a leading digit, then a leading punctuation
    character, becomes ``r``. (``$+<=>^`|~`` are symbols, not punctuation, and stay.)"""
    if len(name) > _MAX_NAME_LENGTH:
        name = name[len(name) - _MAX_NAME_LENGTH :]
    if not name:
        return name
    if name[0].isascii() and name[0].isdigit():
        name = "r" + name[1:]
    if _is_punct(name[0]):
        name = "r" + name[1:]
    return name


def check_label(value: str) -> str:
    """``CheckLabel`` (also ``TrimJobName``): keep the last 63 characters; a leading
    punctuation character becomes ``r``."""
    if len(value) > _MAX_LABEL_LENGTH:
        value = value[len(value) - _MAX_LABEL_LENGTH :]
    if value and _is_punct(value[0]):
        value = "r" + value[1:]
    return value


def pod_name(prefix: str, node_type: str, generate_name: bool) -> str:
    """``PodName``: the first 50 characters of ``prefix``, ``-<node type>``, lower-cased, plus
    a trailing ``-`` for a ``generateName``."""
    result = (prefix[:_MAX_NAME_LENGTH] + "-" + node_type).lower()
    return result + "-" if generate_name else result


def check_route_name(name: str, namespace: str) -> str:
    """``CheckRouteName``: truncate to ``51 - len(namespace)`` characters, then
    :func:`check_name`."""
    max_length = 51 - len(namespace)
    if len(name) > max_length:
        name = name[: max(max_length, 0)]
    return check_name(name)


def head_service_name(crd_type: str, spec: RayClusterSpec | None, owner_name: str) -> str:
    """``<owner>-head-svc``; for a RayCluster, ``headService.metadata.name`` when set.

    ``crd_type`` is ``RayCluster``, ``RayJob`` or ``RayService`` (the owner of the Service).
    """
    name = f"{owner_name}-head-svc"
    if crd_type == KIND_RAYCLUSTER and spec is not None:
        service = spec.head_group_spec.head_service
        metadata = service.get("metadata") if isinstance(service, dict) else None
        custom = metadata.get("name") if isinstance(metadata, dict) else None
        if isinstance(custom, str) and custom:
            name = custom
    elif crd_type not in (KIND_RAYJOB, KIND_RAYSERVICE, KIND_RAYCLUSTER):
        raise ValueError(f"unknown CRD type: {crd_type}")
    return name


def cluster_domain(environ: Mapping[str, str] | None = None) -> str:
    """Env ``CLUSTER_DOMAIN`` or ``cluster.local``."""
    env = os.environ if environ is None else environ
    return env.get("CLUSTER_DOMAIN") or "cluster.local"


def fqdn_service_name(
    cluster_name: str,
    spec: RayClusterSpec | None,
    namespace: str,
    environ: Mapping[str, str] | None = None,
) -> str:
    """``<head svc>.<namespace>.svc.<cluster domain>`` of a RayCluster."""
    service = head_service_name(KIND_RAYCLUSTER, spec, cluster_name)
    return f"{service}.{namespace}.svc.{cluster_domain(environ)}"


def serve_service_name(name: str) -> str:
    """``<name>-serve-svc`` (name = RayCluster, or RayService)."""
    return f"{name}-serve-svc"


def serve_service_label(name: str) -> str:
    """Value of the ``ray.io/serve`` label on serve Services: ``<name>-serve``."""
    return f"{name}-serve"


def headless_service_name(cluster_name: str) -> str:
    """``<cluster>-headless`` (multi-host worker groups)."""
    return f"{cluster_name}-headless"


def ingress_name(cluster_name: str) -> str:
    """``CheckName(<cluster>-head-ingress)``."""
    return check_name(f"{cluster_name}-head-ingress")


def route_name(cluster_name: str, namespace: str) -> str:
    """OpenShift Route name: ``CheckRouteName(<cluster>-head-route, namespace)``."""
    return check_route_name(f"{cluster_name}-head-route", namespace)


def identifier(cluster_name: str, node_type: str) -> str:
    """Value of ``ray.io/identifier``: ``CheckLabel(<cluster>-<node type>)``."""
    return check_label(f"{cluster_name}-{node_type}")


def autoscaler_service_account_name(cluster_name: str, head_template_service_account: str) -> str:
    """``CheckName`` of the head template's serviceAccountName, or of the cluster name."""
    return check_name(head_template_service_account or cluster_name)


def autoscaler_role_name(cluster_name: str) -> str:
    """Role and RoleBinding of the autoscaler: ``CheckName(<cluster>)``."""
    return check_name(cluster_name)


def auth_secret_name(cluster_name: str) -> str:
    """Generated auth-token Secret: ``CheckName(<cluster>)``."""
    return check_name(cluster_name)


def redis_cleanup_job_name(cluster_name: str) -> str:
    """``CheckLabel(<cluster>-redis-cleanup)``."""
    return check_label(f"{cluster_name}-redis-cleanup")


def gateway_name(rayservice_name: str) -> str:
    """Incremental-upgrade Gateway: ``<rayservice>-gateway``."""
    return f"{rayservice_name}-gateway"


def httproute_name(rayservice_name: str) -> str:
    """Incremental-upgrade HTTPRoute: ``<rayservice>-httproute``."""
    return f"{rayservice_name}-httproute"


def network_policy_head_name(cluster_name: str) -> str:
    """``<cluster>-head``."""
    return f"{cluster_name}-head"


def network_policy_worker_name(cluster_name: str, group_name: str) -> str:
    """``<cluster>-workers-<group>``."""
    return f"{cluster_name}-workers-{group_name}"


def ca_secret_name(cluster_name: str, cluster_uid: str) -> str:
    """cert-manager CA secret: ``<cluster>-ca-secret-<first 8 chars of the UID>``."""
    return f"{cluster_name}-ca-secret-{cluster_uid[:8]}"


def tls_secret_name(cluster_name: str, node_type: str) -> str:
    """``ray-head-secret-<cluster>`` / ``ray-worker-secret-<cluster>``."""
    role = "head" if node_type == "head" else "worker"
    return f"ray-{role}-secret-{cluster_name}"


def random_suffix(length: int = 5) -> str:
    """``rand.String(length)`` from :data:`RANDOM_ALPHABET`."""
    return "".join(secrets.choice(RANDOM_ALPHABET) for _ in range(length))


def generate_ray_cluster_name(owner_name: str) -> str:
    """RayCluster of a RayJob/RayService: ``<owner>-<5 random chars>``."""
    return f"{owner_name}-{random_suffix()}"


def generate_ray_job_id(rayjob_name: str) -> str:
    """Ray job submission id: ``<rayjob>-<5 random chars>``."""
    return f"{rayjob_name}-{random_suffix()}"


def generate_worker_replica_group_name(group_name: str) -> str:
    """Multi-host replica name: ``<group>-<5 random chars>``."""
    return f"{group_name}-{random_suffix()}"


def raycronjob_child_name(cronjob_name: str, scheduled_time: dt.datetime) -> str:
    """Child RayJob of a RayCronJob: ``<cronjob>-<unix seconds / 60>`` (deterministic per tick).

    ``scheduled_time`` must be timezone-aware.
    """
    seconds = int(scheduled_time.timestamp())
    minutes = abs(seconds) // 60 * (1 if seconds >= 0 else -1)  # Go truncates toward zero
    return f"{cronjob_name}-{minutes}"
