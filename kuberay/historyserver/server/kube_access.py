"""The Kubernetes client of the history server, made only when a feature needs one (live
clusters, the Kubernetes login): with live clusters and the login off the server never
imports a Kubernetes client, let alone dials an apiserver.

Which configuration (KubeRay's ``NewClientManager``): ``--kubeconfigs <path>`` (one path);
else with ``--use-kubernetes-proxy`` the user's kubeconfig (``$KUBECONFIG``, else
``~/.kube/config``); else the pod's service account. Requests are limited to
``--kube-api-qps``/``--kube-api-burst``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kuberay.historyserver.server.config import ConfigError, ServerOptions

if TYPE_CHECKING:
    from kuberay.kube.client import Client


async def open_kube(options: ServerOptions) -> Client:
    """The client ``options`` ask for; ``ConfigError`` (one line) when none can be made."""
    from kuberay.kube.client import Client
    from kuberay.kube.errors import KubeError
    from kuberay.kube.kubeconfig import ConfigError as KubeConfigError

    kwargs: dict[str, Any] = {
        "qps": options.kube_api_qps,
        "burst": options.kube_api_burst,
        "user_agent": "kuberay-history-server",
    }
    try:
        if options.kubeconfigs:
            return await Client.from_kubeconfig(options.kubeconfigs, **kwargs)
        if options.use_kubernetes_proxy:
            return await Client.from_kubeconfig(None, **kwargs)
        return Client.from_in_cluster(**kwargs)
    except (KubeConfigError, KubeError, OSError, ValueError) as exc:
        raise ConfigError(f"cannot configure a Kubernetes client: {exc}") from exc


async def bearer_headers(client: Client) -> Mapping[str, str]:
    """The client's own ``Authorization`` header for the apiserver (none with a client
    certificate)."""
    from kuberay.kube.restconfig import authorization

    value = await authorization(client.configuration)
    return {"Authorization": value} if value else {}
