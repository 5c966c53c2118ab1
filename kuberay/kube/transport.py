"""The HTTP transport of :class:`kuberay.kube.Client`: one apiserver, plain dicts.

Why not kubernetes-asyncio's generated APIs: they build model objects for every
response (10-20x the cost of parsing JSON) and their watch re-serialises every
event. The client reads its connection settings with :mod:`kuberay.kube.kubeconfig`
(a :class:`~kuberay.kube.restconfig.RestConfig`) and talks
HTTP/1.1 itself (:mod:`kuberay.http`; aiohttp's client would cost an idle operator
about 9 MiB), decoding bodies once with orjson. An aiohttp session on the same TLS
settings (:attr:`Transport.session`) is made on first use for what needs more than
requests and watches (``kubectl ray``'s log streams and port-forwards). This module
holds the connections, authentication headers, throttling, retries, counting, the write guard and
discovery; :mod:`kuberay.kube.client` adds the verbs on top.

Contracts:

* Every request but a watch waits for the client-side token bucket
  (``qps``/``burst``); client-go does not rate-limit watches either. Every attempt
  is counted in ``rest_client_requests_total{code,method,host}`` and in
  :attr:`Client.stats` (by verb, for tests and benchmarks); the other
  ``rest_client_*`` series KubeRay exports (request and rate-limiter duration,
  request/response size, retries, DNS resolution) are recorded where client-go
  records them (see :mod:`kuberay.kube.metrics`).
* Non-2xx answers raise the typed errors of :mod:`kuberay.kube.errors`; transport
  failures raise :class:`~kuberay.kube.errors.TransportError`.
* Ordinary requests have a total timeout (``request_timeout``, 30 s default) per
  attempt. A list page has no total (a big page may take long to transfer) but
  the same bound on connecting and on each wait for data, so a stalled list
  fails and a large one does not.
* Watches ask for bookmarks and a server-side ``timeoutSeconds`` and are bounded
  end to end: connect plus response headers within ``request_timeout``, then
  each line (event or bookmark) within ``inactivity_timeout`` -- by default the
  watch's own ``timeoutSeconds`` plus a grace period, because the apiserver
  sends no bookmarks for a resource that has had no event since it started, and
  a quiet watch is healthy. A dead peer is found sooner by TCP keepalive, set as
  Go's dialer sets it (probes after 15 s idle, every 15 s, 9 of them), on every
  connection. So neither a server that never answers nor a half-open connection
  can stall a cache forever, and an idle operator re-opens each watch only when
  the server ends it (every 5-10 minutes with the reflector's timeouts).
* Like client-go, an answer of 429 or 5xx that carries ``Retry-After`` is
  retried after that many seconds (capped at ``max_retry_wait``), up to
  ``max_retries`` times; each attempt takes a rate-limiter token and is counted.
* A write guard (:meth:`Client.set_write_guard`) is asked before every mutating
  request; when it says no, :class:`~kuberay.kube.errors.WriteRefused` is raised
  and nothing is sent (a process that lost its leader lease writes nothing).
* ``metadata_only`` gets, lists, watches and patches ask for ``PartialObjectMetadata``
  (no spec, data or status on the wire, e.g. no Secret's keys); the objects they return
  are labelled with the requested ``apiVersion``/``kind``.
"""

from __future__ import annotations

import asyncio
import builtins
import collections
import copy
import ssl
import time
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

import orjson
import structlog

from kuberay import http
from kuberay.kube.errors import (
    ApiError,
    NotFound,
    RequestRefused,
    TransportError,
    WriteRefused,
    error_from_response,
)
from kuberay.kube.metrics import (
    REST_CLIENT_RATE_LIMITER_DURATION,
    REST_CLIENT_REQUEST_DURATION,
    REST_CLIENT_REQUEST_RETRIES,
    REST_CLIENT_REQUEST_SIZE,
    REST_CLIENT_REQUESTS,
    REST_CLIENT_REQUESTS_BY_VERB,
    REST_CLIENT_RESPONSE_SIZE,
)
from kuberay.kube.ratelimit import TokenBucket
from kuberay.kube.resources import BUILTIN_RESOURCES, ResourceInfo, api_path, split_api_version
from kuberay.kube.restconfig import authorization, ssl_context_of
from kuberay.kube.sockets import (
    TCP_KEEPALIVE,
    dns_trace_config,
    keepalive_socket,
    observe_dns,
)

