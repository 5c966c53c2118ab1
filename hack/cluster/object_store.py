"""A local S3-compatible object store for the history server (``up --history-server``).

moto's S3 server (``moto_server``, from the dev extra, beside this interpreter) runs as a
subprocess of the control plane, in memory, on one address only: ``127.0.0.1`` without a real
node, the real node's bridge address (``realnode.NODE_IP``) with one, which both this machine
and the node's pods reach (the node's INPUT rule answers only loopback and the bridge). Never
a wildcard address, and never looked up: it runs through ``moto_main.py``, so binding sends
no reverse DNS query for the bridge address to the machine's resolver. Its port is ephemeral
(moto binds port 0; the port is read back from ``/proc``), so two clusters never collide.

Once it listens, the bucket ``BUCKET`` is created and ``DIR/object-store.env`` is written:
``KEY=VALUE`` lines with KubeRay's variable names (``STORAGE_BACKEND=s3``, ``S3_BUCKET``,
``S3_ENDPOINT``, ``S3_REGION``, ``S3FORCE_PATH_STYLE=true``, ``S3DISABLE_SSL=true``,
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``), values a RayCluster's
``historyServerOptions.collectorOptions.env`` carries unchanged, and that
``kuberay.historyserver.storage.config.storage_settings(env=...)`` opens as they are.
The credentials are fixed placeholders: moto checks no signature.

Library use (``ControlPlane(history_server=True)`` does this after the real node is up)::

    store = ObjectStoreServer(workdir, host="127.0.0.1")
    info = store.start()          # raises ObjectStoreError with moto's log tail on failure
    print(info.env_file, info.endpoint)
    store.stop()                  # SIGTERM, then SIGKILL; the env file is removed
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from hack.cluster.server_process import ServerProcess

# re-exported: the history server's launcher, the history bench and the storage tests use them
from hack.cluster.server_process import listening_port as listening_port
from hack.cluster.server_process import stop_process_group as stop_process_group

BUCKET = "ray-historyserver"  # KubeRay's default S3_BUCKET
REGION = "us-east-1"
ACCESS_KEY_ID = "kuberay-local"
SECRET_ACCESS_KEY = "kuberay-local-secret"
ENV_FILE = "object-store.env"
LOG_FILE = "object-store.log"
PID_FILE = "object-store.pid"
START_TIMEOUT = 60.0
#: the keys of the env file, in the order written
ENV_KEYS = (
    "STORAGE_BACKEND",
    "S3_BUCKET",
    "S3_ENDPOINT",
    "S3_REGION",
    "S3FORCE_PATH_STYLE",
    "S3DISABLE_SSL",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
)


class ObjectStoreError(RuntimeError):
    """The store did not start (the message carries moto's log tail) or is misconfigured."""


@dataclass(frozen=True)
class ObjectStoreInfo:
    """Where the started store listens and the env file describing it."""

    host: str
    port: int
    bucket: str
    env_file: Path

    @property
    def endpoint(self) -> str:
        """``http://host:port`` (S3_ENDPOINT)."""
        return f"http://{self.host}:{self.port}"

    def env(self) -> dict[str, str]:
        """The collector's env for this store (:func:`store_env`)."""
        return store_env(self.endpoint, self.bucket)


def store_env(endpoint: str, bucket: str = BUCKET) -> dict[str, str]:
    """KubeRay's S3 settings for ``endpoint`` (an ``http://host:port`` URL) and ``bucket``,
    keyed and ordered as ``ENV_KEYS``; every value is a plain string a Kubernetes env var
    holds as it is (the flags are the strings ``"true"``, which KubeRay compares against)."""
    if not endpoint.startswith("http://"):
        raise ObjectStoreError(f"the local store speaks plain HTTP, not {endpoint!r}")
    return {
        "STORAGE_BACKEND": "s3",
        "S3_BUCKET": bucket,
        "S3_ENDPOINT": endpoint,
        "S3_REGION": REGION,
        "S3FORCE_PATH_STYLE": "true",
        "S3DISABLE_SSL": "true",
        "AWS_ACCESS_KEY_ID": ACCESS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
    }


def env_file_text(env: Mapping[str, str]) -> str:
    """``KEY=VALUE`` lines (no quoting: no value holds a space, quote, ``#`` or newline,
    which is checked), one per key, newline-terminated."""
    for key, value in env.items():
        if not key.replace("_", "").isalnum() or any(c in value for c in " \t\n\r'\"#$\\"):
            raise ObjectStoreError(f"{key}={value!r} cannot be written unquoted")
    return "".join(f"{key}={value}\n" for key, value in env.items())


def read_env_file(path: Path) -> dict[str, str]:
    """The ``KEY=VALUE`` lines of ``path`` (blank lines and ``#`` comments skipped)."""
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ObjectStoreError(f"{path}: not KEY=VALUE: {line!r}")
        out[key] = value
    return out


def moto_server_binary() -> Path:
    """``moto_server`` beside this interpreter (the venv's), else on ``PATH``."""
    beside = Path(sys.executable).with_name("moto_server")
    if beside.exists():
        return beside
    found = shutil.which("moto_server")
    if found:
        return Path(found)
    raise ObjectStoreError(
        f"no moto_server beside {sys.executable} nor on PATH: install the dev extra "
        "(pip install -e '.[dev]': moto, flask, flask-cors)"
    )


#: moto_server's entry without the reverse DNS query of its address (see that file).
MOTO_MAIN = Path(__file__).resolve().with_name("moto_main.py")


def moto_python(binary: Path) -> Path:
    """The Python interpreter of the ``moto_server`` script ``binary`` (its ``#!`` line),
    else this one."""
    try:
        first = binary.read_bytes().split(b"\n", 1)[0]
    except OSError:
        return Path(sys.executable)
    if first.startswith(b"#!"):
        words = first[2:].decode(errors="replace").split()
        if words and Path(words[0]).name.startswith("python") and Path(words[0]).exists():
            return Path(words[0])
    return Path(sys.executable)


def create_bucket(endpoint: str, bucket: str = BUCKET, timeout: float = 10.0) -> None:
    """Create ``bucket`` (path style, signed with the placeholder credentials); an existing
    one is fine. botocore comes with the dev extra (aiobotocore)."""
    import botocore.session
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    client = botocore.session.get_session().create_client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_access_key=SECRET_ACCESS_KEY,
        config=Config(
            s3={"addressing_style": "path"},
            connect_timeout=timeout,
            read_timeout=timeout,
            retries={"max_attempts": 3},
        ),
    )
    try:
        client.create_bucket(Bucket=bucket)
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        if code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
            raise ObjectStoreError(f"create bucket {bucket!r} at {endpoint}: {exc}") from exc
    except BotoCoreError as exc:
        raise ObjectStoreError(f"create bucket {bucket!r} at {endpoint}: {exc}") from exc
    finally:
        client.close()


