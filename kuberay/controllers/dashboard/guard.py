"""The dial guard: which addresses an operator running outside a cluster may connect to.

Outside a pod the operator resolves a head Service to a pod IP read from the API. On a
developer machine or a test host those IPs (kwok's, a remote cluster's) are not local: dialling
them would send packets off the machine, or hang for the whole timeout. So only addresses in an
allow-list of networks are dialled: ``127.0.0.0/8`` by default, or the comma-separated CIDRs of
``KUBERAY_DASHBOARD_ALLOWED_NETWORKS``. Anything else fails at once, without a connection
attempt. In a pod there is no restriction (KubeRay dials the Service's DNS name).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Mapping

from .errors import ALLOWED_NETWORKS_ENV, Cause, DashboardUnreachable, host_port

__all__ = [
    "ALLOWED_NETWORKS_ENV",
    "DEFAULT_ALLOWED_NETWORKS",
    "DialGuard",
    "parse_networks",
]

DEFAULT_ALLOWED_NETWORKS = ("127.0.0.0/8",)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(cidrs: Iterable[str]) -> tuple[Network, ...]:
    """CIDRs (or bare addresses) to networks; raises ValueError naming a bad entry."""
    networks: list[Network] = []
    for raw in cidrs:
        text = raw.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError as exc:
            raise ValueError(f"{ALLOWED_NETWORKS_ENV}: {text!r} is not a CIDR: {exc}") from None
    return tuple(networks)


class DialGuard:
    """``check(host)`` raises DashboardUnreachable unless ``host`` may be dialled.

    ``networks`` None means no restriction (in a pod).
    """

    def __init__(self, networks: Iterable[Network] | None) -> None:
        self.networks = None if networks is None else tuple(networks)

    @classmethod
    def from_env(
        cls,
        *,
        in_cluster: bool,
        allowed_networks: Iterable[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> DialGuard:
        """No restriction in a pod; else ``allowed_networks``, else the env var, else
        ``127.0.0.0/8``."""
        if in_cluster:
            return cls(None)
        if allowed_networks is None:
            env = os.environ if environ is None else environ
            text = env.get(ALLOWED_NETWORKS_ENV, "")
            allowed_networks = text.split(",") if text.strip() else DEFAULT_ALLOWED_NETWORKS
        return cls(parse_networks(allowed_networks))

    def allows(self, host: str) -> bool:
        if self.networks is None:
            return True
        try:
            address = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            return False  # a name would need a DNS lookup, which may leave the machine
        return any(address in net for net in self.networks)

    def check(self, host: str, *, what: str, port: int | None = None) -> None:
        """Raise DashboardUnreachable (no connection attempted) if ``host`` is refused; its
        cause is :attr:`~.errors.Cause.NOT_ALLOWED`, its address ``host:port`` (``host`` when
        ``port`` is None) and its detail the allowed networks."""
        if self.allows(host):
            return
        allowed = ", ".join(str(n) for n in self.networks or ())
        address = host_port(host, port)
        raise DashboardUnreachable(
            f"{what}: not dialling {address}: the operator runs outside the cluster and {host} "
            f"is not in the allowed networks ({allowed}); set {ALLOWED_NETWORKS_ENV} to allow "
            "it, or use --use-kubernetes-proxy",
            cause=Cause.NOT_ALLOWED,
            address=address,
            detail=allowed,
        )