if TYPE_CHECKING:
    import aiohttp

DEFAULT_QPS = 100.0
DEFAULT_BURST = 200
DEFAULT_REQUEST_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 10
DEFAULT_MAX_RETRY_WAIT = 30.0
ACCEPT_JSON = "application/json"
ACCEPT_METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
ACCEPT_METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

log = structlog.get_logger("kuberay.kube")


class RequestStats:
    """Counts of requests this client made, by verb and by (verb, HTTP code).

    Verbs are client-go's: get, list, watch, create, update, patch, delete.
    ``writes`` sums the mutating verbs; tests use it to prove a reconcile over an
    unchanged world writes nothing.
    """

    WRITE_VERBS = frozenset({"create", "update", "patch", "delete"})

    def __init__(self) -> None:
        self.by_verb: collections.Counter[str] = collections.Counter()
        self.by_code: collections.Counter[tuple[str, int]] = collections.Counter()

    def record(self, verb: str, code: int) -> None:
        """Count one request of ``verb`` that ended with ``code`` (0 = no answer)."""
        self.by_verb[verb] += 1
        self.by_code[(verb, code)] += 1

    @property
    def writes(self) -> int:
        """Number of mutating requests so far."""
        return sum(n for verb, n in self.by_verb.items() if verb in self.WRITE_VERBS)

    @property
    def total(self) -> int:
        """Number of requests so far."""
        return sum(self.by_verb.values())

    def snapshot(self) -> dict[str, int]:
        """A copy of the by-verb counts."""
        return dict(self.by_verb)


