"""One background server of a local control plane (moto's S3 server, the history server):
a process in its own session, its output appended to a log file, its pid in a pid file,
a bounded wait until it serves, and a stop that leaves nothing of its process group.

Used by ``object_store.py`` and ``history_server.py``; the port a server bound (it is given
port 0) is read back from ``/proc`` (:func:`listening_port`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, TypeVar

T = TypeVar("T")


def listening_port(pid: int) -> int | None:
    """The TCP port process ``pid`` listens on (its socket inodes in ``/proc/net/tcp*``)."""
    inodes: set[str] = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    except OSError:
        return None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                return int(fields[1].rsplit(":", 1)[1], 16)
    return None


def stop_process_group(popen: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM ``popen``'s process group (it was started with ``start_new_session``), wait
    ``timeout`` seconds, then SIGKILL the group; anything left in it is killed too."""
    if popen.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(popen.pid, signal.SIGTERM)
        try:
            popen.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(popen.pid, signal.SIGKILL)
            popen.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(popen.pid, signal.SIGKILL)


def log_tail(path: Path, chars: int = 2000) -> str:
    """The last ``chars`` characters of a log file ("(no log)" when it cannot be read)."""
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return "(no log)"


class ServerProcess:
    """The process of one server called ``name``: output appended to ``log_path``, pid in
    ``pid_path`` while it runs. Failures raise ``error`` (an exception type taking a message)
    with the log's tail. Not thread-safe; :meth:`stop` is idempotent."""

    def __init__(
        self,
        name: str,
        log_path: Path,
        pid_path: Path,
        error: Callable[[str], Exception],
        *,
        start_timeout: float,
        preexec_fn: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self.log_path = log_path
        self.pid_path = pid_path
        self.error = error
        self.start_timeout = start_timeout
        self._preexec = preexec_fn
        self._popen: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """The process's pid while it runs."""
        return self._popen.pid if self._popen is not None else None

    @property
    def running(self) -> bool:
        """Started and not stopped (it may have exited on its own)."""
        return self._popen is not None

    def launch(
        self, command: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None
    ) -> None:
        """Start ``command`` in a new session in ``cwd`` (``env``: its whole environment;
        None: this process's) and write the pid file."""
        if self._popen is not None:
            raise self.error(f"{self.name} already started")
        cwd.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("ab")
        self._log.write(f"==== {time.strftime('%F %T')} starting {self.name}\n".encode())
        self._log.flush()
        self._popen = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
            preexec_fn=self._preexec,
        )
        self.pid_path.write_text(f"{self._popen.pid}\n")

    def wait_until(self, probe: Callable[[int], T | None], what: str) -> T:
        """Poll ``probe(pid)`` every 50 ms until it returns a value (returned), for at most
        ``start_timeout`` seconds; raises when the process exits first or time runs out
        (``what`` says what was waited for: "listening", "ready")."""
        popen = self._popen
        if popen is None:
            raise self.error(f"{self.name} is not started")
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            code = popen.poll()
            if code is not None:
                raise self.error(
                    f"{self.name} exited with code {code}; {self.log_path}:\n"
                    f"{log_tail(self.log_path)}"
                )
            value = probe(popen.pid)
            if value is not None:
                return value
            time.sleep(0.05)
        raise self.error(
            f"{self.name} not {what} after {self.start_timeout:.0f}s; {self.log_path}:\n"
            f"{log_tail(self.log_path)}"
        )

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM the process group, SIGKILL after ``timeout``; close the log and remove the
        pid file."""
        popen, self._popen = self._popen, None
        if popen is not None:
            stop_process_group(popen, timeout)
        if self._log is not None:
            self._log.close()
            self._log = None
        self.pid_path.unlink(missing_ok=True)


__all__ = ["ServerProcess", "listening_port", "log_tail", "stop_process_group"]
