"""Names KubeRay gives the objects it creates, with its exact truncation rules.

* :func:`check_name` (objects, 50 chars) and :func:`check_label` (label values, 63 chars) keep
  the *last* characters of a long name, then replace a leading digit (``check_name`` only) or
  punctuation character with ``r`` (defined in :mod:`kuberay.naming`, re-exported);
* :func:`pod_name` instead keeps the *first* 50 characters of the prefix and lower-cases;
* the head Service is ``<cluster>-head-svc`` unless ``headGroupSpec.headService.metadata.name``
  is set (never truncated), and the worker FQDN is built from it.

Lengths are counted in UTF-8 bytes and "digit"/"punctuation" are judged on the first *byte*
(as Go does with ``unicode.IsDigit(rune(s[0]))``); for the ASCII names Kubernetes accepts
this is the same as counting characters.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Final

from kuberay.api.v1 import constants as c
from kuberay.controllers.common.constants import DASH_SYMBOL
from kuberay.controllers.common.objects import as_map, metadata, pod_spec_of_template, spec
from kuberay.naming import check_label, check_name

__all__ = [
    "RANDOM_SUFFIX_ALPHABET",
    "auth_secret_name",
    "autoscaler_role_binding_name",
    "autoscaler_role_name",
    "autoscaler_service_account_name",
    "check_label",
    "check_name",
    "check_route_name",
    "extract_ray_ip_from_fqdn",
    "fqdn_head_service_name",
    "generate_identifier",
    "generate_ray_cluster_name",
    "generate_ray_job_id",
    "generate_ray_worker_replica_group_name",
    "head_group_service_account_name",
    "head_pod_name",
    "head_service_name",
    "head_service_name_for_owner",
    "headless_service_name",
    "ingress_name",
    "pod_name",
    "random_suffix",
    "redis_cleanup_job_name",
    "route_name",
    "serve_service_label",
    "serve_service_name",
    "tls_cert_name",
    "tls_secret_name",
    "worker_pod_generate_name",
]

#: Alphabet of apimachinery ``rand.String`` (no vowels, no ambiguous characters).
RANDOM_SUFFIX_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"

_MAX_POD_PREFIX_LENGTH: Final = 50


def pod_name(prefix: str, node_type: str, is_generate_name: bool) -> str:
    """KubeRay ``PodName``: ``<prefix[:50]>-<type>`` lower-cased, plus ``-`` for generateName."""
    raw = prefix.encode("utf-8")[:_MAX_POD_PREFIX_LENGTH]
    result = (raw.decode("utf-8", errors="replace") + DASH_SYMBOL + node_type).lower()
    return result + DASH_SYMBOL if is_generate_name else result


def head_pod_name(cluster_name: str, *, deterministic: bool) -> str:
    """Head pod ``generateName`` (``<cluster>-head-``) or, if deterministic, its ``name``."""
    return pod_name(cluster_name, c.HEAD_NODE, not deterministic)


def worker_pod_generate_name(cluster_name: str, group_name: str) -> str:
    """Worker pod ``generateName``: ``<(cluster-group)[:50]>-worker-``."""
    return pod_name(f"{cluster_name}-{group_name}", c.WORKER_NODE, True)


def generate_identifier(cluster_name: str, node_type: str) -> str:
    """Raw ``ray.io/identifier`` value (callers apply :func:`check_label`)."""
    return f"{cluster_name}-{node_type}"


def head_service_name_for_owner(owner_name: str) -> str:
    """``<owner>-head-svc`` (RayService- and RayJob-level head Services)."""
    return f"{owner_name}-{c.HEAD_NODE}-svc"


def head_service_name(cluster: Mapping[str, Any]) -> str:
    """The RayCluster's head Service name (custom ``headService.metadata.name`` wins)."""
    custom = as_map(spec(cluster).get("headGroupSpec")).get("headService")
    if isinstance(custom, Mapping):
        name = metadata(custom).get("name")
        if name:
            return str(name)
    return head_service_name_for_owner(str(metadata(cluster).get("name", "")))


def fqdn_head_service_name(cluster: Mapping[str, Any], cluster_domain: str) -> str:
    """``<head svc>.<namespace>.svc.<cluster domain>`` (``FQ_RAY_IP``)."""
    namespace = metadata(cluster).get("namespace") or ""
    return f"{head_service_name(cluster)}.{namespace}.svc.{cluster_domain}"


def extract_ray_ip_from_fqdn(fqdn: str) -> str:
    """``RAY_IP`` (deprecated): the first DNS label of the FQDN."""
    return fqdn.split(".")[0]


def serve_service_name(name: str) -> str:
    """``<name>-serve-svc``."""
    return f"{name}-{c.SERVE_NAME}-svc"


