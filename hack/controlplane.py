#!/usr/bin/env python3
"""Run a local Kubernetes control plane (etcd + kube-apiserver) for tests and development.

Mirrors what controller-runtime's envtest does: throwaway CAs and certs, etcd and
kube-apiserver on free loopback ports, an admin (system:masters) client-cert kubeconfig.
Binaries come from ``hack/build.py`` (built from Go modules into a cache).

``full=True`` (``up --full``) adds what makes it a small working cluster without a kubelet:
kube-controller-manager (garbage collector, namespace, Job, ReplicaSet/Deployment,
service-account and endpoint controllers, ...), kube-scheduler, and kwok managing a few
fake nodes (``kwok-node-0..3``), whose stages (``hack/kwok/*.yaml``) make scheduled pods
Running and Ready, complete the pods of Jobs and finish graceful deletions.

``history_server=True`` (``up --history-server``) adds a local S3-compatible object store for
the history server's collector (``hack/object_store.py``: moto on 127.0.0.1, or on the real
node's bridge address when there is a real node) and writes ``DIR/object-store.env``, then
the history server over it (``hack/history_server.py``: ``kuberay-history-server`` on
127.0.0.1, an ephemeral port) and writes its base URL to ``DIR/history-server.url``.

Usage:
  python hack/controlplane.py up --dir DIR [--full] [--timeout SECONDS] [--history-server]
  python hack/controlplane.py down --dir DIR

``up`` runs in the foreground, writes DIR/kubeconfig once everything is ready (in full
mode: all components healthy and the fake nodes Ready), prints
``export KUBECONFIG=DIR/kubeconfig`` and stops everything on SIGINT/SIGTERM (exit 0).
``down`` signals a running ``up`` through DIR/controlplane.pid.

Library use::

    with ControlPlane(Path("/tmp/cp")) as cp:
        print(cp.kubeconfig, cp.server)

    with ControlPlane(Path("/tmp/cp-full"), full=True) as cp:
        print(cp.node_names)  # pods scheduled there become Running + Ready
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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
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

# full mode: kwok and its fake nodes
KWOK_STAGE_DIR = HACK / "kwok"
DEFAULT_FAKE_NODES = 4
FAKE_NODE_PREFIX = "kwok-node-"
FAKE_NODE_ANNOTATION = "kwok.x-k8s.io/node"  # kwok manages nodes annotated <this>=fake
FAKE_NODE_CAPACITY: dict[str, str] = {
    "cpu": "1000",
    "memory": "4Ti",
    "pods": "1000",
    "ephemeral-storage": "10Ti",
    "nvidia.com/gpu": "64",
    "google.com/tpu": "64",
}
FAKE_POD_CIDR = "10.244.0.0/16"  # pod IPs (kwok's default 10.0.0.1/24 overlaps services)
FAKE_NODE_IP_NET = ipaddress.ip_network("172.18.0.0/24")  # node i is .(i+2), kwok .1


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


def _load_object_store() -> ModuleType:
    """Import hack/object_store.py by path (only when a history server store is asked for)."""
    name = "kuberay_hack_object_store"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HACK / "object_store.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _load_history_server() -> ModuleType:
    """Import hack/history_server.py by path (only when a history server is asked for)."""
    name = "kuberay_hack_history_server"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HACK / "history_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _load_realnode() -> ModuleType:
    """Import hack/realnode.py by path (only when a real node is asked for)."""
    name = "kuberay_hack_realnode"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HACK / "realnode.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


REAL_NODE_IP = "10.250.0.1"  # = realnode.NODE_IP: the real node's bridge (in the apiserver cert)
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


def _write_private(path: Path, data: bytes) -> None:
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
        _write_private(paths.key, pair.key_pem)
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
    env: Callable[[ControlPlane], Mapping[str, str]] | None = None
    """Environment overrides for the process (on top of ours)."""
    before_start: Callable[[ControlPlane], None] | None = None
    """Runs just before each launch (after the components listed earlier are ready)."""


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

    With ``full=True`` also kube-controller-manager, kube-scheduler and kwok, which runs
    ``fake_nodes`` fake nodes (``node_names``); pods scheduled there get Running/Ready.

    Attributes valid after ``start()``: ``kubeconfig`` (Path), ``server`` (https URL),
    ``etcd_url`` (http URL), ``dir`` (work directory with certs, logs and etcd data),
    ``certs``, ``startup_seconds`` (component name -> launch-to-ready time of its last start),
    ``start_seconds`` (whole ``start()``). Always valid: ``full``, ``node_names``.
    Full mode helpers: ``api()`` (admin REST call), ``unready_nodes()``,
    ``component_kubeconfig(name)``. ``extra_args`` maps a component name (e.g.
    ``kube-scheduler``) to flags appended to its command line, such as feature gates.
    ``history_server=True``: after everything else, a local S3 store (``hack/object_store.py``)
    on 127.0.0.1, or on the real node's bridge address with a real node; ``object_store`` is
    its ``ObjectStoreServer`` (``.info.env_file`` = ``dir/object-store.env``), stopped after
    the real node (whose pods' collectors flush to it on their way out); then
    ``history_server_proc``, the history server over that store (``hack/history_server.py``,
    ``.url`` also in ``dir/history-server.url``), stopped first.
    """

    def __init__(
        self,
        workdir: Path | None = None,
        *,
        full: bool = False,
        fake_nodes: int = DEFAULT_FAKE_NODES,
        start_timeout: float = 120.0,
        binaries: dict[str, Path] | None = None,
        build: bool = True,
        extra_apiserver_args: Sequence[str] = (),
        extra_args: Mapping[str, Sequence[str]] | None = None,
        real_nodes: int = 0,
        real_nodes_only: bool = False,
        extra_clients: Mapping[str, tuple[str, tuple[str, ...]]] | None = None,
        history_server: bool = False,
    ) -> None:
        if real_nodes_only:
            fake_nodes = 0
        if full and fake_nodes < 1 and not real_nodes:
            raise ValueError("a full control plane needs at least one fake node")
        if real_nodes and not full:
            raise ValueError("a real node needs the full control plane (full=True)")
        if real_nodes > 1:
            raise ValueError("one real node per machine for now (real_nodes=1)")
        self.full = full
        self.real_nodes = real_nodes
        self.real_nodes_only = bool(real_nodes and real_nodes_only)
        self.real_node: Any = None  # realnode.RealNode once started
        self.history_server = history_server
        self.object_store: Any = None  # object_store.ObjectStoreServer once started
        self.history_server_proc: Any = None  # history_server.HistoryServer once started
        self.node_names: list[str] = (
            [f"{FAKE_NODE_PREFIX}{i}" for i in range(fake_nodes)] if full else []
        )
        self._own_dir = workdir is None
        self.dir = Path(tempfile.mkdtemp(prefix="kuberay-cp-")) if workdir is None else workdir
        self.dir = self.dir.resolve()
        self.kubeconfig = self.dir / "kubeconfig"
        self.start_timeout = start_timeout
        self._binaries = dict(binaries or {})
        self._build = build
        self.extra_apiserver_args = list(extra_apiserver_args)
        # more client identities (name -> (CN, organisations)), full mode: each gets
        # ``component_kubeconfig(name)`` (the bench gives the operator under test its own user)
        self.extra_clients = dict(extra_clients or {})
        # component name -> flags appended to its command line (e.g. feature gates)
        self.extra_args = {name: list(args) for name, args in (extra_args or {}).items()}
        self.components: list[ComponentSpec] = [ETCD, KUBE_APISERVER]
        if full:
            self.components += [KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER]
            if self.node_names:
                self.components.append(KWOK)
        self.etcd_port = 0
        self.etcd_peer_port = 0
        self.apiserver_port = 0
        self.controller_manager_port = 0
        self.scheduler_port = 0
        self.kwok_port = 0
        self.etcd_url = ""
        self.server = ""
        self.certs: Certs | None = None
        self.startup_seconds: dict[str, float] = {}
        self.start_seconds = 0.0
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
            began = time.monotonic()
            for spec in self.components:  # build (or find) binaries before touching anything
                self.binary(spec.binary)
            if self.real_nodes:
                for name in ("kubelet", "kube-proxy", "coredns"):
                    self.binary(name)
            if self.full and not kwok_stage_files():
                raise ControlPlaneError(f"no kwok stages (*.yaml) in {KWOK_STAGE_DIR}")
            self.dir.mkdir(parents=True, exist_ok=True)
            self.kubeconfig.unlink(missing_ok=True)
            shutil.rmtree(self.etcd_data_dir, ignore_errors=True)
            self.certs = generate_certs(
                self.dir / "certs",
                clients={**FULL_CLIENT_IDENTITIES, **self.extra_clients} if self.full else None,
                component_serving=self.full,
            )
            ports = self._distinct_ports(6 if self.full else 3)
            self.etcd_port, self.etcd_peer_port, self.apiserver_port = ports[:3]
            if self.full:
                self.controller_manager_port, self.scheduler_port, self.kwok_port = ports[3:]
            self.etcd_url = f"http://127.0.0.1:{self.etcd_port}"
            self.server = f"https://127.0.0.1:{self.apiserver_port}"
            with _LIVE_LOCK:
                _LIVE.add(self)
            try:
                if self.full:
                    self._write_component_configs()
                for spec in self.components:
                    self._start_component(spec)
                if self.real_nodes:
                    t0 = time.monotonic()
                    self.real_node = _load_realnode().RealNode(
                        self, tainted=not self.real_nodes_only, timeout=max(self.start_timeout, 180)
                    )
                    self.real_node.start()
                    self.startup_seconds["real-node"] = time.monotonic() - t0
                if self.history_server:
                    self._start_object_store()
                    self._start_history_server()
                self._write_kubeconfig(self.kubeconfig, self.certs.admin_cert, self.certs.admin_key)
                self.start_seconds = time.monotonic() - began
            except BaseException:
                self._own_dir = False  # keep the logs the error message points at
                self.stop()
                raise

    def stop(self) -> None:
        """Stop components in reverse order (SIGTERM, 10 s, SIGKILL). Idempotent."""
        with self._lock:
            if self.history_server_proc is not None:
                self.history_server_proc.stop()
                self.history_server_proc = None
            if self.real_node is not None:
                self.real_node.stop()
                self.real_node = None
            if self.object_store is not None:
                self.object_store.stop()
                self.object_store = None
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

    def _start_object_store(self) -> None:
        """The history server's S3 store: on the real node's bridge address when there is a
        real node (its pods reach that, and so does this machine), else on 127.0.0.1."""
        t0 = time.monotonic()
        main_thread = threading.current_thread() is threading.main_thread()
        store = _load_object_store().ObjectStoreServer(
            self.dir,
            object_store_host(real_node=self.real_node is not None),
            start_timeout=self.start_timeout,
            preexec_fn=_die_with_parent if main_thread and _PRCTL is not None else None,
        )
        self.object_store = store
        store.start()
        self.startup_seconds["object-store"] = time.monotonic() - t0

    def _start_history_server(self) -> None:
        """``kuberay-history-server`` over the object store (its env file's settings), on
        127.0.0.1 only: this machine's browser and ``kubectl ray history --server`` reach it."""
        t0 = time.monotonic()
        main_thread = threading.current_thread() is threading.main_thread()
        server = _load_history_server().HistoryServer(
            self.dir,
            self.object_store.info.env(),
            start_timeout=self.start_timeout,
            preexec_fn=_die_with_parent if main_thread and _PRCTL is not None else None,
        )
        self.history_server_proc = server
        server.start()
        self.startup_seconds["history-server"] = time.monotonic() - t0

    def restart_apiserver(self) -> float:
        """Stop and start kube-apiserver on the same port and etcd; return seconds to ready.

        In full mode the other components are left running; their clients reconnect (and
        their informers relist) by themselves once the apiserver answers again.
        """
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
        if spec.before_start is not None:
            spec.before_start(self)
        argv = [
            str(self.binary(spec.binary)),
            *spec.args(self),
            *self.extra_args.get(spec.name, ()),
        ]
        env = None if spec.env is None else {**os.environ, **spec.env(self)}
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
                env=env,
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

    def _write_kubeconfig(self, path: Path, cert: Path, key: Path) -> None:
        """Write (atomically, mode 0600) a kubeconfig for ``self.server`` with a client cert."""
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
                        "client-certificate-data": b64(cert),
                        "client-key-data": b64(key),
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
        tmp = path.with_name(f".{path.name}.tmp")
        _write_private(tmp, yaml.safe_dump(doc, sort_keys=False).encode())
        os.replace(tmp, path)

    # ----------------------------------------------------------------- full mode

    @property
    def components_dir(self) -> Path:
        """Kubeconfigs and config files of the full-mode components."""
        return self.dir / "components"

    def component_kubeconfig(self, name: str) -> Path:
        """The kubeconfig a full-mode component uses (its own client cert)."""
        return self.components_dir / f"{name}.kubeconfig"

    def _write_component_configs(self) -> None:
        assert self.certs is not None
        self.components_dir.mkdir(parents=True, exist_ok=True)
        for name, pair in self.certs.clients.items():
            self._write_kubeconfig(self.component_kubeconfig(name), pair.cert, pair.key)
        scheduler_config = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {
                "kubeconfig": str(self.component_kubeconfig(KUBE_SCHEDULER.name)),
                "qps": COMPONENT_QPS,
                "burst": COMPONENT_BURST,
            },
            "leaderElection": {"leaderElect": False},
        }
        (self.components_dir / "kube-scheduler.yaml").write_text(
            yaml.safe_dump(scheduler_config, sort_keys=False)
        )
        (self.dir / "kwok-home").mkdir(exist_ok=True)

    def api(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """One admin request to the apiserver; the decoded JSON answer.

        Raises ``urllib.error.HTTPError`` for error statuses and ``OSError`` when the
        apiserver cannot be reached.
        """
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            patch = method == "PATCH"
            headers["Content-Type"] = f"application/{'merge-patch+' if patch else ''}json"
        req = urllib.request.Request(self.server + path, data=data, headers=headers, method=method)
        with urllib.request.urlopen(req, timeout=10, context=self.ssl_context()) as r:
            return json.loads(r.read())

    def _serving_ca_context(self) -> ssl.SSLContext:
        assert self.certs is not None
        return ssl.create_default_context(cafile=str(self.certs.serving_ca))

    def _wait_url(
        self, name: str, url: str, deadline: float, context: ssl.SSLContext | None = None
    ) -> None:
        """Poll ``url`` until it answers 200 (while ``name`` is alive)."""
        while True:
            self._check_alive(name)
            with (
                contextlib.suppress(OSError, ValueError),
                urllib.request.urlopen(url, timeout=5, context=context) as r,
            ):
                if r.status == 200:
                    return
            if time.monotonic() > deadline:
                raise self._timeout(name, f"answering {url}")
            time.sleep(0.2)

    def _wait_controller_manager(self, deadline: float) -> None:
        name = KUBE_CONTROLLER_MANAGER.name
        url = f"https://127.0.0.1:{self.controller_manager_port}/healthz"
        self._wait_url(name, url, deadline, self._serving_ca_context())
        # proof that controllers run: the serviceaccount controller made default/default
        while True:
            self._check_alive(name)
            with contextlib.suppress(OSError, ValueError):
                self.api("GET", "/api/v1/namespaces/default/serviceaccounts/default")
                return
            if time.monotonic() > deadline:
                raise self._timeout(name, "creating the default ServiceAccount")
            time.sleep(0.2)

    def _wait_scheduler(self, deadline: float) -> None:
        url = f"https://127.0.0.1:{self.scheduler_port}/readyz"
        self._wait_url(KUBE_SCHEDULER.name, url, deadline, self._serving_ca_context())

    def _wait_kwok(self, deadline: float) -> None:
        self._wait_url(KWOK.name, f"http://127.0.0.1:{self.kwok_port}/healthz", deadline)
        unready = list(self.node_names)
        while True:
            self._check_alive(KWOK.name)
            with contextlib.suppress(OSError, ValueError, KeyError):
                unready = self.unready_nodes()
                if not unready:
                    return
            if time.monotonic() > deadline:
                raise self._timeout(KWOK.name, f"making nodes {', '.join(unready)} Ready")
            time.sleep(0.2)

    def unready_nodes(self) -> list[str]:
        """Names of the fake nodes that do not exist or are not Ready (yet)."""
        nodes = self.api("GET", "/api/v1/nodes")["items"]
        ready = {
            n["metadata"]["name"]
            for n in nodes
            if any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in n.get("status", {}).get("conditions") or ()
            )
        }
        return [name for name in self.node_names if name not in ready]

    def _create_fake_nodes(self) -> None:
        """Create the Node objects kwok manages (existing ones are left alone)."""
        for index, name in enumerate(self.node_names):
            try:
                self.api("POST", "/api/v1/nodes", fake_node(name, index))
            except urllib.error.HTTPError as exc:
                if exc.code != 409:
                    detail = exc.read().decode(errors="replace")
                    raise ControlPlaneError(f"creating node {name}: {exc.code} {detail}") from None


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


