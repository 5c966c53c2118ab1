#!/usr/bin/env python3
"""Probe-server benchmark: the server's memory while peers hold open GETs announcing a
300 MiB body.

    python hack/benchmarks/bench_probe_body.py [--connections 4] [--send-mib 32] [--hold 10]
    PYTHONPATH=/other/checkout python hack/benchmarks/bench_probe_body.py   # another version

Starts :mod:`kuberay.reconcile.httpserver`'s server with one passing healthz check in a
subprocess of this interpreter (``python -P -c``: the ``kuberay`` it imports is the first on
``$PYTHONPATH``, else this checkout's), then opens ``--connections`` connections that each
send a ``GET /healthz`` head announcing ``--announce-mib`` of body and push ``--send-mib``
of it at ``--rate-mib`` MiB/s, and hold them open ``--hold`` seconds. Printed (JSON, also
to ``--out``): the server's VmRSS before, at most during and at the end of the hold; the
answers the peers got; how many found their connection closed before their body was sent;
whether ``/healthz`` answered on a fresh connection during the hold.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MIB = 1024 * 1024

#: The server process: prints its port, then serves until killed.
SERVER = """
import asyncio
if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from kuberay.reconcile.httpserver import ProbeChecks, Server, probes_app

async def main():
    healthz = ProbeChecks()
    healthz.add("ping", lambda: None)
    server = Server(probes_app(healthz, ProbeChecks()), "127.0.0.1", 0)
    await server.start()
    print(server.port, flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


def rss_mib(pid: int) -> float:
    """The process's resident memory (VmRSS) in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


async def healthz(port: int) -> str:
    """The status line of ``GET /healthz`` on a fresh connection (or what went wrong)."""
    try:
        async with asyncio.timeout(5):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            line = (await reader.readline()).decode().strip()
            writer.close()
            return line or "closed"
    except (OSError, TimeoutError) as exc:
        return type(exc).__name__


class Peer:
    """One connection announcing ``announce`` body bytes and pushing ``send`` of them."""

    def __init__(self, port: int, announce: int, send: int, rate: float) -> None:
        self.port, self.announce, self.send, self.rate = port, announce, send, rate
        self.answer = b""
        self.sent = 0
        self.closed_early = False
        self.writer: asyncio.StreamWriter | None = None

    async def run(self) -> None:
        """Send the head, then the body slowly; collect whatever the server answers."""
        reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = f"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: {self.announce}\r\n\r\n"
        self.writer.write(head.encode())
        collect = asyncio.create_task(self._collect(reader))
        chunk = b"x" * 65536
        start = time.monotonic()
        try:
            while self.sent < self.send:
                self.writer.write(chunk)
                await self.writer.drain()
                self.sent += len(chunk)
                ahead = self.sent / (self.rate * MIB) - (time.monotonic() - start)
                if ahead > 0:
                    await asyncio.sleep(ahead)
        except ConnectionError:
            self.closed_early = True
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(collect), 0.5)

    async def _collect(self, reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(ConnectionError):
            while chunk := await reader.read(65536):
                self.answer += chunk

    def status(self) -> str:
        """The answer's status code, or ``none``."""
        return self.answer.split(b" ")[1].decode() if self.answer else "none"


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Run the server, the peers and the sampling; the report."""
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", str(ROOT))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-P", "-c", SERVER, env=env, stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        port = int(await asyncio.wait_for(proc.stdout.readline(), 30))
        await healthz(port)  # warm: the first answer's imports and buffers
        await asyncio.sleep(0.5)
        before = rss_mib(proc.pid)
        peers = [
            Peer(port, args.announce_mib * MIB, args.send_mib * MIB, args.rate_mib)
            for _ in range(args.connections)
        ]
        sending = asyncio.gather(*(p.run() for p in peers))
        peak, deadline = before, None
        while deadline is None or time.monotonic() < deadline:
            peak = max(peak, rss_mib(proc.pid))
            if deadline is None and sending.done():
                deadline = time.monotonic() + args.hold
            await asyncio.sleep(0.1)
        await sending
        during = await healthz(port)
        end = rss_mib(proc.pid)
        for p in peers:
            if p.writer is not None:
                p.writer.close()
        statuses: dict[str, int] = {}
        for p in peers:
            statuses[p.status()] = statuses.get(p.status(), 0) + 1
        server = Path(env["PYTHONPATH"].split(os.pathsep)[0])
        return {
            "server_pythonpath": str(server),
            "server_commit": _commit(server),
            "connections": args.connections,
            "announced_mib_per_connection": args.announce_mib,
            "pushed_mib_per_connection": args.send_mib,
            "rate_mib_per_s": args.rate_mib,
            "hold_seconds": args.hold,
            "rss_mib_before": round(before, 1),
            "rss_mib_peak_during": round(peak, 1),
            "rss_mib_end_of_hold": round(end, 1),
            "answers_by_status": statuses,
            "closed_before_body_sent": sum(p.closed_early for p in peers),
            "mib_taken_by_the_kernel_per_connection": [round(p.sent / MIB, 2) for p in peers],
            "healthz_during_hold": during,
        }
    finally:
        proc.kill()
        await proc.wait()


def _commit(path: Path) -> str:
    """The checkout's HEAD (short), or ``unknown``."""
    out = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() or "unknown"


def main() -> None:
    """Parse the flags, measure, print (and write) the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--announce-mib", type=int, default=300)
    parser.add_argument("--send-mib", type=int, default=32)
    parser.add_argument("--rate-mib", type=float, default=16.0, help="MiB/s per connection")
    parser.add_argument("--hold", type=float, default=10.0, help="seconds held after sending")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    report = asyncio.run(measure(args))
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
