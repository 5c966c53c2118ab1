#!/usr/bin/env python3
"""Run a local Kubernetes control plane (etcd + kube-apiserver) for tests and development.

Mirrors what controller-runtime's envtest does: throwaway CAs and certs, etcd and
kube-apiserver on free loopback ports, an admin (system:masters) client-cert kubeconfig.
There is no kube-controller-manager, scheduler or kubelet (``full=True`` is reserved for
that). Binaries come from ``hack/build.py`` (built from Go modules into a cache).

Usage:
  python hack/controlplane.py up --dir DIR [--full] [--timeout SECONDS]
  python hack/controlplane.py down --dir DIR

``up`` runs in the foreground, writes DIR/kubeconfig once the apiserver is ready, prints
``export KUBECONFIG=DIR/kubeconfig`` and stops everything on SIGINT/SIGTERM (exit 0).
``down`` signals a running ``up`` through DIR/controlplane.pid.

Library use::

    with ControlPlane(Path("/tmp/cp")) as cp:
        print(cp.kubeconfig, cp.server)
"""

from __future__ import annotations

import argparse
import atexit
import base64
import contextlib
import ctypes
import datetime as dt
import importlib.util
import ipaddress
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, ModuleType, TracebackType
from typing import IO, Any, Self

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

HACK = Path(__file__).resolve().parent
CONTEXT_NAME = "kuberay-local"
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
KUBERNETES_SERVICE_IP = "10.0.0.1"
CERT_VALIDITY = dt.timedelta(days=30)
PID_FILE = "controlplane.pid"
LOG_TAIL_LINES = 20


def _load_build() -> ModuleType:
    """Import hack/build.py by path (``import build`` could pick up PyPI's ``build``)."""
    name = "kuberay_hack_build"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HACK / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_build = _load_build()
BuildError: type[Exception] = _build.BuildError
KUBERNETES_VERSION: str = _build.KUBERNETES_VERSION


class ControlPlaneError(RuntimeError):
    """A component failed to start or answer; the message includes its log tail."""


# --------------------------------------------------------------------------- certificates


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
class Certs:
    """Paths of everything the apiserver and its admin client need."""

    serving_ca: Path
    serving_cert: Path
    serving_key: Path
    client_ca: Path
    admin_cert: Path
    admin_key: Path
    sa_pub: Path
    sa_key: Path


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def generate_certs(cert_dir: Path) -> Certs:
    """Write a serving CA + apiserver cert, a client CA + admin cert and an SA keypair."""
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
        ips=["127.0.0.1", KUBERNETES_SERVICE_IP],
        server=True,
    )
    client_ca = TinyCA("kuberay-local-client-ca")
    admin = client_ca.issue("admin", orgs=["system:masters"], client=True)
    sa_key = ec.generate_private_key(ec.SECP256R1())
    sa_pub = sa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
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
    )
    certs.serving_ca.write_bytes(serving_ca.pair.cert_pem)
    certs.serving_cert.write_bytes(serving.cert_pem)
    _write_private(certs.serving_key, serving.key_pem)
    certs.client_ca.write_bytes(client_ca.pair.cert_pem)
    certs.admin_cert.write_bytes(admin.cert_pem)
    _write_private(certs.admin_key, admin.key_pem)
    certs.sa_pub.write_bytes(sa_pub)
    _write_private(certs.sa_key, _key_pem(sa_key))
    return certs


# --------------------------------------------------------------------------- processes


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1 (racy by nature, like envtest's)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def _load_prctl() -> Callable[..., int] | None:
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


_PRCTL = _load_prctl()
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """preexec_fn: SIGKILL the child when the thread that started it dies (Linux only).

    Covers the cases atexit cannot (SIGKILL of pytest, an unhandled SIGTERM).
    """
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGKILL))


@dataclass
class _Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path
    log_file: IO[bytes]
    started: float


@dataclass(frozen=True)
class ComponentSpec:
    """One control-plane process: which binary, how to build its args, how to wait for it."""

    name: str
    binary: str
    args: Callable[[ControlPlane], list[str]]
    wait_ready: Callable[[ControlPlane, float], None]