def _disabled_admission_plugins(cp: ControlPlane) -> list[str]:
    # ServiceAccount stays off in full mode too (as in envtest): it rejects pods until the
    # serviceaccount controller has created the namespace's "default" ServiceAccount, so a
    # pod created right after its namespace would race the controller; nothing here needs
    # the token volume it would inject (kwok runs no containers).
    # A real node runs pods that talk to the API (CoreDNS, Ray's autoscaler, an in-cluster
    # operator): they need the token volume, so there it stays on.
    plugins = [] if cp.real_nodes else ["ServiceAccount"]
    if cp.full:
        # It taints new nodes node.kubernetes.io/not-ready and the node-lifecycle controller
        # (disabled, see KCM_DISABLED_CONTROLLERS) would lift that: fake nodes stay untainted.
        plugins.append("TaintNodesByCondition")
    return plugins


def _apiserver_args(cp: ControlPlane) -> list[str]:
    assert cp.certs is not None
    c = cp.certs
    return [
        f"--etcd-servers={cp.etcd_url}",
        f"--secure-port={cp.apiserver_port}",
        # loopback only, real node or not: never reachable from another machine
        "--bind-address=127.0.0.1",
        # with a real node, pods reach the API through the kubernetes Service, whose endpoint
        # is the node's bridge address (the host side), where hack/apiserver_forward.py
        # (started by the real node) listens and pipes to 127.0.0.1
        *(
            [
                f"--advertise-address={REAL_NODE_IP}",
                # dial kubelets by InternalIP: a node name looked up in host DNS leaves the box
                "--kubelet-preferred-address-types=InternalIP",
            ]
            if cp.real_nodes
            else []
        ),
        f"--cert-dir={cp.dir / 'certs'}",
        f"--tls-cert-file={c.serving_cert}",
        f"--tls-private-key-file={c.serving_key}",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        "--allow-privileged=true",
        "--authorization-mode=RBAC",
        f"--disable-admission-plugins={','.join(_disabled_admission_plugins(cp))}",
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

# ----------------------------------------------------------------- full mode: components

# client identities: kube-controller-manager runs every controller under its own identity
# (--use-service-account-credentials=false), which the default RBAC role for
# system:kube-controller-manager does not cover, hence system:masters; the scheduler's
# default RBAC (system:kube-scheduler, system:volume-scheduler) is enough; kwok patches
# node/pod status, deletes pods and writes leases, so it is an admin too.
FULL_CLIENT_IDENTITIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "kube-controller-manager": ("system:kube-controller-manager", ("system:masters",)),
    "kube-scheduler": ("system:kube-scheduler", ()),
    "kwok": ("kwok-controller", ("system:masters",)),
}
COMPONENT_QPS = 500  # client-side rate limits of kcm and scheduler (defaults 20 and 50)
COMPONENT_BURST = 1000
KCM_DISABLED_CONTROLLERS = (
    "node-ipam-controller",  # no pod CIDRs per node: kwok hands out pod IPs from FAKE_POD_CIDR
    "node-lifecycle-controller",  # no not-ready taints or evictions for heartbeat hiccups
    "cloud-node-lifecycle-controller",  # no cloud provider ...
    "node-route-controller",
    "service-lb-controller",
    "persistentvolume-attach-detach-controller",  # ... and no volume plugins on fake nodes
    "certificatesigningrequest-signing-controller",  # no cluster signing CA
    "horizontal-pod-autoscaler-controller",  # no metrics API
)


