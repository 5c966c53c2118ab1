"""Watch what leaves the machine while the tests run; fail the run on a lookup of our own.

Rule: no packet leaves this machine. Tests dial loopback and the network namespaces the
project makes (the real node's bridge), never anything else; the only traffic out is the
package registries' (an image rebuilt in a test installs from PyPI, a background build
fetches Go modules). On this machine the resolver is off the machine, so a DNS query for a
name the tests invent, or a reverse lookup of one of our addresses, is a packet out.

While the session runs, a thread reads the frames the machine *sends* on its default-route
interfaces (``AF_PACKET`` with a kernel filter that passes outgoing frames only; root or
``CAP_NET_RAW`` needed, else the guard says so and watches nothing). It keeps the DNS
questions and the TCP connections opened, each with the test running at that moment.
The terminal summary lists them; the run fails when a question is one the tests made up:
a reverse lookup (``in-addr.arpa``, ``ip6.arpa``), a single-label name, or a name under a
cluster or reserved domain (``.local``, ``.svc``, ``.cluster``, ``.internal``,
``.invalid``, ``.test``, ``.example``, ``.localhost``). Registry names are listed only.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

#: Reserved and cluster-internal suffixes: a query for one of them is ours, never a registry's.
OWN_SUFFIXES = (
    ".in-addr.arpa",
    ".ip6.arpa",
    ".local",
    ".svc",
    ".cluster",
    ".internal",
    ".invalid",
    ".test",
    ".example",
    ".localhost",
)
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
#: Classic BPF: accept the frame when its packet type is PACKET_OUTGOING, else drop it.
OUTGOING_ONLY = [
    (0x20, 0, 0, 0xFFFFF004),  # ld  [SKF_AD_OFF + SKF_AD_PKTTYPE]
    (0x15, 0, 1, PACKET_OUTGOING),  # jeq #4, accept, drop
    (0x06, 0, 0, 0x40000),  # ret #262144
    (0x06, 0, 0, 0),  # ret #0
]
SO_ATTACH_FILTER = 26


@dataclass(frozen=True)
class Egress:
    """One thing sent out: ``kind`` ``dns`` (``what`` the question's name) or ``tcp``
    (``what`` is ``address:port``)."""

    kind: str
    what: str


def question_name(dns: bytes) -> str | None:
    """The first question's name of a DNS message (``None`` if unreadable). Pure."""
    labels: list[str] = []
    offset = 12
    while offset < len(dns):
        size = dns[offset]
        if size == 0:
            return ".".join(labels)
        if size & 0xC0:  # a compression pointer cannot start a question's name
            return None
        labels.append(dns[offset + 1 : offset + 1 + size].decode("ascii", "replace"))
        offset += 1 + size
    return None


def parse_frame(frame: bytes) -> Egress | None:
    """What an outgoing Ethernet frame sends: a DNS question (UDP or TCP port 53 is not
    distinguished: UDP only), a TCP connection opened (SYN without ACK), else ``None``.
    Pure."""
    if len(frame) < 14:
        return None
    ethertype = struct.unpack_from("!H", frame, 12)[0]
    ip = frame[14:]
    if ethertype == 0x0800 and len(ip) >= 20:
        header = (ip[0] & 0x0F) * 4
        proto, dst = ip[9], socket.inet_ntop(socket.AF_INET, ip[16:20])
        l4 = ip[header:]
    elif ethertype == 0x86DD and len(ip) >= 40:
        proto, dst = ip[6], "[" + socket.inet_ntop(socket.AF_INET6, ip[24:40]) + "]"
        l4 = ip[40:]
    else:
        return None
    if proto == 17 and len(l4) >= 8 and struct.unpack_from("!H", l4, 2)[0] == 53:
        name = question_name(l4[8:])
        return Egress("dns", name if name is not None else f"(unreadable, to {dst})")
    if proto == 6 and len(l4) >= 14:
        flags = l4[13]
        if flags & 0x02 and not flags & 0x10:
            return Egress("tcp", f"{dst}:{struct.unpack_from('!H', l4, 2)[0]}")
    return None


def made_up(egress: Egress) -> bool:
    """A DNS question no registry explains: a reverse lookup, a single-label name, or a
    reserved or cluster-internal domain. Pure."""
    if egress.kind != "dns":
        return False
    name = egress.what.rstrip(".").lower()
    return "." not in name or name.endswith(OWN_SUFFIXES)


def default_route_interfaces(route_table: str, ipv6_routes: str = "") -> list[str]:
    """Interfaces that carry a default route, from ``/proc/net/route`` and
    ``/proc/net/ipv6_route`` texts. Pure."""
    names: list[str] = []
    for line in route_table.splitlines()[1:]:
        cols = line.split()
        if len(cols) > 1 and cols[1] == "00000000" and cols[0] not in names:
            names.append(cols[0])
    for line in ipv6_routes.splitlines():
        cols = line.split()
        default = len(cols) == 10 and cols[0] == "0" * 32 and cols[1] == "00"
        if default and cols[9] != "lo" and cols[9] not in names:
            names.append(cols[9])
    return names


@dataclass
class EgressWatch:
    """The watching thread and what it saw (see the module doc)."""

    seen: Counter[Egress] = field(default_factory=Counter)
    by_test: dict[Egress, str] = field(default_factory=dict)
    current: str = "(session start)"
    problem: str = ""
    _sockets: list[socket.socket] = field(default_factory=list)
    _threads: list[threading.Thread] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        """Open a socket per default-route interface and read them in a daemon thread."""
        try:
            routes = Path("/proc/net/route").read_text()
            ipv6 = Path("/proc/net/ipv6_route")
            routes6 = ipv6.read_text() if ipv6.exists() else ""
            for name in default_route_interfaces(routes, routes6):
                sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
                self._sockets.append(sock)
                _attach_filter(sock)
                sock.bind((name, 0))
                sock.settimeout(0.5)
        except OSError as exc:
            self.problem = f"not watching: {exc}"
            for sock in self._sockets:
                sock.close()
            self._sockets.clear()
            return
        if not self._sockets:
            self.problem = "not watching: no default route (nothing can leave)"
            return
        for sock in self._sockets:
            thread = threading.Thread(target=self._read, args=(sock,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _read(self, sock: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                frame, address = sock.recvfrom(65535)
            except TimeoutError:
                continue
            except OSError:
                return
            if address[2] != PACKET_OUTGOING:  # the kernel filter's rule, checked once more
                continue
            egress = parse_frame(frame)
            if egress is not None:
                self.seen[egress] += 1
                self.by_test.setdefault(egress, self.current)

    def stop(self) -> None:
        """End the threads (each within its 0.5 s read timeout) and close the sockets."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2.0)
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()

    @property
    def violations(self) -> list[Egress]:
        """The made-up DNS questions seen."""
        return [e for e in self.seen if made_up(e)]


def _attach_filter(sock: socket.socket) -> None:
    """Let the kernel pass only outgoing frames to ``sock`` (incoming traffic, e.g. a
    download, never wakes the thread)."""
    import ctypes

    program = ctypes.create_string_buffer(
        b"".join(struct.pack("HBBI", *op) for op in OUTGOING_ONLY)
    )
    fprog = struct.pack("HL", len(OUTGOING_ONLY), ctypes.addressof(program))
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)


WATCH = EgressWatch()


def pytest_sessionstart(session: pytest.Session) -> None:
    WATCH.start()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Any:
    WATCH.current = item.nodeid
    yield
    WATCH.current = "(between tests)"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    WATCH.stop()
    if WATCH.violations and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    write = terminalreporter.write_line
    terminalreporter.section("egress (what left the machine)")
    if WATCH.problem:
        write(WATCH.problem)
        return
    if not WATCH.seen:
        write("nothing")
    for egress, count in sorted(WATCH.seen.items(), key=lambda kv: (kv[0].kind, kv[0].what)):
        mark = "MADE UP (fails the run)" if made_up(egress) else "registry/other"
        write(f"{egress.kind} {egress.what} x{count} [{mark}] first in {WATCH.by_test[egress]}")
