"""A local Kubernetes control plane for tests: controller-runtime's ``envtest``, in Python.

:class:`ControlPlane` starts etcd and kube-apiserver from the cached binaries on free
loopback ports with throwaway CAs (:mod:`kuberay.testing.pki`), writes an admin
(``system:masters``) client-cert kubeconfig, hands out clients (:meth:`ControlPlane.client`,
:meth:`ControlPlane.api`), installs CRDs (:meth:`ControlPlane.install_crds`) and stops
everything again. Binaries come from ``$KUBEBUILDER_ASSETS`` (a directory holding ``etcd``
and ``kube-apiserver``, as controller-runtime's envtest takes them), else from this project's
cache ``~/.cache/kuberay/bin/<version>/``, else, in a source checkout, from a build
(:mod:`kuberay.testing.binaries`); so ``pip install kuberay[testing]`` plus those two binaries
is enough for the default mode. kuberay's runtime never imports this module.

``full=True`` adds kube-controller-manager, kube-scheduler and kwok with fake nodes
(:mod:`kuberay.testing._components`); ``real_nodes=1`` a real node
(``hack/cluster/realnode.py``); ``history_server=True`` a local S3 store and the history server
over it (``hack/cluster/object_store.py``, ``hack/cluster/history_server.py``). Those modes need
the source checkout (:mod:`kuberay.testing.checkout`) and raise
:class:`~kuberay.testing.checkout.CheckoutNotFound` without one. ``hack/controlplane.py`` is
the command-line front end (``up``/``down``)::

    with ControlPlane(Path("/tmp/cp")) as cp:
        cp.install_crds()
        print(cp.kubeconfig, cp.server)

    with ControlPlane(Path("/tmp/cp-full"), full=True) as cp:
        print(cp.node_names)  # pods scheduled there become Running + Ready
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import json
import os
import shutil
import signal
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from kuberay.testing._base import (
    CONTEXT_NAME,
    LOG_TAIL_LINES,
    PRCTL,
    SERVICE_CLUSTER_IP_RANGE,
    ComponentSpec,
    ControlPlaneError,
    Proc,
    die_with_parent,
    free_port,
    iter_component_pids,
    post_json,
    tail,
    write_kubeconfig,
)
from kuberay.testing._components import (
    DEFAULT_FAKE_NODES,
    ETCD,
    FAKE_NODE_ANNOTATION,
    FAKE_NODE_CAPACITY,
    FAKE_NODE_IP_NET,
    FAKE_NODE_PREFIX,
    FAKE_POD_CIDR,
    FULL_CLIENT_IDENTITIES,
    FULL_COMPONENT_BINARIES,
    KUBE_APISERVER,
    KUBE_CONTROLLER_MANAGER,
    KUBE_SCHEDULER,
    KWOK,
    KWOK_STAGE_DIR,
    fake_node,
    fake_node_ip,
    kwok_stage_dir,
    kwok_stage_files,
    write_component_configs,
)
from kuberay.testing.binaries import KUBERNETES_VERSION, BuildError, locate
from kuberay.testing.checkout import CheckoutNotFound, import_hack, require_checkout
from kuberay.testing.pki import (
    KUBERNETES_SERVICE_IP,
    REAL_NODE_IP,
    Certs,
    TinyCA,
    generate_certs,
)

if TYPE_CHECKING:
    from kuberay.kube import Client

__all__ = [
    "CONTEXT_NAME",
    "DEFAULT_FAKE_NODES",
    "ETCD",
    "FAKE_NODE_ANNOTATION",
    "FAKE_NODE_CAPACITY",
    "FAKE_NODE_IP_NET",
    "FAKE_NODE_PREFIX",
    "FAKE_POD_CIDR",
    "FULL_COMPONENT_BINARIES",
    "KUBERNETES_SERVICE_IP",
    "KUBERNETES_VERSION",
    "KUBE_APISERVER",
    "KWOK_STAGE_DIR",
    "LOG_TAIL_LINES",
    "REAL_NODE_IP",
    "SERVICE_CLUSTER_IP_RANGE",
    "BuildError",
    "CheckoutNotFound",
    "ControlPlane",
    "ControlPlaneError",
    "TinyCA",
    "fake_node",
    "fake_node_ip",
    "free_port",
    "iter_component_pids",
    "kwok_stage_files",
    "object_store_host",
]

_LIVE: set[ControlPlane] = set()
_LIVE_LOCK = threading.Lock()


@atexit.register
def _stop_all() -> None:
    with _LIVE_LOCK:
        planes = list(_LIVE)
    for cp in planes:
        with contextlib.suppress(Exception):
            cp.stop()


def object_store_host(*, real_node: bool) -> str:
    """Where the history server's store listens: the real node's bridge address (its pods'
    gateway, also reachable from this machine) when there is one, else 127.0.0.1."""
    return REAL_NODE_IP if real_node else "127.0.0.1"


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
    ``history_server=True``: after everything else, a local S3 store
    (``hack/cluster/object_store.py``) on 127.0.0.1, or on the real node's bridge address with
    a real node; ``object_store`` is its ``ObjectStoreServer`` (``.info.env_file`` =
    ``dir/object-store.env``), stopped after the real node (whose pods' collectors flush to it
    on their way out); then ``history_server_proc``, the history server over that store
    (``hack/cluster/history_server.py``,
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
        self._procs: dict[str, Proc] = {}
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
        """Whether any component process is running (between ``start()`` and ``stop()``)."""
        return bool(self._procs)

    def binary(self, name: str) -> Path:
        """The path of component binary ``name``: given, else found in ``$KUBEBUILDER_ASSETS``
        or the cache, else built (``build=True``, in a source checkout); raises
        ``BuildError`` when it cannot be had (:func:`kuberay.testing.binaries.locate`)."""
        if name not in self._binaries:
            self._binaries[name] = locate(name, build=self._build)
        return self._binaries[name]

    def _require_checkout(self) -> None:
        """Raise :class:`CheckoutNotFound` when a mode of this control plane needs the source
        checkout's ``hack/`` and there is none (before anything is started)."""
        modes = [
            ("full=True (kwok's stages in hack/kwok, its binaries' build)", self.full),
            ("real_nodes=1 (hack/cluster/realnode.py)", bool(self.real_nodes)),
            ("history_server=True (hack/cluster/object_store.py)", self.history_server),
        ]
        needed = [what for what, on in modes if on]
        if needed:
            require_checkout("ControlPlane(" + ", ".join(needed) + ")")

    def start(self) -> None:
        """Generate certs, start every component, write the kubeconfig when ready."""
        with self._lock:
            if self._procs:
                raise ControlPlaneError("control plane already started")
            began = time.monotonic()
            self._require_checkout()
            for spec in self.components:  # build (or find) binaries before touching anything
                self.binary(spec.binary)
            if self.real_nodes:
                for name in ("kubelet", "kube-proxy", "coredns"):
                    self.binary(name)
            if self.full and not kwok_stage_files():
                raise ControlPlaneError(f"no kwok stages (*.yaml) in {kwok_stage_dir()}")
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
                    write_component_configs(self)
                for spec in self.components:
                    self._start_component(spec)
                if self.real_nodes:
                    t0 = time.monotonic()
                    realnode = import_hack("hack.cluster.realnode", "real_nodes=1")
                    self.real_node = realnode.RealNode(
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
        object_store = import_hack("hack.cluster.object_store", "history_server=True")
        store = object_store.ObjectStoreServer(
            self.dir,
            object_store_host(real_node=self.real_node is not None),
            start_timeout=self.start_timeout,
            preexec_fn=die_with_parent if main_thread and PRCTL is not None else None,
        )
        self.object_store = store
        store.start()
        self.startup_seconds["object-store"] = time.monotonic() - t0

    def _start_history_server(self) -> None:
        """``kuberay-history-server`` over the object store (its env file's settings), on
        127.0.0.1 only: this machine's browser and ``kubectl ray history --server`` reach it;
        it serves Ray's dashboard UI from the builds of the Ray images built here, as the
        in-cluster image does (``--dashboard-ui-dir``)."""
        t0 = time.monotonic()
        main_thread = threading.current_thread() is threading.main_thread()
        history_server = import_hack("hack.cluster.history_server", "history_server=True")
        server = history_server.HistoryServer(
            self.dir,
            self.object_store.info.env(),
            dashboard_ui_dir=history_server.local_dashboard_ui_dir(),
            start_timeout=self.start_timeout,
            preexec_fn=die_with_parent if main_thread and PRCTL is not None else None,
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
        resp = post_json(
            f"{self.etcd_url}/v3/kv/range",
            {"key": base64.b64encode(b"\x00").decode(), "limit": 1, "count_only": True},
        )
        rev = int(resp["header"]["revision"])
        try:
            post_json(f"{self.etcd_url}/v3/kv/compaction", {"revision": str(rev), "physical": True})
        except ControlPlaneError as exc:
            if "compacted" not in str(exc):  # already compacted at this revision
                raise
        return rev

    def pids(self) -> dict[str, int]:
        """Component name -> pid of the running processes."""
        return {name: p.popen.pid for name, p in self._procs.items()}

    async def client(self, *, qps: float = 0, burst: int = 1) -> Client:
        """kuberay's dict client as cluster admin (unthrottled by default); close it after."""
        from kuberay.kube import Client

        return await Client.from_kubeconfig(self.kubeconfig, qps=qps, burst=burst)

    async def install_crds(self, directory: Path | None = None, *, timeout: float = 180.0) -> None:
        """Apply every CRD in ``directory`` (default: kuberay's, ``manifests/crds``) and wait
        until each is Established and served (:func:`kuberay.testing.crds.install_crds`)."""
        from kuberay.testing import crds

        client = await self.client()
        try:
            await crds.install_crds(client, timeout=timeout, directory=directory or crds.CRD_DIR)
        finally:
            await client.close()

    # ----------------------------------------------------------------- internals

    @property
    def etcd_data_dir(self) -> Path:
        """etcd's data directory (removed at start and stop)."""
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
        preexec = die_with_parent if main_thread and PRCTL is not None else None
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
        self._procs[spec.name] = Proc(spec.name, popen, log_path, log_file, started)
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
                f"{proc.log_path}:\n{tail(proc.log_path)}"
            )

    def _timeout(self, name: str, what: str) -> ControlPlaneError:
        proc = self._procs[name]
        return ControlPlaneError(
            f"{name} not {what} within {self.start_timeout:.0f}s; last lines of "
            f"{proc.log_path}:\n{tail(proc.log_path)}"
        )

    def ssl_context(self) -> ssl.SSLContext:
        """TLS context trusting the serving CA and presenting the admin client cert."""
        assert self.certs is not None
        ctx = ssl.create_default_context(cafile=str(self.certs.serving_ca))
        ctx.load_cert_chain(str(self.certs.admin_cert), str(self.certs.admin_key))
        return ctx

    def _write_kubeconfig(self, path: Path, cert: Path, key: Path) -> None:
        """Write (atomically, mode 0600) a kubeconfig for ``self.server`` with a client cert."""
        assert self.certs is not None
        write_kubeconfig(path, self.server, self.certs.serving_ca, cert, key)

    # ----------------------------------------------------------------- full mode

    @property
    def components_dir(self) -> Path:
        """Kubeconfigs and config files of the full-mode components."""
        return self.dir / "components"

    def component_kubeconfig(self, name: str) -> Path:
        """The kubeconfig a full-mode component uses (its own client cert)."""
        return self.components_dir / f"{name}.kubeconfig"

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