def _controller_manager_args(cp: ControlPlane) -> list[str]:
    assert cp.certs is not None and cp.certs.component_serving is not None
    kubeconfig = cp.component_kubeconfig(KUBE_CONTROLLER_MANAGER.name)
    return [
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        # no lookup of kube-system/extension-apiserver-authentication (it has no
        # request-header CA, which makes the lookup log errors): trust the client CA directly
        "--authentication-skip-lookup=true",
        f"--client-ca-file={cp.certs.client_ca}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--bind-address=127.0.0.1",
        f"--secure-port={cp.controller_manager_port}",
        f"--tls-cert-file={cp.certs.component_serving.cert}",
        f"--tls-private-key-file={cp.certs.component_serving.key}",
        "--leader-elect=false",
        "--use-service-account-credentials=false",
        f"--controllers=*,{','.join('-' + c for c in KCM_DISABLED_CONTROLLERS)}",
        f"--service-account-private-key-file={cp.certs.sa_key}",
        f"--root-ca-file={cp.certs.serving_ca}",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        f"--cluster-name={CONTEXT_NAME}",
        f"--kube-api-qps={COMPONENT_QPS}",
        f"--kube-api-burst={COMPONENT_BURST}",
        "--concurrent-job-syncs=10",
        "--concurrent-replicaset-syncs=10",
        "--profiling=false",
    ]


