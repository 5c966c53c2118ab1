"""A TCP forwarder: the real node's pods reach the loopback-only kube-apiserver through it.

kube-apiserver takes a single ``--bind-address``. The local cluster binds it to 127.0.0.1
(the host's clients, the kubelet and kube-proxy use that) and advertises the real node's
bridge address (``realnode.NODE_IP``) as the ``kubernetes`` Service's endpoint, so a pod's
``10.0.0.1:443`` is DNATed by kube-proxy to ``NODE_IP:<port>``. This process listens there,
on the bridge address only, and pipes each connection to ``127.0.0.1:<port>`` (TLS passes
through untouched: the serving certificate already names ``NODE_IP``). Nothing listens on a
wildcard address, so the API is never reachable from another machine.

A packet can be translated only once on its way in (kube-proxy's DNAT already is that
once), hence a process rather than a second iptables rule; and binding the apiserver to the
bridge address instead would need the bridge before the apiserver and every host client to
dial the bridge.

Usage: ``python hack/cluster/apiserver_forward.py --listen 10.250.0.1:6443 --to 127.0.0.1:6443``
(started and stopped by ``hack/cluster/realnode.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

CHUNK = 256 * 1024


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host, int(port)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until EOF, then half-close ``writer`` (the other direction may go on)."""
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


async def _forward(
    target: tuple[str, int], client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter
) -> None:
    try:
        server_r, server_w = await asyncio.open_connection(*target)
    except OSError:
        client_w.close()
        return
    try:
        await asyncio.gather(_pipe(client_r, server_w), _pipe(server_r, client_w))
    finally:
        for w in (client_w, server_w):
            w.close()
            with contextlib.suppress(ConnectionError, OSError):
                await w.wait_closed()


async def serve(listen: tuple[str, int], target: tuple[str, int]) -> None:
    """Forward every connection to ``listen`` to ``target`` until SIGTERM/SIGINT."""
    server = await asyncio.start_server(
        lambda r, w: _forward(target, r, w), listen[0], listen[1], reuse_address=True
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"forwarding {listen[0]}:{listen[1]} -> {target[0]}:{target[1]}", flush=True)
    async with server:
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", type=_address, required=True, help="HOST:PORT to listen on")
    parser.add_argument("--to", type=_address, required=True, help="HOST:PORT to connect to")
    args = parser.parse_args(argv)
    if args.listen[0] in ("", "0.0.0.0", "::"):
        parser.error("--listen must name one address, not a wildcard")
    asyncio.run(serve(args.listen, args.to))
    return 0


if __name__ == "__main__":
    sys.exit(main())
