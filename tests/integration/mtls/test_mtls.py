"""The mTLS controller and the RayCluster controller's certificate gate on the real apiserver,
with cert-manager's real CRDs; the test plays cert-manager's controller (see
:mod:`.fake_cert_manager`): it signs real certificates for what each Certificate asks."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import yaml

from kuberay.controllers.mtls import cert_manager_available
from kuberay.controllers.raycluster.status import ReconcileError
from kuberay.kube import Client
from kuberay.reconcile import Request
from tests.helpers import eventually
from tests.integration.mtls.conftest import start_mtls_operator
from tests.integration.mtls.fake_cert_manager import CM, FakeCertManager
from tests.integration.operator_harness import wait_for
from tests.integration.raycluster.helpers import pods_of, set_running, wait_event_reasons
from tests.kuberay_samples import KUBERAY_SAMPLES as SAMPLES
from tests.kuberay_samples import requires_kuberay_samples

NAME = "raycluster-mtls"


def sample(namespace: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((SAMPLES / "ray-cluster.mtls.yaml").read_text())
    doc["metadata"]["namespace"] = namespace
    return doc


async def certificates(client: Client, namespace: str) -> dict[str, dict[str, Any]]:
    items, _ = await client.list_all(CM, "Certificate", namespace)
    return {c["metadata"]["name"]: c for c in items}


async def wait_cert(
    client: Client, namespace: str, name: str, check: Any, message: str
) -> dict[str, Any]:
    """Wait until Certificate ``name`` exists and ``check(certificate)`` holds; returns it."""

    async def cert() -> dict[str, Any] | None:
        return (await certificates(client, namespace)).get(name)

    result: dict[str, Any] = await wait_for(
        cert,
        lambda c: c is not None and check(c),
        timeout=60,
        interval=0.2,
        message=f"Certificate {name}: {message}",
    )
    return result


@requires_kuberay_samples
async def test_sample_gets_kuberays_pki_and_pods_wait_for_it(
    cert_manager_crds: None, kclient: Client, namespace: str
) -> None:
    async with start_mtls_operator(kclient, namespace) as op:
        cluster = await kclient.create(sample(namespace))
        uid = cluster["metadata"]["uid"]

        async def pki() -> bool:
            issuers, _ = await kclient.list_all(CM, "Issuer", namespace)
            return len(issuers) == 2 and len(await certificates(kclient, namespace)) == 3

        await eventually(pki, timeout=60, message="issuers and certificates")
        issuers = {
            i["metadata"]["name"]: i for i in (await kclient.list_all(CM, "Issuer", namespace))[0]
        }
        assert issuers[f"ray-selfsigned-issuer-{NAME}"]["spec"] == {"selfSigned": {}}
        assert issuers[f"ray-ca-issuer-{NAME}"]["spec"] == {
            "ca": {"secretName": f"{NAME}-ca-secret-{uid[:8]}"}
        }
        certs = await certificates(kclient, namespace)
        ca = certs[f"ray-ca-certificate-{NAME}"]
        assert ca["spec"]["isCA"] is True
        assert ca["spec"]["commonName"] == f"ray-ca-{NAME}"
        assert ca["spec"]["privateKey"] == {"algorithm": "RSA", "size": 4096}
        assert (ca["spec"]["duration"], ca["spec"]["renewBefore"]) == ("87600h0m0s", "720h0m0s")
        assert ca["spec"]["usages"] == ["cert sign", "crl sign"]
        assert ca["spec"]["issuerRef"]["name"] == f"ray-selfsigned-issuer-{NAME}"
        head = certs[f"ray-head-cert-{NAME}"]
        assert head["spec"]["secretName"] == f"ray-head-secret-{NAME}"
        assert head["spec"]["dnsNames"] == [
            "localhost",
            f"{NAME}-head-svc.{namespace}.svc.cluster.local",
        ]
        assert head["spec"]["ipAddresses"] == ["127.0.0.1"]
        assert head["spec"]["usages"] == [
            "digital signature",
            "key encipherment",
            "server auth",
            "client auth",
        ]
        assert (head["spec"]["duration"], head["spec"]["renewBefore"]) == ("2160h0m0s", "360h0m0s")
        worker = certs[f"ray-worker-cert-{NAME}"]
        assert worker["spec"]["dnsNames"] == ["localhost"]
        assert worker["spec"]["issuerRef"] == {
            "name": f"ray-ca-issuer-{NAME}",
            "kind": "Issuer",
            "group": "cert-manager.io",
        }
        for obj in [*issuers.values(), *certs.values()]:
            (ref,) = obj["metadata"]["ownerReferences"]
            assert (ref["kind"], ref["uid"], ref["controller"]) == ("RayCluster", uid, True)
            assert obj["metadata"]["labels"]["ray.io/cluster"] == NAME
        await wait_event_reasons(kclient, namespace, NAME, {"MTLSCertsNotReady"})

        # Certificates not issued: the RayCluster controller refuses to create pods.
        with pytest.raises(ReconcileError, match="mTLS secrets not ready"):
            await op.raycluster.reconciler.reconcile(Request(namespace, NAME))
        assert await pods_of(kclient, namespace, NAME) == []

        cm = FakeCertManager()
        await cm.issue(kclient, namespace, f"ray-ca-certificate-{NAME}")
        await cm.issue(kclient, namespace, f"ray-head-cert-{NAME}")
        # the worker certificate expires within a day: a Warning says so
        await cm.issue(
            kclient, namespace, f"ray-worker-cert-{NAME}", valid_for=dt.timedelta(hours=5)
        )

        async def two_pods() -> list[dict[str, Any]] | None:
            pods = await pods_of(kclient, namespace, NAME)
            return pods if len(pods) == 2 else None

        pods = await eventually(two_pods, timeout=90, message="head and worker pods")
        for pod in pods:
            node_type = pod["metadata"]["labels"]["ray.io/node-type"]
            volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
            assert volumes["ray-tls"]["secret"]["secretName"] == f"ray-{node_type}-secret-{NAME}"
            assert pod["spec"]["initContainers"][0]["name"] == "wait-for-tls-ip-san"
        events = await wait_event_reasons(
            kclient, namespace, NAME, {"MTLSPKIReady", "MTLSCertificateExpiringSoon"}
        )
        expiring = [e for e in events if e["reason"] == "MTLSCertificateExpiringSoon"]
        assert {e["type"] for e in expiring} == {"Warning"}
        assert all(f"ray-worker-cert-{NAME}" in e["message"] for e in expiring)

        # Each issued Secret is owned (not controlled) by its Certificate.
        certs = await certificates(kclient, namespace)
        for cert_name, cert in certs.items():
            secret_name = cert["spec"]["secretName"]

            async def owned(secret_name: str = secret_name, cert: dict[str, Any] = cert) -> bool:
                secret = await kclient.get("v1", "Secret", secret_name, namespace)
                refs = secret["metadata"].get("ownerReferences") or []
                return [(r["kind"], r["uid"], r.get("controller")) for r in refs] == [
                    ("Certificate", cert["metadata"]["uid"], None)
                ]

            await eventually(owned, timeout=60, message=f"{cert_name} owns its Secret")


@requires_kuberay_samples
async def test_ip_sans_follow_the_pods(
    cert_manager_crds: None, kclient: Client, namespace: str
) -> None:
    async with start_mtls_operator(kclient, namespace):
        await kclient.create(sample(namespace))
        cm = FakeCertManager()
        for cert in ("ray-head-cert", "ray-worker-cert"):
            await wait_cert(kclient, namespace, f"{cert}-{NAME}", bool, cert)
            await cm.issue(kclient, namespace, f"{cert}-{NAME}")

        async def two_pods() -> list[dict[str, Any]] | None:
            pods = await pods_of(kclient, namespace, NAME)
            return pods if len(pods) == 2 else None

        pods = await eventually(two_pods, timeout=90, message="head and worker pods")
        by_type = {p["metadata"]["labels"]["ray.io/node-type"]: p for p in pods}
        await set_running(kclient, by_type["head"], ip="10.1.0.9")
        await set_running(kclient, by_type["worker"], ip="10.1.0.10")

        head = await wait_cert(
            kclient,
            namespace,
            f"ray-head-cert-{NAME}",
            lambda c: c["spec"]["ipAddresses"] == ["10.1.0.9", "127.0.0.1"],
            "head pod IP in the head certificate",
        )
        worker = await wait_cert(
            kclient,
            namespace,
            f"ray-worker-cert-{NAME}",
            lambda c: c["spec"]["ipAddresses"] == ["10.1.0.10", "127.0.0.1"],
            "worker pod IP in the worker certificate",
        )
        assert head["metadata"]["generation"] == 2 and worker["metadata"]["generation"] == 2
        events = await wait_event_reasons(kclient, namespace, NAME, {"MTLSCertificatesUpdated"})
        notes = {e["message"] for e in events if e["reason"] == "MTLSCertificatesUpdated"}
        assert "Updated head certificate SANs (IPs: [10.1.0.9 127.0.0.1])" in notes


async def test_cert_manager_api_is_discovered(cert_manager_crds: None, kclient: Client) -> None:
    # the CRDs from cert-manager's module make the apiserver serve cert-manager.io/v1
    assert await cert_manager_available(kclient) is True


@requires_kuberay_samples
async def test_tls_without_cert_manager_is_refused(
    cert_manager_crds: None, kclient: Client, namespace: str
) -> None:
    async with start_mtls_operator(kclient, namespace, cert_manager=False) as op:
        await kclient.create(sample(namespace))
        events = await wait_event_reasons(kclient, namespace, NAME, {"InvalidRayClusterSpec"})
        (event,) = [e for e in events if e["reason"] == "InvalidRayClusterSpec"]
        assert event["type"] == "Warning"
        assert event["message"] == (
            f"The RayCluster spec is invalid {namespace}/{NAME}: tlsOptions requires "
            "cert-manager, but cert-manager is not installed"
        )
        await op.raycluster.reconciler.reconcile(Request(namespace, NAME))
        assert await pods_of(kclient, namespace, NAME) == []
        services, _ = await kclient.list_all("v1", "Service", namespace)
        assert services == []
