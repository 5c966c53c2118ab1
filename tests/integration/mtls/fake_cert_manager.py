"""The test acting as cert-manager: issues a Certificate the way cert-manager's controller
would be seen to (the real cert-manager controller is not run here).

:func:`issue` signs a real X.509 certificate (``cryptography``) with the Certificate's DNS
names and IP addresses as SANs, writes its Secret (``tls.crt``, ``tls.key``, ``ca.crt``, the
``cert-manager.io/*`` annotations cert-manager sets) and marks the Certificate ``Ready`` at its
current generation with ``notAfter``. The CA is the test's own, one per call site."""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kuberay.kube import Client, NotFound

CM = "cert-manager.io/v1"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


class FakeCertManager:
    """A CA that issues what Certificates ask for."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake-cert-manager-ca")])
        now = dt.datetime.now(dt.UTC)
        self.ca = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=1))
            .not_valid_after(now + dt.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )

    def sign(
        self, spec: dict[str, Any], valid_for: dt.timedelta
    ) -> tuple[bytes, bytes, dt.datetime]:
        """(certificate PEM, key PEM, notAfter) for a Certificate ``spec``."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        not_after = (now + valid_for).replace(microsecond=0)
        sans: list[x509.GeneralName] = [x509.DNSName(d) for d in spec.get("dnsNames") or []]
        sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in spec.get("ipAddresses") or []]
        cn = spec.get("commonName") or (spec.get("dnsNames") or ["leaf"])[0]
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
            .issuer_name(self.ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=1))
            .not_valid_after(not_after)
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return cert.public_bytes(serialization.Encoding.PEM), key_pem, not_after

    async def issue(
        self,
        client: Client,
        namespace: str,
        name: str,
        *,
        valid_for: dt.timedelta = dt.timedelta(days=90),
    ) -> dict[str, Any]:
        """Issue Certificate ``name`` as it is now: Secret written, status Ready."""
        cert = await client.get(CM, "Certificate", name, namespace)
        spec = cert["spec"]
        crt, key, not_after = self.sign(spec, valid_for)
        data = {
            "tls.crt": _b64(crt),
            "tls.key": _b64(key),
            "ca.crt": _b64(self.ca.public_bytes(serialization.Encoding.PEM)),
        }
        annotations = {
            "cert-manager.io/certificate-name": name,
            "cert-manager.io/issuer-name": spec["issuerRef"]["name"],
            "cert-manager.io/issuer-kind": spec["issuerRef"].get("kind", "Issuer"),
        }
        try:
            secret = await client.get("v1", "Secret", spec["secretName"], namespace)
            secret["data"] = data
            secret["metadata"].setdefault("annotations", {}).update(annotations)
            await client.update(secret)
        except NotFound:
            await client.create(
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "type": "kubernetes.io/tls",
                    "metadata": {
                        "name": spec["secretName"],
                        "namespace": namespace,
                        "annotations": annotations,
                    },
                    "data": data,
                }
            )
        ts = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        status = {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "Ready",
                    "message": "Certificate is up to date and has not expired",
                    "observedGeneration": cert["metadata"]["generation"],
                    "lastTransitionTime": ts,
                }
            ],
            "notAfter": not_after.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "notBefore": ts,
            "revision": 1,
        }
        result: dict[str, Any] = await client.patch_status(
            CM, "Certificate", name, {"status": status}, namespace
        )
        return result
