"""The test run's egress guard (tests/egress_guard.py) reads frames right: which DNS
questions fail the run, which are a registry's, which TCP connections were opened. Frames
are built here; nothing is sent."""

from __future__ import annotations

import socket
import struct

from tests.egress_guard import (
    Egress,
    default_route_interfaces,
    made_up,
    parse_frame,
    question_name,
)


def dns_query(name: str) -> bytes:
    header = struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split(".") if p)
    return header + labels + b"\x00" + struct.pack("!HH", 12, 1)


def ipv4_frame(proto: int, dst: str, l4: bytes) -> bytes:
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 0, 0, 64, proto, 0,
                     socket.inet_aton("192.0.2.2"), socket.inet_aton(dst))  # fmt: skip
    return b"\x00" * 12 + b"\x08\x00" + ip + l4


def ipv6_frame(proto: int, dst: str, l4: bytes) -> bytes:
    ip = struct.pack("!IHBB16s16s", 6 << 28, len(l4), proto, 64,
                     socket.inet_pton(socket.AF_INET6, "fd00::2"),
                     socket.inet_pton(socket.AF_INET6, dst))  # fmt: skip
    return b"\x00" * 12 + b"\x86\xdd" + ip + l4


def udp(dport: int, payload: bytes) -> bytes:
    return struct.pack("!HHHH", 40000, dport, 8 + len(payload), 0) + payload


def tcp(dport: int, flags: int) -> bytes:
    return struct.pack("!HHIIBBHHH", 40000, dport, 1, 0, 5 << 4, flags, 65535, 0, 0)


def test_a_reverse_lookup_of_the_bridge_fails_the_run() -> None:
    frame = ipv4_frame(17, "10.255.255.53", udp(53, dns_query("1.0.250.10.in-addr.arpa")))
    egress = parse_frame(frame)
    assert egress == Egress("dns", "1.0.250.10.in-addr.arpa")
    assert made_up(egress)


def test_cluster_and_reserved_names_fail_registry_names_do_not() -> None:
    for name in ("rc-head-svc.ns.svc.cluster.local", "kuberay-head", "x.invalid", "a.svc"):
        assert made_up(Egress("dns", name)), name
    for name in ("pypi.org", "files.pythonhosted.org", "proxy.golang.org"):
        assert not made_up(Egress("dns", name)), name
    assert not made_up(Egress("tcp", "203.0.113.80:443"))


def test_tcp_connections_opened_are_seen_answers_are_not() -> None:
    assert parse_frame(ipv4_frame(6, "203.0.113.80", tcp(443, 0x02))) == Egress(
        "tcp", "203.0.113.80:443"
    )
    assert parse_frame(ipv4_frame(6, "203.0.113.80", tcp(443, 0x12))) is None  # SYN+ACK
    assert parse_frame(ipv4_frame(6, "203.0.113.80", tcp(443, 0x10))) is None  # data
    assert parse_frame(ipv6_frame(6, "2001:db8::1", tcp(80, 0x02))) == Egress(
        "tcp", "[2001:db8::1]:80"
    )


def test_ipv6_dns_and_other_udp() -> None:
    query = udp(53, dns_query("registry.npmjs.org"))
    assert parse_frame(ipv6_frame(17, "fd00::53", query)) == Egress("dns", "registry.npmjs.org")
    assert parse_frame(ipv4_frame(17, "192.0.2.1", udp(123, b"ntp"))) is None
    assert parse_frame(b"\x00" * 10) is None


def test_unreadable_questions_are_named_as_such() -> None:
    assert question_name(dns_query("a.b")[:14]) is None
    pointer = struct.pack("!HHHHHH", 1, 0, 1, 0, 0, 0) + b"\xc0\x0c"
    egress = parse_frame(ipv4_frame(17, "10.0.0.53", udp(53, pointer)))
    assert egress is not None and egress.what.startswith("(unreadable")
    assert not made_up(egress)  # listed in the summary, not judged


def test_default_route_interfaces_from_proc() -> None:
    route = (
        "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n"
        "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\n"
        "eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\n"
        "kuberay0\t0000FA0A\t00000000\t0001\t0\t0\t0\t00FFFFFF\n"
    )
    zero = "0" * 32
    ipv6 = (
        f"{zero} 00 {zero} 00 fd000000000000000000000000000001 00000400 3 0 3     eth1\n"
        f"{zero} 00 {zero} 00 {zero} ffffffff 1 0 00200200       lo\n"
        f"fd000000000000000000000000000000 40 {zero} 00 {zero} 00000100 1 0 1     eth0\n"
    )
    assert default_route_interfaces(route, ipv6) == ["eth0", "eth1"]
    assert default_route_interfaces(route.splitlines()[0]) == []