def serve_service_label(name: str) -> str:
    """Value of ``ray.io/serve`` on a serve Service: ``<name>-serve``."""
    return f"{name}-{c.SERVE_NAME}"


def headless_service_name(cluster_name: str) -> str:
    """Headless worker Service for multi-host groups: ``<cluster>-headless``."""
    return f"{cluster_name}{DASH_SYMBOL}{c.HEADLESS_SERVICE_SUFFIX}"


def ingress_name(cluster_name: str) -> str:
    """Dashboard Ingress: ``CheckName(<cluster>-head-ingress)``."""
    return check_name(f"{cluster_name}-{c.HEAD_NODE}-ingress")


def check_route_name(name: str, namespace: str) -> str:
    """KubeRay ``CheckRouteName``: cut to ``51 - len(namespace)`` bytes, then :func:`check_name`."""
    max_length = max(51 - len(namespace.encode("utf-8")), 0)
    raw = name.encode("utf-8")
    if len(raw) > max_length:
        name = raw[:max_length].decode("utf-8", errors="replace")
    return check_name(name)


def route_name(cluster_name: str, namespace: str) -> str:
    """OpenShift dashboard Route name."""
    return check_route_name(f"{cluster_name}-{c.HEAD_NODE}-route", namespace)


def head_group_service_account_name(cluster: Mapping[str, Any]) -> str:
    """Head template ``serviceAccountName`` if set, else the cluster name (unclipped)."""
    template = as_map(spec(cluster).get("headGroupSpec")).get("template")
    account = pod_spec_of_template(template).get("serviceAccountName")
    if account:
        return str(account)
    return str(metadata(cluster).get("name", ""))


def autoscaler_service_account_name(cluster: Mapping[str, Any]) -> str:
    """The ServiceAccount the autoscaling head pod runs as and the RoleBinding binds.

    A head template ``serviceAccountName`` is used exactly as written (the user
    created that account; KubeRay clips it with ``CheckName``, which names a
    nonexistent account once it exceeds 50 characters). Otherwise the account
    KubeRay creates: ``CheckName(<cluster name>)``.
    """
    template = as_map(spec(cluster).get("headGroupSpec")).get("template")
    account = pod_spec_of_template(template).get("serviceAccountName")
    if isinstance(account, str) and account:
        return account
    return check_name(head_group_service_account_name(cluster))


def autoscaler_role_name(cluster_name: str) -> str:
    return check_name(cluster_name)


def autoscaler_role_binding_name(cluster_name: str) -> str:
    return check_name(cluster_name)


def auth_secret_name(cluster_name: str) -> str:
    """Generated token-auth Secret: ``CheckName(<cluster>)``."""
    return check_name(cluster_name)


def redis_cleanup_job_name(cluster_name: str) -> str:
    """``CheckLabel(<cluster>-redis-cleanup)``."""
    return check_label(f"{cluster_name}-redis-cleanup")


def tls_secret_name(cluster_name: str, node_type: str) -> str:
    """cert-manager Secret mounted as ``ray-tls``: ``ray-{head,worker}-secret-<cluster>``."""
    prefix = "ray-head-secret" if node_type == c.HEAD_NODE else "ray-worker-secret"
    return f"{prefix}-{cluster_name}"


def tls_cert_name(cluster_name: str, node_type: str) -> str:
    """cert-manager Certificate: ``ray-{head,worker}-cert-<cluster>``."""
    prefix = "ray-head-cert" if node_type == c.HEAD_NODE else "ray-worker-cert"
    return f"{prefix}-{cluster_name}"


def random_suffix(rng: random.Random | None = None, length: int = 5) -> str:
    """apimachinery ``rand.String``: ``length`` characters of :data:`RANDOM_SUFFIX_ALPHABET`."""
    chooser = rng if rng is not None else random.SystemRandom()
    return "".join(chooser.choice(RANDOM_SUFFIX_ALPHABET) for _ in range(length))


def generate_ray_worker_replica_group_name(
    group_name: str, rng: random.Random | None = None
) -> str:
    """Multi-host replica name ``<group>-<rand5>`` (``ray.io/worker-group-replica-name``)."""
    return f"{group_name}-{random_suffix(rng)}"


def generate_ray_cluster_name(owner_name: str, rng: random.Random | None = None) -> str:
    """RayCluster name for a RayJob/RayService: ``<owner>-<rand5>``."""
    return f"{owner_name}-{random_suffix(rng)}"


def generate_ray_job_id(rayjob_name: str, rng: random.Random | None = None) -> str:
    """Ray job submission id: ``<rayjob>-<rand5>``."""
    return f"{rayjob_name}-{random_suffix(rng)}"