def _scheduler_args(cp: ControlPlane) -> list[str]:
    assert cp.certs is not None and cp.certs.component_serving is not None
    kubeconfig = cp.component_kubeconfig(KUBE_SCHEDULER.name)
    return [
        f"--config={cp.components_dir / 'kube-scheduler.yaml'}",
        f"--authentication-kubeconfig={kubeconfig}",
        # no lookup of kube-system/extension-apiserver-authentication (it has no
        # request-header CA, which makes the lookup log errors): trust the client CA directly
        "--authentication-skip-lookup=true",
        f"--client-ca-file={cp.certs.client_ca}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--bind-address=127.0.0.1",
        f"--secure-port={cp.scheduler_port}",
        f"--tls-cert-file={cp.certs.component_serving.cert}",
        f"--tls-private-key-file={cp.certs.component_serving.key}",
        "--profiling=false",
    ]


# ----------------------------------------------------------------- full mode: kwok + nodes


def kwok_stage_files() -> list[Path]:
    """The Stage files kwok loads (``hack/kwok/*.yaml``, sorted)."""
    return sorted(KWOK_STAGE_DIR.glob("*.yaml"))


def fake_node_ip(index: int) -> str:
    return str(FAKE_NODE_IP_NET.network_address + 2 + index)


def fake_node(name: str, index: int) -> dict[str, Any]:
    """A Node object for kwok: untainted, big capacity, an InternalIP (pods' hostIP)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {FAKE_NODE_ANNOTATION: "fake"},
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
            },
        },
        "spec": {},
        "status": {
            "capacity": dict(FAKE_NODE_CAPACITY),
            "allocatable": dict(FAKE_NODE_CAPACITY),
            "addresses": [
                {"type": "InternalIP", "address": fake_node_ip(index)},
                {"type": "Hostname", "address": name},
            ],
        },
    }


def _kwok_args(cp: ControlPlane) -> list[str]:
    return [
        f"--kubeconfig={cp.component_kubeconfig(KWOK.name)}",
        f"--manage-nodes-with-annotation-selector={FAKE_NODE_ANNOTATION}=fake",
        *(f"--config={path}" for path in kwok_stage_files()),
        f"--server-address=127.0.0.1:{cp.kwok_port}",
        f"--node-ip={FAKE_NODE_IP_NET.network_address + 1}",
        f"--cidr={FAKE_POD_CIDR}",
    ]


def _kwok_env(cp: ControlPlane) -> dict[str, str]:
    # kwok always loads ~/.kwok/kwok.yaml when it exists: keep the user's out of the way
    return {"HOME": str(cp.dir / "kwok-home")}


KUBE_CONTROLLER_MANAGER = ComponentSpec(
    "kube-controller-manager",
    "kube-controller-manager",
    _controller_manager_args,
    ControlPlane._wait_controller_manager,
    before_start=ControlPlane._create_fake_nodes,
)
KUBE_SCHEDULER = ComponentSpec(
    "kube-scheduler", "kube-scheduler", _scheduler_args, ControlPlane._wait_scheduler
)
KWOK = ComponentSpec("kwok", "kwok", _kwok_args, ControlPlane._wait_kwok, env=_kwok_env)
FULL_COMPONENT_BINARIES = tuple(s.binary for s in (KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER, KWOK))


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


def cmd_up(
    workdir: Path,
    full: bool,
    timeout: float,
    real_nodes: int = 0,
    real_nodes_only: bool = False,
    history_server: bool = False,
) -> int:
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
        cp = ControlPlane(
            workdir,
            full=full or bool(real_nodes),
            start_timeout=timeout,
            real_nodes=real_nodes,
            real_nodes_only=real_nodes_only,
            history_server=history_server,
        )
        cp.start()
        timings = ", ".join(f"{k} {v:.1f}s" for k, v in cp.startup_seconds.items())
        print(f"controlplane: ready at {cp.server} ({timings}); logs in {workdir}", file=sys.stderr)
        if cp.real_node is not None:
            node = ", ".join(f"{k} {v:.1f}s" for k, v in cp.real_node.timings.items())
            print(f"controlplane: real node {cp.real_node.name} ({node})", file=sys.stderr)
        print_object_store(cp, "controlplane")
        print(f"export KUBECONFIG={cp.kubeconfig}", flush=True)
        while True:
            signal.pause()
    except _Interrupted as exc:
        print(f"controlplane: {exc}, stopping", file=sys.stderr)
        return 0
    except (BuildError, ControlPlaneError, RuntimeError, subprocess.CalledProcessError) as exc:
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


def object_store_host(*, real_node: bool) -> str:
    """Where the history server's store listens: the real node's bridge address (its pods'
    gateway, also reachable from this machine) when there is one, else 127.0.0.1."""
    return REAL_NODE_IP if real_node else "127.0.0.1"


def print_object_store(cp: ControlPlane, prog: str) -> None:
    """Tell where the history server's store listens and where its env file is, and the
    history server's URL (stderr)."""
    store = cp.object_store
    if store is None or store.info is None:
        return
    print(
        f"{prog}: history server object store (S3, bucket {store.info.bucket}) at "
        f"{store.info.endpoint}; collector env in {store.info.env_file}",
        file=sys.stderr,
        flush=True,
    )
    server = cp.history_server_proc
    if server is not None and server.url:
        print(
            f"{prog}: history server at {server.url} (URL in {server.url_file}; "
            f"kubectl ray history list --history-server {server.url})",
            file=sys.stderr,
            flush=True,
        )


