"""Pure builders of the cert-manager objects KubeRay's mTLS controller makes for a RayCluster.

Per cluster ``<c>`` (all with a controller reference to the RayCluster and the labels
``app.kubernetes.io/{name,created-by,component}`` and ``ray.io/cluster``):

1. Issuer ``ray-selfsigned-issuer-<c>`` (``selfSigned: {}``);
2. Certificate ``ray-ca-certificate-<c>``: the CA (``isCA``, CN ``ray-ca-<c>``, RSA 4096,
   ``87600h`` / renew ``720h`` before, usages ``cert sign``, ``crl sign``), Secret
   ``<c>-ca-secret-<first 8 chars of the cluster uid>``, issued by 1;
3. Issuer ``ray-ca-issuer-<c>`` (``ca.secretName`` = the CA Secret);
4. Certificates ``ray-head-cert-<c>`` / ``ray-worker-cert-<c>``, Secrets
   ``ray-head-secret-<c>`` / ``ray-worker-secret-<c>``, issued by 3: ``2160h`` / renew
   ``360h`` before, usages ``digital signature``, ``key encipherment``, ``server auth``,
   ``client auth``; DNS names ``localhost`` and (head) the head Service FQDN, sorted; IP
   addresses the sorted set of the pod IPs of that node type plus ``127.0.0.1``.

Durations are written the way Go's ``metav1.Duration`` prints them (``2160h0m0s``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from kuberay.api.v1 import constants as c
from kuberay.controllers.builders.names import (
    fqdn_head_service_name,
    tls_cert_name,
    tls_secret_name,
)
from kuberay.controllers.builders.owner import controller_owner_reference
from kuberay.controllers.common.objects import as_list, as_map, as_str, metadata
from kuberay.gocompat.gotime import parse_rfc3339_or_none

__all__ = [
    "CERTIFICATE_KIND",
    "CERT_MANAGER_API_VERSION",
    "ISSUER_KIND",
    "REQUIRED_SECRET_KEYS",
    "build_ca_certificate",
    "build_ca_issuer",
    "build_leaf_certificate",
    "build_selfsigned_issuer",
    "ca_certificate_name",
    "ca_issuer_name",
    "ca_secret_name",
    "certificate_needs_update",
    "certificate_not_after",
    "is_certificate_ready",
    "pod_ips",
    "selfsigned_issuer_name",
]

CERT_MANAGER_API_VERSION = "cert-manager.io/v1"
CERTIFICATE_KIND = "Certificate"
ISSUER_KIND = "Issuer"
#: Keys a leaf Secret must hold before pods mounting it are created.
REQUIRED_SECRET_KEYS = ("tls.crt", "tls.key", "ca.crt")
LEAF_USAGES = ("digital signature", "key encipherment", "server auth", "client auth")
LOOPBACK_IP = "127.0.0.1"


def selfsigned_issuer_name(cluster_name: str) -> str:
    """``ray-selfsigned-issuer-<cluster>``."""
    return f"ray-selfsigned-issuer-{cluster_name}"


def ca_certificate_name(cluster_name: str) -> str:
    """``ray-ca-certificate-<cluster>``."""
    return f"ray-ca-certificate-{cluster_name}"


def ca_issuer_name(cluster_name: str) -> str:
    """``ray-ca-issuer-<cluster>``."""
    return f"ray-ca-issuer-{cluster_name}"


def ca_secret_name(cluster: Mapping[str, Any]) -> str:
    """``<cluster>-ca-secret-<first 8 characters of its uid>``."""
    meta = metadata(cluster)
    return f"{as_str(meta.get('name'))}-ca-secret-{as_str(meta.get('uid'))[:8]}"


def _meta(cluster: Mapping[str, Any], name: str, component: str) -> dict[str, Any]:
    cmeta = metadata(cluster)
    return {
        "name": name,
        "namespace": as_str(cmeta.get("namespace")),
        "labels": {
            c.KUBERNETES_APPLICATION_NAME_LABEL_KEY: c.APPLICATION_NAME,
            c.KUBERNETES_CREATED_BY_LABEL_KEY: c.COMPONENT_NAME,
            "app.kubernetes.io/component": component,
            c.RAY_CLUSTER_LABEL_KEY: as_str(cmeta.get("name")),
        },
        "ownerReferences": [controller_owner_reference(cluster)],
    }


def _issuer_ref(name: str) -> dict[str, str]:
    return {"name": name, "kind": ISSUER_KIND, "group": "cert-manager.io"}


def build_selfsigned_issuer(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """The self-signed Issuer that bootstraps the CA."""
    name = as_str(metadata(cluster).get("name"))
    return {
        "apiVersion": CERT_MANAGER_API_VERSION,
        "kind": ISSUER_KIND,
        "metadata": _meta(cluster, selfsigned_issuer_name(name), "selfsigned-issuer"),
        "spec": {"selfSigned": {}},
    }


def build_ca_certificate(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """The cluster's CA Certificate (created once, never updated)."""
    name = as_str(metadata(cluster).get("name"))
    return {
        "apiVersion": CERT_MANAGER_API_VERSION,
        "kind": CERTIFICATE_KIND,
        "metadata": _meta(cluster, ca_certificate_name(name), "ca-certificate"),
        "spec": {
            "commonName": f"ray-ca-{name}",
            "duration": "87600h0m0s",
            "renewBefore": "720h0m0s",
            "secretName": ca_secret_name(cluster),
            "isCA": True,
            "usages": ["cert sign", "crl sign"],
            "privateKey": {"algorithm": "RSA", "size": 4096},
            "issuerRef": _issuer_ref(selfsigned_issuer_name(name)),
        },
    }