class ObjectStoreServer:
    """moto's S3 server for one control plane: files in ``workdir`` (``object-store.env``,
    ``object-store.log``, ``object-store.pid``), listening on ``host`` only.

    ``host`` must be a concrete address (``0.0.0.0``/``::`` are refused): ``127.0.0.1``, or
    the real node's bridge address. ``preexec_fn`` runs in the child before exec (the control
    plane passes its die-with-parent hook). :meth:`start` and :meth:`stop` are not
    thread-safe; :meth:`stop` is idempotent.
    """

    def __init__(
        self,
        workdir: Path,
        host: str,
        *,
        port: int = 0,
        bucket: str = BUCKET,
        start_timeout: float = START_TIMEOUT,
        preexec_fn: Callable[[], None] | None = None,
    ) -> None:
        if host in ("", "0.0.0.0", "::", "*"):
            raise ObjectStoreError(f"refusing to listen on every interface ({host!r})")
        self.dir = workdir
        self.host = host
        self.port = port
        self.bucket = bucket
        self.env_file = workdir / ENV_FILE
        self.log_path = workdir / LOG_FILE
        self.info: ObjectStoreInfo | None = None
        self._process = ServerProcess(
            "moto_server",
            self.log_path,
            workdir / PID_FILE,
            ObjectStoreError,
            start_timeout=start_timeout,
            preexec_fn=preexec_fn,
        )

    @property
    def pid(self) -> int | None:
        """moto_server's pid while it runs."""
        return self._process.pid

    def start(self) -> ObjectStoreInfo:
        """Start moto_server, wait (bounded) until it listens, create the bucket and write the
        env file; on any failure the process is stopped and ``ObjectStoreError`` raised."""
        if self._process.running:
            raise ObjectStoreError("object store already started")
        binary = moto_server_binary()
        self.env_file.unlink(missing_ok=True)
        # moto's own interpreter runs moto_main.py: moto without a reverse lookup of host
        command = [str(moto_python(binary)), str(MOTO_MAIN), "-H", self.host, "-p", str(self.port)]
        try:
            self._process.launch(command, self.dir)
            port = self._process.wait_until(listening_port, "listening")
            info = ObjectStoreInfo(self.host, port, self.bucket, self.env_file)
            create_bucket(info.endpoint, self.bucket)
            tmp = self.env_file.with_suffix(".env.partial")
            tmp.write_text(env_file_text(info.env()))
            tmp.replace(self.env_file)
        except BaseException:
            self.stop()
            raise
        self.info = info
        return info

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM moto_server's process group, SIGKILL after ``timeout``; remove the env and
        pid files (what they describe is gone)."""
        self._process.stop(timeout)
        self.info = None
        self.env_file.unlink(missing_ok=True)
