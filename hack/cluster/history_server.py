"""The history server for a local cluster (``controlplane.py up --history-server``).

``kuberay-history-server`` (the console script beside this interpreter, i.e. the venv's)
runs as a subprocess of the control plane over the local object store
(``hack/cluster/object_store.py``): its storage settings are exactly the store's env file
(``STORAGE_BACKEND=s3``, ``S3_*``, ``AWS_*``), passed as environment variables (inherited
storage variables are dropped). It listens on
``127.0.0.1`` only (never a wildcard address) on an ephemeral port (``--listen
127.0.0.1:0``; the port is read back from ``/proc``), so it is reachable from this machine
and two clusters never collide.

Once ``/readz`` answers ``ok``, ``DIR/history-server.url`` holds its base URL
(``http://127.0.0.1:<port>``, one line). Its log is ``DIR/history-server.log``.

Ray's dashboard UI: like the server image (whose ``/dashboard`` holds the build of each Ray
image built here), it serves the builds of those images, given as ``--dashboard-ui-dir``
(:func:`local_dashboard_ui_dir`: taken out of the cached Ray image archives once, on demand,
into ``<image cache>/dashboard-ui/<Ray recipe>/<major.minor>``). With no Ray image built it
gets none and its ``/`` says how to provide one.

Library use (``ControlPlane(history_server=True)`` does this after the object store)::

    server = HistoryServer(workdir, store_env)
    url = server.start()      # raises HistoryServerError with the log tail on failure
    server.stop()             # SIGTERM, then SIGKILL; the url file is removed
"""

from __future__ import annotations

import os
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path

from hack.cluster.server_process import ServerProcess, listening_port

URL_FILE = "history-server.url"
LOG_FILE = "history-server.log"
PID_FILE = "history-server.pid"
BINARY = "kuberay-history-server"
START_TIMEOUT = 60.0
#: inherited variables with these prefixes are dropped: only the store's settings count
_STORAGE_PREFIXES = ("STORAGE_", "S3", "AWS_", "GCS_", "AZURE_STORAGE_", "OSS_", "LOCAL_STORAGE")


class HistoryServerError(RuntimeError):
    """The server did not start (the message carries its log tail) or is misconfigured."""


def local_dashboard_ui_dir() -> Path | None:
    """The dashboard UI builds of the Ray images built here, one directory per
    ``major.minor`` (extracted from their archives the first time), or None when no Ray image
    is built (``make images``)."""
    from hack.release import images, ray_ui

    archives = {v: images.ray_archive_path(v) for v in images.SERVER_UI_VERSIONS}
    cache = images.cache_dir() / "dashboard-ui" / images.RAY_RECIPE_VERSION
    return ray_ui.cached_builds(archives, cache)


def server_binary() -> Path:
    """``kuberay-history-server`` beside this interpreter (the venv's), else on ``PATH``."""
    beside = Path(sys.executable).with_name(BINARY)
    if beside.exists():
        return beside
    found = shutil.which(BINARY)
    if found:
        return Path(found)
    raise HistoryServerError(
        f"no {BINARY} beside {sys.executable} nor on PATH: install this package "
        "(pip install -e '.[dev]')"
    )


def read_url(workdir: Path) -> str | None:
    """The base URL a running server wrote to ``workdir/history-server.url``, if any."""
    try:
        return (workdir / URL_FILE).read_text().strip() or None
    except OSError:
        return None


#: loopback requests never go through an HTTP proxy the environment names
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _ready(url: str, timeout: float = 2.0) -> bool:
    try:
        with _NO_PROXY.open(f"{url}/readz", timeout=timeout) as resp:
            return bool(resp.status == 200 and resp.read().strip() == b"ok")
    except (urllib.error.URLError, OSError):
        return False


class HistoryServer:
    """One ``kuberay-history-server`` process for a control plane's ``workdir``, over the
    store ``store_env`` describes (KubeRay's variable names), on ``host`` only.

    ``host`` must be a concrete address (``0.0.0.0``/``::`` are refused).
    ``dashboard_ui_dir``: the UI builds to serve (``--dashboard-ui-dir``; see
    :func:`local_dashboard_ui_dir`). ``extra_args`` are appended to the command line.
    ``preexec_fn`` runs in the child before exec (the control plane passes its
    die-with-parent hook). :meth:`start` and :meth:`stop` are not thread-safe; :meth:`stop` is
    idempotent.
    """

    def __init__(
        self,
        workdir: Path,
        store_env: Mapping[str, str],
        *,
        host: str = "127.0.0.1",
        dashboard_ui_dir: Path | None = None,
        extra_args: tuple[str, ...] = (),
        start_timeout: float = START_TIMEOUT,
        preexec_fn: Callable[[], None] | None = None,
    ) -> None:
        if host in ("", "0.0.0.0", "::", "*"):
            raise HistoryServerError(f"refusing to listen on every interface ({host!r})")
        if not store_env.get("STORAGE_BACKEND"):
            raise HistoryServerError("the store's env has no STORAGE_BACKEND")
        self.dir = workdir
        self.host = host
        self.store_env = dict(store_env)
        self.dashboard_ui_dir = dashboard_ui_dir
        self.extra_args = extra_args
        self.url_file = workdir / URL_FILE
        self.log_path = workdir / LOG_FILE
        self.url: str | None = None
        self._process = ServerProcess(
            BINARY,
            self.log_path,
            workdir / PID_FILE,
            HistoryServerError,
            start_timeout=start_timeout,
            preexec_fn=preexec_fn,
        )

    @property
    def pid(self) -> int | None:
        """The server's pid while it runs."""
        return self._process.pid

    def command(self) -> list[str]:
        """The server's command line."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        ui = ["--dashboard-ui-dir", str(self.dashboard_ui_dir)] if self.dashboard_ui_dir else []
        return [
            str(server_binary()),
            "--listen",
            f"{host}:0",
            "--log-format",
            "console",
            *ui,
            *self.extra_args,
        ]

    def start(self) -> str:
        """Start the server, wait (bounded) until ``/readz`` answers, write the url file and
        return the URL; on any failure the process is stopped and ``HistoryServerError``
        raised."""
        if self._process.running:
            raise HistoryServerError("history server already started")
        command = self.command()
        self.url_file.unlink(missing_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(_STORAGE_PREFIXES)}
        env.update(self.store_env)
        try:
            self._process.launch(command, self.dir, env)
            url = self._process.wait_until(self._ready_url, "ready")
            tmp = self.url_file.with_suffix(".url.partial")
            tmp.write_text(url + "\n")
            tmp.replace(self.url_file)
        except BaseException:
            self.stop()
            raise
        self.url = url
        return url

    def _ready_url(self, pid: int) -> str | None:
        """The server's URL once it listens and ``/readz`` answers ``ok``, else None."""
        port = listening_port(pid)
        if port is None:
            return None
        host = f"[{self.host}]" if ":" in self.host else self.host
        url = f"http://{host}:{port}"
        return url if _ready(url) else None

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM the server's process group, SIGKILL after ``timeout``; remove the url and
        pid files (what they describe is gone)."""
        self._process.stop(timeout)
        self.url = None
        self.url_file.unlink(missing_ok=True)