_LIVE: set[ControlPlane] = set()
_LIVE_LOCK = threading.Lock()


@atexit.register
def _stop_all() -> None:
    with _LIVE_LOCK:
        planes = list(_LIVE)
    for cp in planes:
        with contextlib.suppress(Exception):
            cp.stop()


class ControlPlane:
    """etcd + kube-apiserver on loopback, with an admin kubeconfig at ``dir/kubeconfig``.

    Attributes valid after ``start()``: ``kubeconfig`` (Path), ``server`` (https URL),
    ``etcd_url`` (http URL), ``dir`` (work directory with certs, logs and etcd data),
    ``certs``, ``startup_seconds`` (component name -> launch-to-ready time of its last start).
    """

    def __init__(
        self,
        workdir: Path | None = None,
        *,
        full: bool = False,
        start_timeout: float = 120.0,
        binaries: dict[str, Path] | None = None,
        build: bool = True,
        extra_apiserver_args: Sequence[str] = (),
    ) -> None:
        if full:
            raise NotImplementedError("full cluster: not yet")
        self.full = full
        self._own_dir = workdir is None
        self.dir = Path(tempfile.mkdtemp(prefix="kuberay-cp-")) if workdir is None else workdir
        self.dir = self.dir.resolve()
        self.kubeconfig = self.dir / "kubeconfig"
        self.start_timeout = start_timeout
        self._binaries = dict(binaries or {})
        self._build = build
        self.extra_apiserver_args = list(extra_apiserver_args)
        self.components: list[ComponentSpec] = [ETCD, KUBE_APISERVER]
        self.etcd_port = 0
        self.etcd_peer_port = 0
        self.apiserver_port = 0
        self.etcd_url = ""
        self.server = ""
        self.certs: Certs | None = None
        self.startup_seconds: dict[str, float] = {}
        self._procs: dict[str, _Proc] = {}
        self._lock = threading.RLock()

    # ----------------------------------------------------------------- lifecycle

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return bool(self._procs)

    def binary(self, name: str) -> Path:
        if name not in self._binaries:
            if self._build:
                self._binaries.update(_build.ensure([name]))
            else:
                path = _build.binary_path(name)
                if not path.exists():
                    raise BuildError(f"{name} not found at {path} (run hack/build.py {name})")
                self._binaries[name] = path
        return self._binaries[name]

    def start(self) -> None:
        """Generate certs, start every component, write the kubeconfig when ready."""
        with self._lock:
            if self._procs:
                raise ControlPlaneError("control plane already started")
            for spec in self.components:  # build (or find) binaries before touching anything
                self.binary(spec.binary)
            self.dir.mkdir(parents=True, exist_ok=True)
            self.kubeconfig.unlink(missing_ok=True)
            shutil.rmtree(self.etcd_data_dir, ignore_errors=True)
            self.certs = generate_certs(self.dir / "certs")
            self.etcd_port, self.etcd_peer_port, self.apiserver_port = self._distinct_ports(3)
            self.etcd_url = f"http://127.0.0.1:{self.etcd_port}"
            self.server = f"https://127.0.0.1:{self.apiserver_port}"
            with _LIVE_LOCK:
                _LIVE.add(self)
            try:
                for spec in self.components:
                    self._start_component(spec)
                self._write_kubeconfig()
            except BaseException:
                self._own_dir = False  # keep the logs the error message points at
                self.stop()
                raise

    def stop(self) -> None:
        """Stop components in reverse order (SIGTERM, 10 s, SIGKILL). Idempotent."""
        with self._lock:
            for spec in reversed(self.components):
                self._stop_component(spec.name)
            for name in list(self._procs):  # anything not in the spec list
                self._stop_component(name)
            with _LIVE_LOCK:
                _LIVE.discard(self)
            self.kubeconfig.unlink(missing_ok=True)
            shutil.rmtree(self.etcd_data_dir, ignore_errors=True)
            if self._own_dir:
                shutil.rmtree(self.dir, ignore_errors=True)

    def restart_apiserver(self) -> float:
        """Stop and start kube-apiserver on the same port and etcd; return seconds to ready."""
        with self._lock:
            if KUBE_APISERVER.name not in self._procs:
                raise ControlPlaneError("kube-apiserver is not running")
            self._stop_component(KUBE_APISERVER.name)
            self._start_component(KUBE_APISERVER)
            return self.startup_seconds[KUBE_APISERVER.name]

    def compact_etcd(self) -> int:
        """Compact etcd (physically) to its current revision; return that revision.

        Afterwards any read or watch that reaches etcd with an older resourceVersion gets
        410 Gone. Watches served by the apiserver's watch cache (most resources; not
        ``events``) still succeed while the RV is inside the cache window; call
        ``restart_apiserver()`` after this to also expire those.
        """
        resp = _post_json(
            f"{self.etcd_url}/v3/kv/range",
            {"key": base64.b64encode(b"\x00").decode(), "limit": 1, "count_only": True},
        )
        rev = int(resp["header"]["revision"])
        try:
            _post_json(
                f"{self.etcd_url}/v3/kv/compaction", {"revision": str(rev), "physical": True}
            )
        except ControlPlaneError as exc:
            if "compacted" not in str(exc):  # already compacted at this revision
                raise
        return rev

    def pids(self) -> dict[str, int]:
        """Component name -> pid of the running processes."""
        return {name: p.popen.pid for name, p in self._procs.items()}

    # ----------------------------------------------------------------- internals

    @property
    def etcd_data_dir(self) -> Path:
        return self.dir / "etcd-data"

    @staticmethod
    def _distinct_ports(n: int) -> list[int]:
        ports: list[int] = []
        while len(ports) < n:
            port = free_port()
            if port not in ports:
                ports.append(port)
        return ports

    def _start_component(self, spec: ComponentSpec) -> None:
        log_path = self.dir / f"{spec.name}.log"
        log_file = log_path.open("ab")
        log_file.write(f"==== {time.strftime('%F %T')} starting {spec.name}\n".encode())
        log_file.flush()
        argv = [str(self.binary(spec.binary)), *spec.args(self)]
        # PDEATHSIG fires when the *thread* that forked exits, so only use it from the main thread
        main_thread = threading.current_thread() is threading.main_thread()
        preexec = _die_with_parent if main_thread and _PRCTL is not None else None
        started = time.monotonic()
        try:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                cwd=self.dir,
                start_new_session=True,
                preexec_fn=preexec,
            )
        except BaseException:
            log_file.close()
            raise
        self._procs[spec.name] = _Proc(spec.name, popen, log_path, log_file, started)
        (self.dir / f"{spec.name}.pid").write_text(f"{popen.pid}\n")
        spec.wait_ready(self, started + self.start_timeout)
        self.startup_seconds[spec.name] = time.monotonic() - started

    def _stop_component(self, name: str, timeout: float = 10.0) -> None:
        proc = self._procs.pop(name, None)
        if proc is None:
            return
        try:
            if proc.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.popen.pid, signal.SIGTERM)
                try:
                    proc.popen.wait(timeout)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.popen.pid, signal.SIGKILL)
                    proc.popen.wait()
            # the group leader is gone; make sure nothing it spawned survives
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.popen.pid, signal.SIGKILL)
        finally:
            proc.log_file.close()
            (self.dir / f"{name}.pid").unlink(missing_ok=True)

    def _check_alive(self, name: str) -> None:
        proc = self._procs[name]
        code = proc.popen.poll()
        if code is not None:
            raise ControlPlaneError(
                f"{name} exited with code {code} during start-up; last lines of "
                f"{proc.log_path}:\n{_tail(proc.log_path)}"
            )

    def _timeout(self, name: str, what: str) -> ControlPlaneError:
        proc = self._procs[name]
        return ControlPlaneError(
            f"{name} not {what} within {self.start_timeout:.0f}s; last lines of "
            f"{proc.log_path}:\n{_tail(proc.log_path)}"
        )

    def ssl_context(self) -> ssl.SSLContext:
        """TLS context trusting the serving CA and presenting the admin client cert."""
        assert self.certs is not None
        ctx = ssl.create_default_context(cafile=str(self.certs.serving_ca))
        ctx.load_cert_chain(str(self.certs.admin_cert), str(self.certs.admin_key))
        return ctx

    def _wait_etcd(self, deadline: float) -> None:
        while True:
            self._check_alive(ETCD.name)
            with (
                contextlib.suppress(OSError, ValueError),
                urllib.request.urlopen(f"{self.etcd_url}/health", timeout=2) as r,
            ):
                if json.loads(r.read()).get("health") == "true":
                    return
            if time.monotonic() > deadline:
                raise self._timeout(ETCD.name, "healthy")
            time.sleep(0.1)

    def _wait_apiserver(self, deadline: float) -> None:
        ctx = self.ssl_context()
        for path in ("/readyz", "/api/v1/namespaces/default"):
            while True:
                self._check_alive(KUBE_APISERVER.name)
                with (
                    contextlib.suppress(OSError, ValueError),
                    urllib.request.urlopen(self.server + path, timeout=5, context=ctx) as r,
                ):
                    if r.status == 200:
                        break
                if time.monotonic() > deadline:
                    raise self._timeout(KUBE_APISERVER.name, f"answering {path}")
                time.sleep(0.2)

    def _write_kubeconfig(self) -> None:
        assert self.certs is not None

        def b64(p: Path) -> str:
            return base64.b64encode(p.read_bytes()).decode()

        doc: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": CONTEXT_NAME,
                    "cluster": {
                        "server": self.server,
                        "certificate-authority-data": b64(self.certs.serving_ca),
                    },
                }
            ],
            "users": [
                {
                    "name": CONTEXT_NAME,
                    "user": {
                        "client-certificate-data": b64(self.certs.admin_cert),
                        "client-key-data": b64(self.certs.admin_key),
                    },
                }
            ],
            "contexts": [
                {
                    "name": CONTEXT_NAME,
                    "context": {"cluster": CONTEXT_NAME, "user": CONTEXT_NAME},
                }
            ],
            "current-context": CONTEXT_NAME,
            "preferences": {},
        }
        tmp = self.kubeconfig.with_name(f".{self.kubeconfig.name}.tmp")
        _write_private(tmp, yaml.safe_dump(doc, sort_keys=False).encode())
        os.replace(tmp, self.kubeconfig)