def cmd_down(workdir: Path, timeout: float) -> int:
    pid_file = workdir / PID_FILE
    pid = _read_pid(pid_file)
    if pid is None or not _pid_alive(pid):
        print(f"controlplane: nothing running in {workdir}", file=sys.stderr)
        pid_file.unlink(missing_ok=True)
        if (workdir / "node").is_dir() and _load_realnode().cleanup_leftovers():
            print("controlplane: removed what a dead real node left behind", file=sys.stderr)
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
    up = sub.add_parser("up", help="run the control plane in the foreground")
    up.add_argument("--dir", type=Path, required=True, help="work dir (kubeconfig, logs, certs)")
    up.add_argument(
        "--full", action="store_true", help="also controller-manager, scheduler, kwok + nodes"
    )
    up.add_argument("--timeout", type=float, default=120.0, help="per-component start timeout")
    up.add_argument(
        "--real-nodes",
        type=int,
        default=0,
        metavar="N",
        help="also N (=1) real nodes (kubelet, containerd, kube-proxy, CoreDNS; implies --full); "
        "tainted kuberay.io/real-node=true:NoSchedule, labelled kuberay.io/real-node=true",
    )
    up.add_argument(
        "--real-nodes-only",
        action="store_true",
        help="no kwok fake nodes; the real node is untainted, so every pod lands there",
    )
    up.add_argument(
        "--history-server",
        action="store_true",
        help="also a local S3 store (moto) for the history server's collector, bucket "
        "ray-historyserver; its settings in DIR/object-store.env; and the history server over "
        "it on 127.0.0.1 (URL in DIR/history-server.url)",
    )
    down = sub.add_parser("down", help="stop a running `up` for --dir")
    down.add_argument("--dir", type=Path, required=True)
    down.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    if args.cmd == "up":
        return cmd_up(
            args.dir,
            args.full,
            args.timeout,
            args.real_nodes,
            args.real_nodes_only,
            args.history_server,
        )
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
