"""The sockets processes listen on, read from ``/proc`` (what ``ss -ltnup`` shows).

:func:`listening_sockets` maps each given process (and its descendants) to the TCP sockets
in state LISTEN and the unconnected UDP sockets it holds, read from the process's own
network namespace (``/proc/<pid>/net/{tcp,tcp6,udp,udp6}``) and matched to it by socket
inode (``/proc/<pid>/fd``). :func:`wildcard` tells whether an address is ``0.0.0.0`` /
``::`` (every interface)."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable
from pathlib import Path

import attrs

_TCP_LISTEN = "0A"
_UDP_UNCONNECTED = "07"


@attrs.frozen
class Listener:
    """One listening socket: which process, protocol, local address and port."""

    pid: int
    process: str
    proto: str
    address: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.process}[{self.pid}] {self.proto} {host}:{self.port}"


def wildcard(address: str) -> bool:
    """``0.0.0.0`` or ``::`` (also ``::ffff:0.0.0.0``): bound to every interface."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_unspecified


def _decode(hex_address: str) -> tuple[str, int]:
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    # /proc prints the address as 32-bit words in host byte order (little-endian here)
    swapped = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(swapped)), int(port, 16)


def _children(pid: int) -> list[int]:
    out: list[int] = []
    with_tasks = Path(f"/proc/{pid}/task")
    try:
        tasks = list(with_tasks.iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def _tree(pids: Iterable[int]) -> set[int]:
    seen: set[int] = set()
    todo = list(pids)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        todo += _children(pid)
    return seen


def _socket_inodes(pid: int) -> set[str]:
    inodes: set[str] = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def listening_sockets(pids: Iterable[int]) -> list[Listener]:
    """Listening TCP and unconnected UDP sockets of ``pids`` and their descendants."""
    found: list[Listener] = []
    for pid in sorted(_tree(pids)):
        inodes = _socket_inodes(pid)
        if not inodes:
            continue
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        for proto, state in (
            ("tcp", _TCP_LISTEN),
            ("tcp6", _TCP_LISTEN),
            ("udp", _UDP_UNCONNECTED),
            ("udp6", _UDP_UNCONNECTED),
        ):
            try:
                lines = Path(f"/proc/{pid}/net/{proto}").read_text().splitlines()[1:]
            except OSError:
                continue
            for line in lines:
                fields = line.split()
                if fields[3] != state or fields[9] not in inodes:
                    continue
                address, port = _decode(fields[1])
                found.append(Listener(pid, name, proto, address, port))
    return found
