"""Port-forwarding to a pod through the apiserver (websocket, ``v4.channel.k8s.io``).

Each accepted local TCP connection opens its own websocket to
``/api/v1/namespaces/<ns>/pods/<pod>/portforward?ports=<port>``: channel 0 carries
data, channel 1 errors; the first frame of each channel is the port number (uint16
little-endian), as kubelet's websocket port-forward protocol defines. Local
listeners are bound before anything else, so a port already in use is a clear
error at once, never a retry loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
from collections.abc import Awaitable, Callable

import aiohttp

from kuberay.kube import Client
from kuberay.kube.paths import segment
from kuberay.kubectl_ray.context import CLIError

PROTOCOL = "v4.channel.k8s.io"
DATA, ERROR = 0, 1


def bind_local(port: int, what: str, host: str = "127.0.0.1") -> socket.socket:
    """A listening socket on ``host:port``; CLIError naming the port when it is taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise CLIError(
                f"local port {port} ({what}) is already in use; stop what is using it "
                f"(e.g. `lsof -i :{port}`) or choose another local port"
            ) from exc
        raise CLIError(f"cannot listen on {host}:{port} ({what}): {exc.strerror}") from exc
    sock.listen(64)
    sock.setblocking(False)
    return sock


async def _pipe_ws(
    client: Client,
    namespace: str,
    pod: str,
    port: int,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    on_error: Callable[[str], None],
) -> None:
    url = (
        f"{client.host}/api/v1/namespaces/{segment('namespace', namespace)}"
        f"/pods/{segment('pod name', pod)}/portforward"
    )
    headers = await client._headers(None, "*/*")  # bearer token; any media type (a connect API)
    try:
        ws = await client.session.ws_connect(
            url.replace("https://", "wss://", 1).replace("http://", "ws://", 1),
            params={"ports": str(port)},
            protocols=(PROTOCOL,),
            headers=headers,
        )
    except aiohttp.WSServerHandshakeError as exc:
        on_error(f"port-forward to {pod}:{port} refused by the apiserver (HTTP {exc.status})")
        writer.close()
        return
    except aiohttp.ClientError as exc:
        on_error(f"port-forward to {pod}:{port} failed: {exc}")
        writer.close()
        return
    seen_port: set[int] = set()

    async def upstream() -> None:
        while data := await reader.read(65536):
            await ws.send_bytes(bytes([DATA]) + data)
        await ws.close()

    async def downstream() -> None:
        async for msg in ws:
            if msg.type != aiohttp.WSMsgType.BINARY or not msg.data:
                continue
            channel, payload = msg.data[0], msg.data[1:]
            if channel not in seen_port:  # the port header of this channel
                seen_port.add(channel)
                payload = payload[2:]
            if channel == DATA and payload:
                writer.write(payload)
                await writer.drain()
            elif channel == ERROR and payload:
                on_error(f"port-forward {pod}:{port}: {payload.decode(errors='replace')}")
        writer.close()

    tasks = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in tasks:
            t.cancel()
        await ws.close()
        with contextlib.suppress(Exception):
            writer.close()


async def serve_forward(
    client: Client,
    namespace: str,
    resolve_pod: Callable[[], Awaitable[str]],
    sock: socket.socket,
    remote_port: int,
    on_error: Callable[[str], None],
) -> asyncio.Server:
    """Serve ``sock``: every connection is forwarded to ``remote_port`` of the pod
    ``resolve_pod()`` names at that moment (a restarted head pod is followed)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            pod = await resolve_pod()
        except CLIError as exc:
            on_error(str(exc))
            writer.close()
            return
        await _pipe_ws(client, namespace, pod, remote_port, reader, writer, on_error)

    return await asyncio.start_server(handle, sock=sock)


__all__ = ["PROTOCOL", "bind_local", "serve_forward"]