def build_ca_issuer(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """The Issuer signing the leaf certificates with the cluster's CA."""
    name = as_str(metadata(cluster).get("name"))
    return {
        "apiVersion": CERT_MANAGER_API_VERSION,
        "kind": ISSUER_KIND,
        "metadata": _meta(cluster, ca_issuer_name(name), "ca-issuer"),
        "spec": {"ca": {"secretName": ca_secret_name(cluster)}},
    }


def pod_ips(pods: Iterable[Mapping[str, Any]], node_type: str, cluster_name: str) -> list[str]:
    """The sorted set of IPs of the live (not terminating, not Succeeded/Failed) pods of
    ``node_type`` in the cluster, plus ``127.0.0.1``."""
    ips = {LOOPBACK_IP}
    for pod in pods:
        labels = as_map(metadata(pod).get("labels"))
        if labels.get(c.RAY_CLUSTER_LABEL_KEY) != cluster_name:
            continue
        if labels.get(c.RAY_NODE_TYPE_LABEL_KEY) != node_type:
            continue
        if metadata(pod).get("deletionTimestamp"):
            continue
        status = as_map(pod.get("status"))
        if status.get("phase") in ("Succeeded", "Failed"):
            continue
        ip = as_str(status.get("podIP"))
        if ip:
            ips.add(ip)
    return sorted(ips)


def build_leaf_certificate(
    cluster: Mapping[str, Any], node_type: str, ips: list[str], cluster_domain: str
) -> dict[str, Any]:
    """The head (``node_type="head"``) or worker Certificate with ``ips`` as IP SANs."""
    name = as_str(metadata(cluster).get("name"))
    head = node_type == c.HEAD_NODE
    dns = ["localhost"]
    if head:
        fqdn = fqdn_head_service_name(cluster, cluster_domain)
        if fqdn not in dns:
            dns.append(fqdn)
    component = "head-certificate" if head else "worker-certificate"
    return {
        "apiVersion": CERT_MANAGER_API_VERSION,
        "kind": CERTIFICATE_KIND,
        "metadata": _meta(cluster, tls_cert_name(name, node_type), component),
        "spec": {
            "secretName": tls_secret_name(name, node_type),
            "duration": "2160h0m0s",
            "renewBefore": "360h0m0s",
            "dnsNames": sorted(dns),
            "ipAddresses": list(ips),
            "usages": list(LEAF_USAGES),
            "issuerRef": _issuer_ref(ca_issuer_name(name)),
        },
    }


def _sets_equal(live: list[Any], want: list[Any]) -> bool:
    # KubeRay's setsEqual(existing, desired): same length, every desired value in existing.
    return len(live) == len(want) and all(v in set(live) for v in want)


def certificate_needs_update(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """KubeRay's check: labels differ, or the DNS names / IP addresses differ as sets."""
    live_labels = dict(as_map(metadata(existing).get("labels")))
    if live_labels != dict(as_map(metadata(desired).get("labels"))):
        return True
    live, want = as_map(existing.get("spec")), as_map(desired.get("spec"))
    return not all(
        _sets_equal(list(as_list(live.get(k))), list(as_list(want.get(k))))
        for k in ("dnsNames", "ipAddresses")
    )


def is_certificate_ready(cert: Mapping[str, Any]) -> bool:
    """The ``Ready`` condition is True and observed at the Certificate's generation."""
    generation = metadata(cert).get("generation")
    for cond in as_list(as_map(cert.get("status")).get("conditions")):
        cond = as_map(cond)
        if cond.get("type") == "Ready":
            return cond.get("status") == "True" and cond.get("observedGeneration") == generation
    return False


def certificate_not_after(cert: Mapping[str, Any]) -> dt.datetime | None:
    """``status.notAfter`` as an aware datetime, or None."""
    return parse_rfc3339_or_none(as_map(cert.get("status")).get("notAfter"))
