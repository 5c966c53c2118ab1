"""Operator-level switches that change what the builders produce.

KubeRay reads these from the operator's environment (``ENABLE_PROBES_INJECTION`` ...) and from
its configuration file (default container envs, sidecars, default pod labels/annotations). The
builders never read ``os.environ``: the caller builds one :class:`BuildOptions` (for example with
:meth:`BuildOptions.from_env`) and passes it in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from kuberay.api.v1 import constants as c

from .constants import (
    CLUSTER_DOMAIN_ENV_KEY,
    DEFAULT_DOMAIN_NAME,
    ENABLE_DETERMINISTIC_HEAD_POD_NAME,
    ENABLE_GCS_FT_REDIS_CLEANUP,
    ENABLE_INIT_CONTAINER_INJECTION,
    ENABLE_LOGIN_SHELL,
    ENABLE_PROBES_INJECTION,
    ENABLE_RANDOM_POD_DELETE,
    ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE,
    USE_INGRESS_ON_OPENSHIFT,
)

__all__ = ["BuildOptions"]


def _not_false(value: str | None) -> bool:
    """KubeRay's "on unless set to false (case-insensitive)" switches."""
    return (value or "").lower() != "false"


def _is_true(value: str | None) -> bool:
    """KubeRay's "off unless set to true (case-insensitive)" switches."""
    return (value or "").lower() == "true"


@dataclass(frozen=True)
class BuildOptions:
    """Inputs of the builders that do not come from the RayCluster itself."""

    #: ``ENABLE_INIT_CONTAINER_INJECTION`` (worker ``wait-gcs-ready`` init container).
    enable_init_container_injection: bool = True
    #: ``ENABLE_PROBES_INJECTION`` (liveness/readiness probes on the Ray container).
    enable_probes_injection: bool = True
    #: ``ENABLE_LOGIN_SHELL`` (``/bin/bash -cl --`` instead of ``-c``).
    enable_login_shell: bool = False
    #: ``ENABLE_DETERMINISTIC_HEAD_POD_NAME`` (head pod ``name`` instead of ``generateName``).
    enable_deterministic_head_pod_name: bool = False
    #: ``ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE`` (default head Service not headless).
    enable_ray_head_cluster_ip_service: bool = False
    #: ``ENABLE_RANDOM_POD_DELETE`` (scale down without autoscaler hints; reconciler only).
    enable_random_pod_delete: bool = False
    #: ``ENABLE_GCS_FT_REDIS_CLEANUP`` (Redis cleanup finalizer; reconciler only).
    enable_gcs_ft_redis_cleanup: bool = True
    #: ``USE_INGRESS_ON_OPENSHIFT`` (Ingress rather than Route on OpenShift; reconciler only).
    use_ingress_on_openshift: bool = False
    #: ``CLUSTER_DOMAIN`` used in the head Service FQDN.
    cluster_domain: str = DEFAULT_DOMAIN_NAME
    #: Version string stamped on head pods and in ``RAY_USAGE_STATS_EXTRA_TAGS``.
    kuberay_version: str = c.KUBERAY_VERSION
    #: Config ``defaultContainerEnvs``: EnvVar dicts added to every Ray container if absent.
    default_container_envs: Sequence[Mapping[str, Any]] = ()
    #: Config ``headSidecarContainers`` / ``workerSidecarContainers``: appended Containers.
    head_sidecar_containers: Sequence[Mapping[str, Any]] = ()
    worker_sidecar_containers: Sequence[Mapping[str, Any]] = ()
    #: Config ``defaultPodAnnotations`` / ``defaultPodLabels``: added to pods if absent.
    default_pod_annotations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    default_pod_labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_env(cls, env: Mapping[str, str], **overrides: Any) -> BuildOptions:
        """Read the switches from an environment mapping (e.g. ``dict(os.environ)``)."""
        values: dict[str, Any] = {
            "enable_init_container_injection": _not_false(env.get(ENABLE_INIT_CONTAINER_INJECTION)),
            "enable_probes_injection": _not_false(env.get(ENABLE_PROBES_INJECTION)),
            "enable_login_shell": _is_true(env.get(ENABLE_LOGIN_SHELL)),
            "enable_deterministic_head_pod_name": _is_true(
                env.get(ENABLE_DETERMINISTIC_HEAD_POD_NAME)
            ),
            "enable_ray_head_cluster_ip_service": _is_true(
                env.get(ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE)
            ),
            "enable_random_pod_delete": _is_true(env.get(ENABLE_RANDOM_POD_DELETE)),
            "enable_gcs_ft_redis_cleanup": _not_false(env.get(ENABLE_GCS_FT_REDIS_CLEANUP)),
            "use_ingress_on_openshift": _is_true(env.get(USE_INGRESS_ON_OPENSHIFT)),
            "cluster_domain": env.get(CLUSTER_DOMAIN_ENV_KEY) or DEFAULT_DOMAIN_NAME,
        }
        values.update(overrides)
        return cls(**values)

    def container_command(self, *extra_options: str) -> list[str]:
        """KubeRay ``GetContainerCommand``: ``["/bin/bash", "-c<extra>[l]", "--"]``."""
        flags = "c" + "".join(extra_options) + ("l" if self.enable_login_shell else "")
        return ["/bin/bash", "-" + flags, "--"]
