"""What to dial for a RayCluster's dashboard, or for its head's Serve proxy (pure values).

Auth follows KubeRay: when ``authOptions.mode`` is ``token`` the dashboard client sends
``x-ray-authorization: Bearer <token>`` with the token read, at each call, from key
``auth_token`` of Secret ``authOptions.secretName`` or, by default, ``CheckName(<cluster>)``.
KubeRay does the same with ``enableK8sTokenAuth`` (the operator does not create that Secret in
this mode, so calls fail until one exists; KubeRay also refuses the mode for RayJob and
RayService specs); :attr:`DashboardTarget.k8s_token_auth` records the mode so that error can
say why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from kuberay.api.v1 import constants as c
from kuberay.api.v1.rules import is_auth_enabled, is_k8s_auth_enabled
from kuberay.controllers.builders.auth import auth_token_secret_name
from kuberay.controllers.builders.names import head_service_name
from kuberay.controllers.common.constants import RAY_CONTAINER_INDEX
from kuberay.controllers.common.objects import (
    as_list,
    as_map,
    find_container_port,
    metadata,
    spec,
)

__all__ = ["DashboardTarget", "ServeProxyTarget"]


@attrs.frozen
class DashboardTarget:
    """The dashboard of one RayCluster: its head Service's port ``port_name``."""

    namespace: str
    cluster_name: str
    head_service: str
    port_name: str = c.DASHBOARD_PORT_NAME
    #: Token-mode auth Secret name (None: the cluster does not use token auth).
    auth_secret: str | None = None
    k8s_token_auth: bool = False

    @classmethod
    def from_cluster(cls, cluster: Mapping[str, Any]) -> DashboardTarget:
        """The target for a RayCluster object (dict as read from the API)."""
        meta = metadata(cluster)
        name = str(meta.get("name") or "")
        options = as_map(spec(cluster).get("authOptions"))
        secret = auth_token_secret_name(name, options) if is_auth_enabled(cluster) else None
        return cls(
            namespace=str(meta.get("namespace") or ""),
            cluster_name=name,
            head_service=head_service_name(cluster),
            auth_secret=secret,
            k8s_token_auth=secret is not None and is_k8s_auth_enabled(options),
        )


@attrs.frozen
class ServeProxyTarget:
    """The Serve proxy of one head pod (``GET /-/healthz`` on its ``serve`` port)."""

    namespace: str
    pod_name: str
    pod_ip: str
    port: int = c.DEFAULT_SERVING_PORT

    @classmethod
    def from_head_pod(cls, pod: Mapping[str, Any]) -> ServeProxyTarget:
        """Port = the Ray container's port named ``serve`` (default 8000), as KubeRay."""
        meta = metadata(pod)
        containers = as_list(as_map(pod.get("spec")).get("containers"))
        port = c.DEFAULT_SERVING_PORT
        if containers:
            ray_container = as_map(containers[RAY_CONTAINER_INDEX])
            port = find_container_port(ray_container, c.SERVING_PORT_NAME, port)
        return cls(
            namespace=str(meta.get("namespace") or ""),
            pod_name=str(meta.get("name") or ""),
            pod_ip=str(as_map(pod.get("status")).get("podIP") or ""),
            port=port,
        )
