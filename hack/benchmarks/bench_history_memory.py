"""The history server's memory while serving a 64 MiB one-line log (numbers for docs; never
a test).

    python hack/benchmarks/bench_history_memory.py [--size-mib 64] [--out FILE]

Writes a local store (a temporary directory) with one session whose node has
``one-line.log``: ``--size-mib`` MiB and no newline. Starts ``kuberay-history-server`` over it
(``--storage-backend local``, 127.0.0.1, a free port), enters the session, then reports the
server process's RSS (``/proc/<pid>/status`` ``VmRSS``, MiB): before, the highest seen
during (sampled every 5 ms) and after each of a ``lines=1000`` tail and a whole-log download
(read and dropped as it arrives), with the bytes each answer had.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp

if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from kuberay.historyserver.layout import ClusterRef, Layout
from kuberay.historyserver.storage.local import LocalStore

MIB = 1 << 20
NODE = "ab" * 28
SESSION = "session_2026-01-01_00-00-00_000000_1"
CLUSTER = ClusterRef("default", "bench")


def rss_mib(pid: int) -> float:
    """The process's resident set in MiB (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Sampler:
    """The highest RSS of ``pid`` seen while it runs (a thread polling every 5 ms)."""

    def __init__(self, pid: int) -> None:
        """Start sampling ``pid``."""
        self.pid = pid
        self.peak = rss_mib(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, rss_mib(self.pid))

    def stop(self) -> float:
        """Stop; the peak."""
        self._stop.set()
        self._thread.join()
        return round(self.peak, 1)


async def fill(root: Path, size_mib: int) -> None:
    """The store: the session marker and the one-line log."""
    store = LocalStore(root)
    layout = Layout(CLUSTER)

    async def blocks() -> AsyncIterator[bytes]:
        for i in range(size_mib):
            yield (b"%08d" % i) * (MIB // 8)

    await store.put(layout.session_marker_key(SESSION), b"")
    await store.put(layout.log_key(SESSION, NODE, "one-line.log"), blocks())
    await store.close()


def free_port() -> int:
    """An unused TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def measure(base: str, pid: int) -> dict[str, Any]:
    """Enter the session, then RSS around a tail and a download."""
    out: dict[str, Any] = {}
    jar = aiohttp.CookieJar(unsafe=True)  # the server's cookies, on an IP address
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(timeout=timeout, cookie_jar=jar) as http:
        for _ in range(1000):
            try:
                async with http.get(base + "/readz") as r:
                    if r.status == 200:
                        break
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.01)
        async with http.get(f"{base}/enter_cluster/default/raycluster/bench/{SESSION}") as r:
            assert r.status == 200, await r.text()
        url = f"{base}/api/v0/logs/file?node_id={NODE}&filename=one-line.log"
        out["rss_idle_mib"] = round(rss_mib(pid), 1)
        for name, query in (
            ("tail", "&lines=1000"),
            ("download", "&lines=-1&download_filename=one-line.log"),
        ):
            before = rss_mib(pid)
            sampler = Sampler(pid)
            got = 0
            async with http.get(url + query) as r:
                assert r.status == 200, await r.text()
                truncated = r.headers.get("X-Log-Truncated", "")
                async for chunk in r.content.iter_chunked(1 << 16):
                    got += len(chunk)
            peak = sampler.stop()
            await asyncio.sleep(0.2)
            out[name] = {
                "bytes": got,
                "x_log_truncated": truncated,
                "rss_before_mib": round(before, 1),
                "rss_peak_during_mib": peak,
                "rss_after_mib": round(rss_mib(pid), 1),
            }
    return out


def main() -> int:
    """Run the benchmark; print (and with ``--out`` write) the JSON result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=64)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-hsmem-") as tmp:
        root = Path(tmp) / "store"
        asyncio.run(fill(root, args.size_mib))
        port = free_port()
        binary = Path(sys.executable).with_name("kuberay-history-server")
        env = {**os.environ, "LOCAL_STORAGE_DIR": str(root)}
        cmd = [str(binary), "--listen", f"127.0.0.1:{port}", "--storage-backend", "local"]
        with (Path(tmp) / "server.log").open("wb") as log:
            popen = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            result = asyncio.run(measure(f"http://127.0.0.1:{port}", popen.pid))
        finally:
            popen.send_signal(signal.SIGTERM)
            popen.wait(timeout=30)
    result["log_mib"] = args.size_mib
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
