"""Throwaway certificates for a local control plane (controller-runtime envtest's tinyca).

:class:`TinyCA` is an ECDSA P-256 certificate authority that issues serving and client
certificates; :func:`generate_certs` writes everything kube-apiserver, its admin client and
the full-mode components need into one directory.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CERT_VALIDITY = dt.timedelta(days=30)
KUBERNETES_SERVICE_IP = "10.0.0.1"
REAL_NODE_IP = "10.250.0.1"  # the real node's bridge (hack's realnode.NODE_IP), in the cert

__all__ = [
    "CERT_VALIDITY",
    "KUBERNETES_SERVICE_IP",
    "REAL_NODE_IP",
    "CertPair",
    "Certs",
    "KeyPair",
    "TinyCA",
    "generate_certs",
    "write_private",
]


@dataclass(frozen=True)
class KeyPair:
    """A PEM certificate (or public key) and its PEM private key."""

    cert_pem: bytes
    key_pem: bytes


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def _name(cn: str, orgs: Sequence[str] = ()) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


class TinyCA:
    """A throwaway ECDSA P-256 certificate authority (like envtest's tinyca)."""

    def __init__(self, cn: str) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(_name(cn))
            .issuer_name(_name(cn))
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1))
            .not_valid_after(now + CERT_VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False
            )
            .sign(self.key, hashes.SHA256())
        )

    @property
    def pair(self) -> KeyPair:
        """The CA's own certificate and key, PEM."""
        return KeyPair(self.cert.public_bytes(serialization.Encoding.PEM), _key_pem(self.key))

    def issue(
        self,
        cn: str,
        *,
        orgs: Sequence[str] = (),
        dns: Sequence[str] = (),
        ips: Sequence[str] = (),
        server: bool = False,
        client: bool = False,
    ) -> KeyPair:
        """A leaf certificate signed by this CA, valid for ``CERT_VALIDITY``: ``orgs`` become
        its O attributes, ``dns``/``ips`` its SANs, ``server``/``client`` its extended usages."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        usages = ([ExtendedKeyUsageOID.SERVER_AUTH] if server else []) + (
            [ExtendedKeyUsageOID.CLIENT_AUTH] if client else []
        )
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(cn, orgs))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1))
            .not_valid_after(now + CERT_VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_encipherment=True,
                    content_commitment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=False,
                    crl_sign=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                critical=False,
            )
        )
        if dns or ips:
            sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
            sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


@dataclass(frozen=True)
class CertPair:
    """Paths of a PEM certificate and its PEM private key."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class Certs:
    """Paths of everything the apiserver, its admin client and (full mode) components need.

    ``clients``: extra client certs signed by the client CA, by component name.
    ``component_serving``: a serving cert (``localhost``/``127.0.0.1``, signed by the
    serving CA) for the HTTPS endpoints of kube-controller-manager and kube-scheduler.
    """

    serving_ca: Path
    serving_cert: Path
    serving_key: Path
    client_ca: Path
    admin_cert: Path
    admin_key: Path
    sa_pub: Path
    sa_key: Path
    clients: dict[str, CertPair] = field(default_factory=dict)
    component_serving: CertPair | None = None


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` readable by its owner only (mode 0600)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def generate_certs(
    cert_dir: Path,
    *,
    clients: Mapping[str, tuple[str, Sequence[str]]] | None = None,
    component_serving: bool = False,
) -> Certs:
    """Write a serving CA + apiserver cert, a client CA + admin cert and an SA keypair.

    ``clients`` maps a name to the (CN, organisations) of an extra client cert, written as
    ``<name>.crt``/``<name>.key``; ``component_serving`` adds ``components.crt``/``.key``.
    """
    cert_dir.mkdir(parents=True, exist_ok=True)
    serving_ca = TinyCA("kuberay-local-serving-ca")
    serving = serving_ca.issue(
        "kube-apiserver",
        dns=[
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
        ],
        ips=["127.0.0.1", KUBERNETES_SERVICE_IP, REAL_NODE_IP],
        server=True,
    )
    client_ca = TinyCA("kuberay-local-client-ca")
    admin = client_ca.issue("admin", orgs=["system:masters"], client=True)
    sa_key = ec.generate_private_key(ec.SECP256R1())
    sa_pub = sa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )

    def write_pair(stem: str, pair: KeyPair) -> CertPair:
        paths = CertPair(cert_dir / f"{stem}.crt", cert_dir / f"{stem}.key")
        paths.cert.write_bytes(pair.cert_pem)
        write_private(paths.key, pair.key_pem)
        return paths

    extra = {
        name: write_pair(name, client_ca.issue(cn, orgs=orgs, client=True))
        for name, (cn, orgs) in (clients or {}).items()
    }
    components = (
        write_pair(
            "components",
            serving_ca.issue(
                "kuberay-local-components", dns=["localhost"], ips=["127.0.0.1"], server=True
            ),
        )
        if component_serving
        else None
    )
    certs = Certs(
        serving_ca=cert_dir / "serving-ca.crt",
        serving_cert=cert_dir / "apiserver.crt",
        serving_key=cert_dir / "apiserver.key",
        client_ca=cert_dir / "client-ca.crt",
        admin_cert=cert_dir / "admin.crt",
        admin_key=cert_dir / "admin.key",
        sa_pub=cert_dir / "sa.pub",
        sa_key=cert_dir / "sa.key",
        clients=extra,
        component_serving=components,
    )
    certs.serving_ca.write_bytes(serving_ca.pair.cert_pem)
    certs.serving_cert.write_bytes(serving.cert_pem)
    write_private(certs.serving_key, serving.key_pem)
    certs.client_ca.write_bytes(client_ca.pair.cert_pem)
    certs.admin_cert.write_bytes(admin.cert_pem)
    write_private(certs.admin_key, admin.key_pem)
    certs.sa_pub.write_bytes(sa_pub)
    write_private(certs.sa_key, _key_pem(sa_key))
    return certs


# --------------------------------------------------------------------------- processes
