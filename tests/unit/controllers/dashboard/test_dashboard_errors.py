"""Classifying dashboard call failures (pure) and the one line that names each cause; plus
the client and the dial guard tagging their errors with it (loopback only)."""

from __future__ import annotations

import errno
import socket
import ssl
from collections.abc import AsyncIterator

import pytest

from kuberay.controllers.dashboard import (
    BadResponse,
    DashboardError,
    DashboardUnreachable,
    DialGuard,
    JobNotFound,
)
from kuberay.controllers.dashboard.client import DashboardClient, client_at
from kuberay.controllers.dashboard.errors import Cause, classify, describe
from kuberay.controllers.dashboard.guard import parse_networks
from kuberay.http import (
    ConnectError,
    ConnectionPool,
    OriginPools,
    ProtocolError,
    ServerDisconnected,
)
from kuberay.testing import FakeDashboard

HOST = "127.0.0.33"


def _chained(outer: BaseException, inner: BaseException) -> BaseException:
    outer.__cause__ = inner
    return outer


def _conn(os_error: OSError) -> ConnectError:
    error = ConnectError("10.0.0.5", 8265, os_error)
    error.__cause__ = os_error  # as the client raises it
    return error


@pytest.mark.parametrize(
    ("exc", "cause"),
    [
        (_conn(socket.gaierror(-2, "Name or service not known")), Cause.DNS),
        (_conn(socket.gaierror(-3, "Temporary failure")), Cause.DNS),
        (socket.gaierror(-2, "Name or service not known"), Cause.DNS),
        (_conn(ConnectionRefusedError(errno.ECONNREFUSED, "failed")), Cause.CONNECTION_REFUSED),
        (_conn(OSError(errno.ECONNREFUSED, "refused")), Cause.CONNECTION_REFUSED),
        (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), Cause.CONNECTION_REFUSED),
        (TimeoutError(), Cause.TIMEOUT),
        (_conn(OSError(errno.ETIMEDOUT, "timed out")), Cause.TIMEOUT),
        (_conn(ssl.SSLCertVerificationError("bad")), Cause.TLS),
        (_conn(ssl.SSLError(1, "wrong version number")), Cause.TLS),
        (
            _chained(ServerDisconnected("lost"), ssl.SSLError(1, "handshake failure")),
            Cause.TLS,
        ),
        (_conn(OSError(errno.EHOSTUNREACH, "No route to host")), Cause.UNREACHABLE),
        (ServerDisconnected("connection closed inside the body"), Cause.UNREACHABLE),
        (ProtocolError("bad chunk size"), Cause.UNREACHABLE),
        (ConnectionResetError(errno.ECONNRESET, "reset"), Cause.UNREACHABLE),
        (ValueError("bad URL"), Cause.OTHER),
    ],
    ids=lambda v: v.name if isinstance(v, Cause) else type(v).__name__,
)
def test_classify(exc: BaseException, cause: Cause) -> None:
    assert classify(exc) is cause


def test_classify_survives_a_cyclic_chain() -> None:
    a, b = OSError("a"), OSError("b")
    a.__context__, b.__context__ = b, a
    assert classify(a) is Cause.UNREACHABLE


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (
            DashboardUnreachable(
                "x", cause=Cause.NOT_ALLOWED, address="10.244.0.5:8265", detail="127.0.0.0/8"
            ),
            [
                "dashboard address 10.244.0.5:8265 refused: not in the allowed networks "
                "127.0.0.0/8 (set KUBERAY_DASHBOARD_ALLOWED_NETWORKS or run the operator in the "
                "cluster)"
            ],
        ),
        (
            DashboardUnreachable(
                "x", cause=Cause.DNS, address="rc-head-svc.ns.svc:8265", detail="Name not known"
            ),
            ["rc-head-svc.ns.svc:8265", "DNS lookup failed: Name not known"],
        ),
        (
            DashboardUnreachable("x", cause=Cause.CONNECTION_REFUSED, address="10.0.0.5:8265"),
            ["dashboard address 10.0.0.5:8265: connection refused"],
        ),
        (
            DashboardUnreachable("x", cause=Cause.TIMEOUT, address="10.0.0.5:8265", detail="2s"),
            ["dashboard address 10.0.0.5:8265: no answer within 2s"],
        ),
        (
            DashboardUnreachable(
                "x", cause=Cause.TLS, address="10.0.0.5:8265", detail="certificate verify failed"
            ),
            ["10.0.0.5:8265: TLS error: certificate verify failed"],
        ),
        (
            BadResponse("x", status=401, address="10.0.0.5:8265", detail="Unauthorized"),
            ["10.0.0.5:8265", "HTTP 401", "auth token Secret"],
        ),
        (
            BadResponse("x", status=403, address="10.0.0.5:8265"),
            ["HTTP 403", "auth token Secret"],
        ),
        (
            DashboardUnreachable(
                "x", cause=Cause.UNREACHABLE, address="10.0.0.5:8265", detail="No route to host"
            ),
            ["dashboard address 10.0.0.5:8265 unreachable: No route to host"],
        ),
    ],
    ids=lambda v: v.cause.name if isinstance(v, DashboardError) else "",
)
def test_describe_names_the_address_and_the_cause(error: Exception, words: list[str]) -> None:
    line = describe(error)
    assert "\n" not in line
    for word in words:
        assert word in line