class Transport:
    """The HTTP side of :class:`~kuberay.kube.Client`: session, auth, throttling, retries,
    counting, write guard and discovery.

    ``configuration`` is a :class:`~kuberay.kube.restconfig.RestConfig` (or anything with
    its attributes, e.g. a kubernetes-asyncio ``Configuration``: host, TLS files,
    ``auth_settings()``). Close with :meth:`close` or ``async with``.
    """

    def __init__(
        self,
        configuration: Any,
        *,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        user_agent: str = "kuberay-operator",
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
    ) -> None:
        self.configuration = configuration
        self.host = str(configuration.host).rstrip("/")
        self._host_label = urllib.parse.urlsplit(self.host).netloc or self.host
        self.request_timeout = request_timeout
        self.user_agent = user_agent
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.throttle = TokenBucket(qps, burst)
        self.stats = RequestStats()
        self._session: aiohttp.ClientSession | None = None
        self._pool: http.ConnectionPool | None = None
        self._pool_generation = 0
        self._ssl_server_name: str | None = getattr(configuration, "tls_server_name", None)
        self._resources: dict[tuple[str, str], ResourceInfo] = dict(BUILTIN_RESOURCES)
        self._watches: set[http.Response] = set()
        # Watches aborted by close_watches(): their end is an error, not the server's
        # orderly end of the stream.
        self._aborted: set[http.Response] = set()
        # Set on views: the client whose session (connection pool) this one uses.
        self._parent: Transport | None = None
        self._write_guard: Callable[[], bool] | None = None

    def set_write_guard(self, guard: Callable[[], bool] | None) -> None:
        """Ask ``guard()`` before every create/update/patch/delete of this client
        (not of its views); False refuses the write with WriteRefused. None: no guard."""
        self._write_guard = guard

    def view(self, *, qps: float = 0.0, burst: int = 1, guarded: bool = False) -> Self:
        """A client on the same connection pool, discovery cache and request stats,
        with its *own* token bucket (``qps <= 0``: unthrottled).

        For traffic that must not queue behind the main client's rate limit, such
        as leader-election renewals or Events. With ``guarded`` the view asks this
        client's write guard (as it is when the view writes) before every write;
        otherwise it has none. Closing a view closes nothing; close the original
        client.
        """
        clone = copy.copy(self)
        clone.throttle = TokenBucket(qps, burst)
        clone._session = None
        clone._pool = None
        clone._parent = self._parent or self
        clone._write_guard = self._guard_of_parent if guarded else None
        return clone

    def detached(self, *, qps: float = 0.0, burst: int = 1) -> Self:
        """A client for the same apiserver with its *own* HTTP session (opened lazily
        in whichever event loop first uses it) and its own token bucket; request
        stats and discovery are shared.

        For work that runs on another thread's event loop, such as lease renewal
        off the main loop. Close it (with :meth:`close`) on that loop.
        """
        clone = type(self)(
            self.configuration,
            qps=qps,
            burst=burst,
            request_timeout=self.request_timeout,
            user_agent=self.user_agent,
            max_retries=self.max_retries,
            max_retry_wait=self.max_retry_wait,
        )
        clone.stats = self.stats
        clone._resources = self._resources
        clone._ssl_server_name = self._ssl_server_name
        return clone

    def _guard_of_parent(self) -> bool:
        guard = self._write_guard
        return guard is None or guard()

    def _ssl_context(self) -> ssl.SSLContext:
        return ssl_context_of(self.configuration)

    def _tls_generation(self) -> int:
        generation = getattr(self.configuration, "tls_generation", 0)
        return generation if isinstance(generation, int) else 0

    def _proxy(self) -> str | None:
        # A configuration may name an HTTP proxy (the kubectl plugin's proxy-url).
        proxy = getattr(self.configuration, "proxy", None)
        return proxy if isinstance(proxy, str) and proxy else None

    @property
    def pool(self) -> http.ConnectionPool:
        """The keep-alive connections requests and watches use (shared with views)."""
        if self._parent is not None:
            return self._parent.pool
        generation = self._tls_generation()
        if self._pool is not None and generation != self._pool_generation:
            # An exec plugin rotated the client certificate: new connections present the
            # new one; requests in flight finish on theirs, idle ones time out.
            log.info("client certificate rotated; opening new connections", host=self.host)
            self._pool = None
        if self._pool is None:
            self._pool_generation = generation
            self._pool = http.ConnectionPool(
                self.host,
                ssl_context=self._ssl_context() if self.host.startswith("https:") else None,
                server_hostname=self._ssl_server_name,
                proxy=self._proxy(),
                socket_factory=keepalive_socket,
                on_dns=observe_dns,
                user_agent=self.user_agent,
            )
        return self._pool

    def _make_session(self) -> aiohttp.ClientSession:
        import aiohttp

        connector = aiohttp.TCPConnector(
            limit=0, ssl=self._ssl_context(), socket_factory=keepalive_socket
        )
        return aiohttp.ClientSession(
            connector=connector,
            proxy=self._proxy(),
            read_bufsize=2**21,
            headers={"User-Agent": self.user_agent},
            json_serialize=lambda o: orjson.dumps(o).decode(),
            trace_configs=[dns_trace_config()],
        )

    @property
    def session(self) -> aiohttp.ClientSession:
        """An aiohttp session with this client's TLS settings and proxy (made, and aiohttp
        imported, on first use inside the running loop), for websockets and streams;
        requests and watches go through :attr:`pool`."""
        if self._parent is not None:
            return self._parent.session
        if self._session is None or self._session.closed:
            self._session = self._make_session()
        return self._session

    @property
    def open_watches(self) -> int:
        """How many watch streams are open right now."""
        return len(self._watches)

    def close_watches(self) -> int:
        """Abort every open watch stream; returns how many. Their iterators raise
        TransportError (reflectors then re-watch from their last resourceVersion).
        Used on shutdown, and by tests to simulate a dropped connection."""
        watches = list(self._watches)
        for resp in watches:
            self._aborted.add(resp)
            resp.close()
        return len(watches)

    async def close(self) -> None:
        """Abort watches and close the connections (a later request opens new ones).

        A no-op on a :meth:`view`."""
        if self._parent is not None:
            return
        self.close_watches()
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ----- transport ----------------------------------------------------
    async def _headers(
        self, content_type: str | None, accept: str = ACCEPT_JSON
    ) -> builtins.list[tuple[str, str]]:
        headers = [("Accept", accept)]
        if content_type:
            headers.append(("Content-Type", content_type))
        # Fixed headers of the configuration (impersonation, basic auth; a name may repeat).
        headers.extend(getattr(self.configuration, "extra_headers", None) or ())
        value = await authorization(self.configuration)
        if value:  # replaces an Authorization header of the configuration
            headers = [h for h in headers if h[0].lower() != "authorization"]
            headers.append(("Authorization", value))
        return headers

    def _rejected(self, code: int) -> None:
        """After a 401, have a credential plugin run again for the next request (client-go
        does not resend the rejected request either)."""
        if code == 401:
            hook = getattr(self.configuration, "unauthorized", None)
            if callable(hook):
                hook()

    async def request(
        self,
        method: str,
        path: str,
        *,
        verb: str,
        params: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = "application/json",
        timeout: float | None = None,
        accept: str = ACCEPT_JSON,
    ) -> Any:
        """Send one request and return the decoded JSON answer (raises on non-2xx).

        A 429 or 5xx answer with ``Retry-After`` is retried (see the module doc).
        For ``verb="list"`` the timeout bounds connecting and each wait for data,
        not the whole transfer.
        """
        data: bytes | None = None
        if body is not None:
            data = body if isinstance(body, bytes) else orjson.dumps(body)
        seconds = timeout or self.request_timeout
        retries = 0
        started = time.monotonic()
        # Body size of each answer; client-go observes the final one (non-empty or 2xx).
        sizes: list[int] = []
        try:
            while True:
                try:
                    result = await self._request_once(
                        method,
                        path,
                        verb,
                        params,
                        data,
                        content_type,
                        accept,
                        seconds,
                        sizes,
                        retry=retries > 0,
                    )
                    self._observe_response_size(method, sizes[-1])
                    return result
                except ApiError as exc:
                    wait = self._retry_wait(exc)
                    if wait is None or retries >= self.max_retries:
                        if sizes and sizes[-1]:
                            self._observe_response_size(method, sizes[-1])
                        raise
                    retries += 1
                    log.info(
                        "apiserver asked to retry later",
                        method=method,
                        path=path,
                        code=exc.status,
                        retry_after=wait,
                        attempt=retries,
                    )
                    await asyncio.sleep(wait)
        finally:
            REST_CLIENT_REQUEST_DURATION.labels(verb=method, host=self._host_label).observe(
                time.monotonic() - started
            )

    def _check_write(self, method: str, path: str, verb: str) -> None:
        guard = self._write_guard
        if guard is not None and verb in RequestStats.WRITE_VERBS and not guard():
            raise WriteRefused(f"{method} {path}: refused by the write guard")

    def _retry_wait(self, exc: ApiError) -> float | None:
        """Seconds to wait before retrying ``exc`` (client-go ``checkWait``), or None."""
        if exc.retry_after is None or not (exc.status == 429 or exc.status >= 500):
            return None
        return min(max(exc.retry_after, 0.0), self.max_retry_wait)

    async def _request_once(
        self,
        method: str,
        path: str,
        verb: str,
        params: dict[str, Any] | None,
        data: bytes | None,
        content_type: str | None,
        accept: str,
        seconds: float,
        sizes: builtins.list[int],
        *,
        retry: bool = False,
    ) -> Any:
        self._check_write(method, path, verb)
        waited = time.monotonic()
        await self.throttle.acquire()
        REST_CLIENT_RATE_LIMITER_DURATION.labels(verb=method, host=self._host_label).observe(
            time.monotonic() - waited
        )
        self._check_write(method, path, verb)  # the wait for a token may be long
        headers = await self._headers(content_type if data is not None else None, accept)
        REST_CLIENT_REQUEST_SIZE.labels(verb=method, host=self._host_label).observe(
            len(data) if data is not None else 0
        )
        code = 0
        try:
            # A list has no total limit: its connection and each wait for data have one.
            deadline = asyncio.get_running_loop().time() + seconds
            async with asyncio.timeout_at(deadline):
                resp = await self.pool.request(
                    method, path, params=clean_params(params), headers=headers, body=data
                )
            async with resp, asyncio.timeout_at(None if verb == "list" else deadline):
                code = resp.status
                if verb == "list":
                    resp.read_timeout = seconds
                raw = await resp.read()
                sizes.append(len(raw))
                if code >= 400:
                    self._rejected(code)
                    raise error_from_response(code, raw, resp.headers.as_dict())
                return orjson.loads(raw) if raw else None
        except http.InvalidRequest as exc:
            raise RequestRefused(f"{method}: {exc}") from exc
        except (TimeoutError, http.HTTPClientError, OSError) as exc:
            raise TransportError(f"{method} {path}: {exc!r}") from exc
        finally:
            self._count(method, verb, code)
            if retry:
                REST_CLIENT_REQUEST_RETRIES.labels(
                    code=str(code) if code else "<error>", verb=method, host=self._host_label
                ).inc()

    def _observe_response_size(self, method: str, size: int) -> None:
        REST_CLIENT_RESPONSE_SIZE.labels(verb=method, host=self._host_label).observe(size)

    def _count(self, method: str, verb: str, code: int) -> None:
        REST_CLIENT_REQUESTS.labels(
            code=str(code) if code else "<error>", method=method, host=self._host_label
        ).inc()
        REST_CLIENT_REQUESTS_BY_VERB.labels(verb=verb, code=str(code) if code else "<error>").inc()
        self.stats.record(verb, code)

    # ----- discovery ----------------------------------------------------
    async def resource(self, api_version: str, kind: str) -> ResourceInfo:
        """Where ``kind`` of ``api_version`` is served; raises NotFound if nowhere."""
        key = (api_version, kind)
        found = self._resources.get(key)
        if found is not None:
            return found
        group, version = split_api_version(api_version)
        await self._discover(group, version)
        found = self._resources.get(key)
        if found is None:
            raise NotFound(
                404, "NotFound", f"the server has no resource for kind {kind} in {api_version}"
            )
        return found

    async def _discover(self, group: str, version: str) -> None:
        doc = await self.request("GET", api_path(group, version), verb="get")
        for res in doc.get("resources", []):
            if "/" in res["name"]:
                continue
            info = ResourceInfo(group, version, res["kind"], res["name"], bool(res["namespaced"]))
            self._resources[(info.api_version, info.kind)] = info

    async def _info(
        self, obj_or_api_version: dict[str, Any] | str, kind: str | None = None
    ) -> ResourceInfo:
        if isinstance(obj_or_api_version, dict):
            return await self.resource(obj_or_api_version["apiVersion"], obj_or_api_version["kind"])
        assert kind is not None
        return await self.resource(obj_or_api_version, kind)


def clean_params(params: dict[str, Any] | None) -> dict[str, str]:
    if not params:
        return {}
    return {k: str(v) for k, v in params.items() if v is not None and v != ""}


__all__ = [
    "ACCEPT_JSON",
    "ACCEPT_METADATA",
    "ACCEPT_METADATA_LIST",
    "DEFAULT_BURST",
    "DEFAULT_QPS",
    "DEFAULT_REQUEST_TIMEOUT",
    "TCP_KEEPALIVE",
    "RequestStats",
    "Transport",
    "clean_params",
    "dns_trace_config",
    "keepalive_socket",
]
