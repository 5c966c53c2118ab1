"""Run the real Kueue controller manager (built by ``hack/build/build_kueue.py``) against the test
apiserver, on loopback only.

Kueue normally runs in-cluster with its webhooks registered and its certificates rotated by
``cert-controller``. Here none of that is possible or wanted:

* ``internalCertManagement.enable: false``: the rotator would inject a CA into the CRDs'
  ``conversion.webhook`` stanzas, which the CRDs in ``config/components/crd/bases`` do not
  have (Kustomize patches add them), and it would block Kueue's start-up forever;
* the webhook *server* still starts (Kueue registers its handlers unconditionally), so it gets
  a self-signed certificate made here (``webhook.certDir``) and listens on 127.0.0.1; no
  webhook *configuration* is registered with the apiserver, so Kueue's defaulting (setting
  ``suspend: true`` on queued jobs) does not run: the tests create their RayJobs suspended, as
  KubeRay's docs tell users without that webhook;
* with internal cert management off, Kueue reads its metrics serving certificate from the fixed
  path ``/etc/kueue/metrics/certs`` (its Secret's mount point in the Deployment) even when the
  metrics server is disabled; :func:`ensure_metrics_certs` puts a self-signed pair there once
  (atomically, so concurrent sessions never see half a pair);
* metrics (``bindAddress: "0"``), leader election and the visibility API server (feature gate
  ``VisibilityOnDemand``) are off; the health probe listens on a free 127.0.0.1 port and
  ``/readyz`` answering 200 means the manager (and its webhook server) started.

``integrations.frameworks`` is ``ray.io/rayjob`` + ``ray.io/raycluster`` with
``manageJobsWithoutQueueName: false``: Kueue touches only Ray objects labelled
``kueue.x-k8s.io/queue-name``, so the other tests of the session sharing the apiserver are
unaffected.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

METRICS_CERT_DIR = Path("/etc/kueue/metrics/certs")
FRAMEWORKS = ("ray.io/rayjob", "ray.io/raycluster")

__all__ = [
    "FRAMEWORKS",
    "METRICS_CERT_DIR",
    "KueueError",
    "KueueProcess",
    "ensure_metrics_certs",
    "self_signed_pair",
]


class KueueError(Exception):
    """Kueue could not be started; the message says why (with its log's tail)."""


def self_signed_pair(common_name: str = "127.0.0.1") -> tuple[bytes, bytes]:
    """A PEM certificate (valid ten years, SAN 127.0.0.1 and localhost) and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=3650))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    return (
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


def _write_pair(directory: Path) -> None:
    cert, key = self_signed_pair()
    (directory / "tls.crt").write_bytes(cert)
    (directory / "tls.key").write_bytes(key)
    (directory / "tls.key").chmod(0o600)


def ensure_metrics_certs(target: Path = METRICS_CERT_DIR) -> None:
    """Make sure ``target`` holds a matching ``tls.crt``/``tls.key`` (created once: a
    complete directory is renamed into place, so a concurrent creator's pair wins whole).
    Raises ``OSError`` when ``target`` cannot be created (e.g. not root)."""
    if (target / "tls.crt").is_file() and (target / "tls.key").is_file():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".certs-", dir=target.parent))
    try:
        _write_pair(staging)
        staging.chmod(0o755)
        with contextlib.suppress(FileExistsError, OSError):
            staging.rename(target)  # fails when another process got there first
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if not (target / "tls.crt").is_file():
        raise OSError(f"{target}: no certificate after creating one")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def configuration(workdir: Path, *, webhook_port: int, health_port: int) -> dict[str, object]:
    """Kueue's ``config.kueue.x-k8s.io/v1beta2`` Configuration for a loopback-only run."""
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "namespace": "kueue-system",
        "manageJobsWithoutQueueName": False,
        "internalCertManagement": {"enable": False},
        "leaderElection": {"leaderElect": False},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "metrics": {"bindAddress": "0"},
        "webhook": {
            "host": "127.0.0.1",
            "port": webhook_port,
            "certDir": str(workdir / "webhook-certs"),
        },
        "clientConnection": {"qps": 50, "burst": 100},
        "integrations": {"frameworks": list(FRAMEWORKS)},
        "featureGates": {"VisibilityOnDemand": False},
    }


class KueueProcess:
    """One Kueue controller manager process; :meth:`start` returns once ``/readyz`` is 200."""

    def __init__(self, binary: Path, kubeconfig: Path, workdir: Path) -> None:
        self.binary = binary
        self.kubeconfig = kubeconfig
        self.workdir = workdir
        self.log_path = workdir / "kueue.log"
        self.health_port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of Kueue's log."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _ready(self) -> bool:
        url = f"http://127.0.0.1:{self.health_port}/readyz"
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return int(response.status) == 200
        except (urllib.error.URLError, OSError):
            return False

    def start(self, timeout: float = 300.0) -> None:
        """Write the certificates and the Configuration, start Kueue, wait for readiness."""
        ensure_metrics_certs()
        certs = self.workdir / "webhook-certs"
        certs.mkdir(parents=True, exist_ok=True)
        _write_pair(certs)
        self.health_port = free_port()
        config = configuration(self.workdir, webhook_port=free_port(), health_port=self.health_port)
        config_path = self.workdir / "kueue-config.yaml"
        config_path.write_text(yaml.safe_dump(config, sort_keys=False))
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig)}
        with self.log_path.open("wb") as log:
            self._proc = subprocess.Popen(
                [str(self.binary), f"--config={config_path}", "--zap-log-level=info"],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.workdir,
            )
        deadline = time.monotonic() + timeout
        while not self._ready():
            code = self._proc.poll()
            if code is not None:
                raise KueueError(f"kueue exited with code {code}:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise KueueError(f"kueue not ready within {timeout:.0f}s:\n{self.log_tail()}")
            time.sleep(0.2)

    def stop(self) -> None:
        """Terminate Kueue (SIGTERM, then SIGKILL after 15 s)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