def test_describe_falls_back_to_the_error_text() -> None:
    # no address (no ready endpoint, a missing Secret), an unexpected answer, a non-dashboard error
    no_endpoint = DashboardUnreachable("dashboard of RayCluster ns/rc: no ready endpoint")
    assert describe(no_endpoint) == "dashboard of RayCluster ns/rc: no ready endpoint"
    assert describe(BadResponse("GetJobInfo fail: 502\nboom", status=502, address="a:1")) == (
        "GetJobInfo fail: 502 boom"
    )
    assert describe(JobNotFound("j")) == "Job j does not exist on the cluster"
    assert describe(RuntimeError("x  y")) == "x y"


def test_bad_response_cause_follows_the_status() -> None:
    assert BadResponse("m", status=401).cause is Cause.AUTH
    assert BadResponse("m", status=403).cause is Cause.AUTH
    assert BadResponse("m", status=500).cause is Cause.OTHER
    assert Cause.NOT_ALLOWED.event_reason == "DashboardAddressNotAllowed"


def test_dial_guard_error_names_address_and_networks() -> None:
    guard = DialGuard(parse_networks(["127.0.0.0/8", "192.168.0.0/16"]))
    with pytest.raises(DashboardUnreachable) as err:
        guard.check("10.244.0.5", what="dashboard of RayCluster ns/rc", port=8265)
    e = err.value
    assert (e.cause, e.address, e.detail) == (
        Cause.NOT_ALLOWED,
        "10.244.0.5:8265",
        "127.0.0.0/8, 192.168.0.0/16",
    )
    assert "not dialling 10.244.0.5:8265" in str(e)
    assert describe(e).startswith(
        "dashboard address 10.244.0.5:8265 refused: not in the allowed networks 127.0.0.0/8, "
        "192.168.0.0/16"
    )
    with pytest.raises(DashboardUnreachable) as err:
        guard.check("fd00::5", what="w", port=8265)
    assert err.value.address == "[fd00::5]:8265"


# ----- the client tags its errors (loopback only) -----------------------------------------
@pytest.fixture
async def pools() -> AsyncIterator[OriginPools]:
    made = OriginPools()
    yield made
    await made.close()


async def test_client_refused_connection(pools: OriginPools) -> None:
    async with FakeDashboard(HOST, 0) as fd:
        url = fd.url
    with pytest.raises(DashboardUnreachable) as err:
        await client_at(pools, url).get_job_info("j")
    address = url.removeprefix("http://")
    assert (err.value.cause, err.value.address) == (Cause.CONNECTION_REFUSED, address)
    assert describe(err.value) == (
        f"dashboard address {address}: connection refused (is the Ray head running?)"
    )


async def test_client_timeout_and_auth(pools: OriginPools) -> None:
    async with FakeDashboard(HOST, 0) as fd:
        address = fd.url.removeprefix("http://")
        fd.hang = True
        with pytest.raises(DashboardUnreachable) as err:
            await client_at(pools, fd.url, timeout=0.2).get_job_info("j")
        assert describe(err.value) == f"dashboard address {address}: no answer within 0.2s"
        fd.hang = False
        fd.require_token = "secret"
        with pytest.raises(BadResponse) as bad:
            await client_at(pools, fd.url).get_job_info("j")
        assert (bad.value.cause, bad.value.status, bad.value.address) == (
            Cause.AUTH,
            401,
            address,
        )
        with pytest.raises(BadResponse) as bad:
            await client_at(pools, fd.url, auth_token="wrong").get_job_info("j")
        assert "HTTP 403" in describe(bad.value)


def test_client_address_is_the_authority_or_the_proxy_url() -> None:
    assert DashboardClient(ConnectionPool("http://10.0.0.5:8265")).address == "10.0.0.5:8265"
    assert DashboardClient(ConnectionPool("http://[fd00::5]:8265/")).address == "[fd00::5]:8265"
    apiserver = ConnectionPool("https://127.0.0.1:6443")
    path = "/api/v1/namespaces/ns/services/rc-head-svc:dashboard/proxy"
    assert DashboardClient(apiserver, path).address == "https://127.0.0.1:6443" + path