def _post_json(url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            result: dict[str, Any] = json.loads(r.read())
            return result
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")
        raise ControlPlaneError(f"POST {url}: {exc.code} {detail}") from None


# --------------------------------------------------------------------------- component specs


def _etcd_args(cp: ControlPlane) -> list[str]:
    peer = f"http://127.0.0.1:{cp.etcd_peer_port}"
    return [
        "--name=kuberay-local",
        f"--data-dir={cp.etcd_data_dir}",
        f"--listen-client-urls={cp.etcd_url}",
        f"--advertise-client-urls={cp.etcd_url}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=kuberay-local={peer}",
        "--unsafe-no-fsync=true",
        f"--quota-backend-bytes={8 * 1024**3}",
        "--log-level=warn",
    ]


def _apiserver_args(cp: ControlPlane) -> list[str]:
    assert cp.certs is not None
    c = cp.certs
    return [
        f"--etcd-servers={cp.etcd_url}",
        f"--secure-port={cp.apiserver_port}",
        "--bind-address=127.0.0.1",
        f"--cert-dir={cp.dir / 'certs'}",
        f"--tls-cert-file={c.serving_cert}",
        f"--tls-private-key-file={c.serving_key}",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        "--allow-privileged=true",
        "--authorization-mode=RBAC",
        "--disable-admission-plugins=ServiceAccount",
        f"--service-account-issuer={cp.server}/",
        f"--service-account-key-file={c.sa_pub}",
        f"--service-account-signing-key-file={c.sa_key}",
        f"--client-ca-file={c.client_ca}",
        "--max-requests-inflight=2000",
        "--max-mutating-requests-inflight=1000",
        "--watch-cache=true",
        "--profiling=false",
        *cp.extra_apiserver_args,
    ]


ETCD = ComponentSpec("etcd", "etcd", _etcd_args, ControlPlane._wait_etcd)
KUBE_APISERVER = ComponentSpec(
    "kube-apiserver", "kube-apiserver", _apiserver_args, ControlPlane._wait_apiserver
)
# Reserved for full=True (later): kube-controller-manager, kube-scheduler and kwok
# (fake nodes/kubelet) would be appended to ControlPlane.components after KUBE_APISERVER,
# each with its own args builder and readiness check, and stopped in reverse order.
FULL_COMPONENT_BINARIES = ("kube-controller-manager", "kube-scheduler", "kwok")


# --------------------------------------------------------------------------- CLI


class _Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    # only the first signal interrupts; later ones must not break the clean-up
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise _Interrupted(signum)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):  # a zombie counts as gone
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    return True


def _read_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None


def cmd_up(workdir: Path, full: bool, timeout: float) -> int:
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    pid_file = workdir / PID_FILE
    other = _read_pid(pid_file)
    if other is not None and other != os.getpid() and _pid_alive(other):
        print(f"controlplane: already running in {workdir} (pid {other})", file=sys.stderr)
        return 1
    old = {sig: signal.signal(sig, _raise_interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    pid_file.write_text(f"{os.getpid()}\n")
    cp: ControlPlane | None = None
    try:
        cp = ControlPlane(workdir, full=full, start_timeout=timeout)
        cp.start()
        timings = ", ".join(f"{k} {v:.1f}s" for k, v in cp.startup_seconds.items())
        print(f"controlplane: ready at {cp.server} ({timings}); logs in {workdir}", file=sys.stderr)
        print(f"export KUBECONFIG={cp.kubeconfig}", flush=True)
        while True:
            signal.pause()
    except _Interrupted as exc:
        print(f"controlplane: {exc}, stopping", file=sys.stderr)
        return 0
    except NotImplementedError as exc:
        print(f"controlplane: {exc}", file=sys.stderr)
        return 2
    except (BuildError, ControlPlaneError) as exc:
        print(f"controlplane: {exc}", file=sys.stderr)
        return 1
    finally:
        for sig in old:
            signal.signal(sig, signal.SIG_IGN)
        if cp is not None:
            cp.stop()
        if _read_pid(pid_file) == os.getpid():
            pid_file.unlink(missing_ok=True)
        for sig, handler in old.items():
            signal.signal(sig, handler)


def cmd_down(workdir: Path, timeout: float) -> int:
    pid_file = workdir / PID_FILE
    pid = _read_pid(pid_file)
    if pid is None or not _pid_alive(pid):
        print(f"controlplane: nothing running in {workdir}", file=sys.stderr)
        pid_file.unlink(missing_ok=True)
        return 0
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _pid_alive(pid):
        if time.monotonic() > deadline:
            print(f"controlplane: pid {pid} still alive after {timeout:.0f}s", file=sys.stderr)
            return 1
        time.sleep(0.1)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="run etcd + kube-apiserver in the foreground")
    up.add_argument("--dir", type=Path, required=True, help="work dir (kubeconfig, logs, certs)")
    up.add_argument("--full", action="store_true", help="also controller-manager/scheduler/kwok")
    up.add_argument("--timeout", type=float, default=120.0, help="per-component start timeout")
    down = sub.add_parser("down", help="stop a running `up` for --dir")
    down.add_argument("--dir", type=Path, required=True)
    down.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    if args.cmd == "up":
        return cmd_up(args.dir, args.full, args.timeout)
    return cmd_down(args.dir, args.timeout)


def iter_component_pids(workdir: Path) -> Iterator[tuple[int, str]]:
    """(pid, cmdline) of live processes whose command line mentions ``workdir``."""
    needle = str(workdir.resolve())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmdline and _pid_alive(int(entry.name)):
            yield int(entry.name), cmdline


if __name__ == "__main__":
    sys.exit(main())
