"""An async Kubernetes client that speaks plain dicts.

Why not kubernetes-asyncio's generated APIs: they build model objects for every
response (10-20x the cost of parsing JSON) and their watch re-serialises every
event. This client reads its connection settings with :mod:`kuberay.kube.kubeconfig`
(kubernetes-asyncio's loader only for exec plugins and auth-providers) and talks
HTTP itself with aiohttp, decoding bodies once with orjson.

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
import os
import socket
import ssl
import time
import types
import urllib.parse
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Literal, NamedTuple

import aiohttp
import orjson
import structlog
from multidict import CIMultiDict

from kuberay.kube.errors import (
    ApiError,
    NotFound,
    TransportError,
    WriteRefused,
    error_from_response,
    error_from_status,
)
from kuberay.kube.metrics import (
    REST_CLIENT_DNS_RESOLUTION_DURATION,
    REST_CLIENT_RATE_LIMITER_DURATION,
    REST_CLIENT_REQUEST_DURATION,
    REST_CLIENT_REQUEST_RETRIES,
    REST_CLIENT_REQUEST_SIZE,
    REST_CLIENT_REQUESTS,
    REST_CLIENT_REQUESTS_BY_VERB,
    REST_CLIENT_RESPONSE_SIZE,
)
from kuberay.kube.ratelimit import TokenBucket
from kuberay.kube.resources import BUILTIN_RESOURCES, ResourceInfo, split_api_version

#: Read buffer of each TLS connection. asyncio gives every one 256 KiB
#: (``asyncio.sslproto.SSLProtocol.max_size``), which a watch (one connection each: HTTP/1.1)
#: fills during its initial list and keeps: megabytes over an idle operator's watches.
#: Two TLS records' worth reads a large list in a few more calls and keeps 32 KiB.
TLS_READ_BUFFER = 32 * 1024


def _shrink_tls_read_buffers() -> None:
    """Cap asyncio's per-connection TLS read buffer at :data:`TLS_READ_BUFFER` (process-wide,
    for connections opened from now on)."""
    from asyncio import sslproto

    if getattr(sslproto.SSLProtocol, "max_size", 0) > TLS_READ_BUFFER:
        sslproto.SSLProtocol.max_size = TLS_READ_BUFFER


_shrink_tls_read_buffers()

PatchType = Literal["merge", "json", "strategic", "apply"]

_PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}

DEFAULT_QPS = 100.0
DEFAULT_BURST = 200
DEFAULT_REQUEST_TIMEOUT = 30.0
#: Watch inactivity bound when the watch has no ``timeoutSeconds``.
DEFAULT_INACTIVITY_TIMEOUT = 70.0
#: Seconds past its ``timeoutSeconds`` a silent watch is given before it is abandoned.
WATCH_TIMEOUT_GRACE = 30.0
#: TCP keepalive as Go's net.Dialer sets it by default (idle, interval, count).
TCP_KEEPALIVE = (15, 15, 9)
DEFAULT_MAX_RETRIES = 10
DEFAULT_MAX_RETRY_WAIT = 30.0

_ACCEPT_JSON = "application/json"
_ACCEPT_METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
_ACCEPT_METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

log = structlog.get_logger("kuberay.kube")


class WatchEvent(NamedTuple):
    """One watch event: ``type`` is ADDED, MODIFIED, DELETED or BOOKMARK."""

    type: str
    object: dict[str, Any]


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


class Client:
    """Dict-based async client for one apiserver. Create with a ``from_*`` constructor.

    ``configuration`` is a kubernetes-asyncio ``Configuration`` (host, TLS files,
    token with its refresh hook). Close with :meth:`close` or ``async with``.
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
        self._ssl_server_name: str | None = getattr(configuration, "tls_server_name", None)
        self._resources: dict[tuple[str, str], ResourceInfo] = dict(BUILTIN_RESOURCES)
        self._watches: set[aiohttp.ClientResponse] = set()
        # Watches aborted by close_watches(): their end is an error, not the server's
        # orderly end of the stream (after which aiohttp also reports them closed).
        self._aborted: set[aiohttp.ClientResponse] = set()
        # Set on views: the client whose session (connection pool) this one uses.
        self._parent: Client | None = None
        self._write_guard: Callable[[], bool] | None = None

    def set_write_guard(self, guard: Callable[[], bool] | None) -> None:
        """Ask ``guard()`` before every create/update/patch/delete of this client
        (not of its views); False refuses the write with WriteRefused. None: no guard."""
        self._write_guard = guard

    def view(self, *, qps: float = 0.0, burst: int = 1, guarded: bool = False) -> Client:
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
        clone._parent = self._parent or self
        clone._write_guard = self._guard_of_parent if guarded else None
        return clone

    def detached(self, *, qps: float = 0.0, burst: int = 1) -> Client:
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

    # ----- construction -------------------------------------------------
    @classmethod
    async def from_kubeconfig(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        context: str | None = None,
        **kwargs: Any,
    ) -> Client:
        """Client for a kubeconfig file (default: ``$KUBECONFIG`` or ``~/.kube/config``).

        Read by :mod:`kuberay.kube.kubeconfig`; users authenticated by an exec plugin
        or auth-provider fall back to kubernetes-asyncio's loader (which costs its
        import: tens of MiB)."""
        from kuberay.kube import kubeconfig

        paths = kubeconfig.kubeconfig_paths(path)
        try:
            return cls(kubeconfig.load_kubeconfig(paths, context), **kwargs)
        except kubeconfig.Unsupported:
            pass
        try:
            from kubernetes_asyncio import client as k8s_client
            from kubernetes_asyncio import config as k8s_config
        except ImportError as exc:  # the operator image leaves it out (in-cluster only)
            raise TransportError(
                f"{paths[0]}: its user authenticates with an exec plugin or an auth provider, "
                "which needs kubernetes-asyncio (pip install kubernetes-asyncio)"
            ) from exc

        configuration = k8s_client.Configuration()
        await k8s_config.load_kube_config(
            config_file=str(paths[0]) if path else None,
            context=context,
            client_configuration=configuration,
        )
        return cls(configuration, **kwargs)

    @classmethod
    def from_in_cluster(cls, **kwargs: Any) -> Client:
        """Client for the pod's service account (token re-read as it rotates)."""
        from kuberay.kube import kubeconfig

        return cls(kubeconfig.in_cluster(), **kwargs)

    @classmethod
    async def from_env(
        cls, kubeconfig: str | os.PathLike[str] | None = None, **kwargs: Any
    ) -> Client:
        """Use ``kubeconfig``, else ``$KUBECONFIG``, else in-cluster, else ``~/.kube/config``."""
        path = kubeconfig or os.environ.get("KUBECONFIG")
        if path:
            return await cls.from_kubeconfig(kubeconfig, **kwargs)
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            return cls.from_in_cluster(**kwargs)
        default = Path.home() / ".kube" / "config"
        if default.exists():
            return await cls.from_kubeconfig(default, **kwargs)
        raise TransportError(
            "no cluster configured: set KUBECONFIG, pass --kubeconfig, or run inside a pod"
        )

    def _make_session(self) -> aiohttp.ClientSession:
        cfg = self.configuration
        ctx = ssl.create_default_context(cafile=cfg.ssl_ca_cert)
        if cfg.cert_file:
            ctx.load_cert_chain(cfg.cert_file, keyfile=cfg.key_file)
        if not cfg.verify_ssl:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        connector = aiohttp.TCPConnector(limit=0, ssl=ctx, socket_factory=_keepalive_socket)
        # A configuration may name an HTTP(S) proxy (the kubectl plugin's proxy-url).
        proxy = getattr(cfg, "proxy", None)
        return aiohttp.ClientSession(
            connector=connector,
            proxy=proxy if isinstance(proxy, str) and proxy else None,
            read_bufsize=2**21,
            headers={"User-Agent": self.user_agent},
            json_serialize=lambda o: orjson.dumps(o).decode(),
            trace_configs=[_dns_trace_config()],
        )

    @property
    def session(self) -> aiohttp.ClientSession:
        """The shared aiohttp session (created lazily inside the running loop)."""
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
        """Abort watches and close the HTTP session (a later request opens a new one).

        A no-op on a :meth:`view`."""
        if self._parent is not None:
            return
        self.close_watches()
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ----- transport ----------------------------------------------------
    async def _headers(
        self, content_type: str | None, accept: str = _ACCEPT_JSON
    ) -> CIMultiDict[str]:
        headers: CIMultiDict[str] = CIMultiDict(Accept=accept)
        if content_type:
            headers["Content-Type"] = content_type
        # Fixed headers of the configuration (impersonation, basic auth; a name may repeat).
        for key, value in getattr(self.configuration, "extra_headers", None) or ():
            headers.add(key, value)
        auth = await self.configuration.auth_settings()
        bearer = auth.get("BearerToken")
        if bearer and bearer.get("value"):
            headers["Authorization"] = bearer["value"]
        return headers

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
        accept: str = _ACCEPT_JSON,
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
        if verb == "list":
            client_timeout = aiohttp.ClientTimeout(
                total=None, sock_connect=seconds, sock_read=seconds
            )
        else:
            client_timeout = aiohttp.ClientTimeout(total=seconds)
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
                        client_timeout,
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
        client_timeout: aiohttp.ClientTimeout,
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
            async with self.session.request(
                method,
                self.host + path,
                params=_clean_params(params),
                data=data,
                headers=headers,
                timeout=client_timeout,
                server_hostname=self._ssl_server_name,
            ) as resp:
                code = resp.status
                raw = await resp.read()
                sizes.append(len(raw))
                if code >= 400:
                    raise error_from_response(code, raw, dict(resp.headers))
                return orjson.loads(raw) if raw else None
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
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
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        doc = await self.request("GET", path, verb="get")
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

    # ----- reads ----------------------------------------------------------
    async def get(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        subresource: str | None = None,
        metadata_only: bool = False,
    ) -> dict[str, Any]:
        """One object, live from the apiserver (controllers read their cache instead).

        ``metadata_only`` asks for ``PartialObjectMetadata``: the answer holds only
        ``metadata`` (a Secret's data never leaves the apiserver) and is labelled with
        ``api_version``/``kind``; what a cache-less controller reads to learn owners,
        labels or a resourceVersion to patch against."""
        info = await self.resource(api_version, kind)
        result: dict[str, Any] = await self.request(
            "GET",
            info.path(namespace, name, subresource),
            verb="get",
            accept=_ACCEPT_METADATA if metadata_only else _ACCEPT_JSON,
        )
        if metadata_only:
            _label(result, api_version, kind)
        return result

    async def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        metadata_only: bool = False,
    ) -> dict[str, Any]:
        """One page of a list: the raw ``*List`` object (``items``, ``metadata.continue``).

        ``metadata_only`` asks for a ``PartialObjectMetadataList`` (items carry only
        ``metadata``)."""
        info = await self.resource(api_version, kind)
        params = {
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
            "limit": limit,
            "continue": continue_token,
            "resourceVersion": resource_version,
            "resourceVersionMatch": resource_version_match,
        }
        result: dict[str, Any] = await self.request(
            "GET",
            info.path(namespace),
            verb="list",
            params=params,
            accept=_ACCEPT_METADATA_LIST if metadata_only else _ACCEPT_JSON,
        )
        return result

    async def list_all(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = 500,
        resource_version: str | None = None,
        metadata_only: bool = False,
    ) -> tuple[builtins.list[dict[str, Any]], str]:
        """Every item across pages, and the list's resourceVersion.

        Each page is its own request with its own timeout (there is no total), as
        client-go's pager. Items get ``apiVersion``/``kind`` of the listed kind (also
        when ``metadata_only``, whose items the server labels PartialObjectMetadata).
        """
        items: builtins.list[dict[str, Any]] = []
        token: str | None = None
        while True:
            page = await self.list(
                api_version,
                kind,
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=page_size,
                continue_token=token,
                resource_version=resource_version if token is None else None,
                metadata_only=metadata_only,
            )
            for item in page.get("items") or []:
                if metadata_only:
                    _label(item, api_version, kind)
                else:
                    item.setdefault("apiVersion", api_version)
                    item.setdefault("kind", kind)
                items.append(item)
            meta = page.get("metadata") or {}
            token = meta.get("continue") or None
            if not token:
                return items, str(meta.get("resourceVersion") or "")

    async def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = 300,
        allow_bookmarks: bool = True,
        inactivity_timeout: float | None = None,
        metadata_only: bool = False,
    ) -> AsyncIterator[WatchEvent]:
        """Stream watch events until the server closes the watch.

        An ERROR event raises its typed error (``Gone`` for a compacted
        resourceVersion). Raises :class:`TransportError` when connecting plus
        receiving the response headers takes over ``request_timeout`` seconds, or
        when no event or bookmark arrives within ``inactivity_timeout`` seconds
        (default: ``timeout_seconds`` plus :data:`WATCH_TIMEOUT_GRACE`, or
        :data:`DEFAULT_INACTIVITY_TIMEOUT` without a ``timeout_seconds``).
        ``metadata_only`` streams ``PartialObjectMetadata`` objects, labelled with
        ``api_version``/``kind``.
        """
        if inactivity_timeout is None:
            inactivity_timeout = (
                timeout_seconds + WATCH_TIMEOUT_GRACE
                if timeout_seconds
                else DEFAULT_INACTIVITY_TIMEOUT
            )
        info = await self.resource(api_version, kind)
        params = {
            "watch": "true",
            "resourceVersion": resource_version,
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
            "timeoutSeconds": timeout_seconds,
            "allowWatchBookmarks": "true" if allow_bookmarks else None,
        }
        # Not rate limited, like client-go's Request.Watch: a watch is one long request.
        headers = await self._headers(None, _ACCEPT_METADATA if metadata_only else _ACCEPT_JSON)
        code = 0
        resp: aiohttp.ClientResponse | None = None
        try:
            try:
                async with asyncio.timeout(self.request_timeout):
                    resp = await self.session.get(
                        self.host + info.path(namespace),
                        params=_clean_params(params),
                        headers=headers,
                        timeout=aiohttp.ClientTimeout(total=None),
                        server_hostname=self._ssl_server_name,
                    )
            except TimeoutError as exc:
                raise TransportError(
                    f"watch {info.plural}: no response within {self.request_timeout:g}s"
                ) from exc
            code = resp.status
            self._count("GET", "watch", code)
            if code >= 400:
                raise error_from_response(code, await resp.read(), dict(resp.headers))
            self._watches.add(resp)
            while True:
                try:
                    async with asyncio.timeout(inactivity_timeout):
                        line = await resp.content.readline()
                except TimeoutError as exc:
                    raise TransportError(
                        f"watch {info.plural}: no event for {inactivity_timeout:.0f}s"
                    ) from exc
                if not line:
                    if resp in self._aborted:
                        raise TransportError(f"watch {info.plural}: connection closed")
                    return
                line = line.strip()
                if not line:
                    continue
                event = orjson.loads(line)
                etype = event.get("type")
                obj = event.get("object") or {}
                if etype == "ERROR":
                    raise error_from_status(obj)
                if metadata_only:
                    _label(obj, api_version, kind)
                yield WatchEvent(etype, obj)
        except (aiohttp.ClientError, OSError) as exc:
            raise TransportError(f"watch {info.plural}: {exc!r}") from exc
        finally:
            if code == 0:
                self._count("GET", "watch", 0)
            if resp is not None:
                self._watches.discard(resp)
                self._aborted.discard(resp)
                resp.release()

    # ----- writes ---------------------------------------------------------
    async def create(
        self, obj: dict[str, Any], *, field_manager: str | None = None
    ) -> dict[str, Any]:
        """Create ``obj`` (its apiVersion/kind/metadata.namespace say where)."""
        info = await self._info(obj)
        ns = (obj.get("metadata") or {}).get("namespace")
        result: dict[str, Any] = await self.request(
            "POST", info.path(ns), verb="create", body=obj, params={"fieldManager": field_manager}
        )
        return result

    async def update(
        self,
        obj: dict[str, Any],
        *,
        subresource: str | None = None,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        """Replace ``obj`` (PUT); fails with Conflict if its resourceVersion is stale."""
        info = await self._info(obj)
        meta = obj.get("metadata") or {}
        result: dict[str, Any] = await self.request(
            "PUT",
            info.path(meta.get("namespace"), meta["name"], subresource),
            verb="update",
            body=obj,
            params={"fieldManager": field_manager},
        )
        return result

    async def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Replace the status subresource of ``obj`` (optimistic concurrency applies)."""
        return await self.update(obj, subresource="status")

    async def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: PatchType = "merge",
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool | None = None,
        metadata_only: bool = False,
    ) -> dict[str, Any]:
        """Patch one object; ``patch_type`` picks merge, json, strategic or apply (SSA).

        Only ``patch`` travels to the apiserver. ``metadata_only`` asks for the answer
        as ``PartialObjectMetadata`` (labelled ``api_version``/``kind``), so a patch of
        a Secret's metadata brings none of its data back either."""
        info = await self.resource(api_version, kind)
        body = patch if isinstance(patch, bytes) else orjson.dumps(patch)
        params: dict[str, Any] = {"fieldManager": field_manager}
        if force is not None:
            params["force"] = "true" if force else "false"
        result: dict[str, Any] = await self.request(
            "PATCH",
            info.path(namespace, name, subresource),
            verb="patch",
            body=body,
            content_type=_PATCH_CONTENT_TYPES[patch_type],
            params=params,
            accept=_ACCEPT_METADATA if metadata_only else _ACCEPT_JSON,
        )
        if metadata_only:
            _label(result, api_version, kind)
        return result

    async def patch_status(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: PatchType = "merge",
    ) -> dict[str, Any]:
        """Patch the status subresource (only what we own)."""
        return await self.patch(
            api_version, kind, name, patch, namespace, patch_type=patch_type, subresource="status"
        )

    async def apply(
        self,
        obj: dict[str, Any],
        *,
        field_manager: str,
        force: bool = True,
        subresource: str | None = None,
    ) -> dict[str, Any]:
        """Server-side apply ``obj`` as ``field_manager`` (JSON is valid YAML)."""
        meta = obj.get("metadata") or {}
        return await self.patch(
            obj["apiVersion"],
            obj["kind"],
            meta["name"],
            obj,
            meta.get("namespace"),
            patch_type="apply",
            subresource=subresource,
            field_manager=field_manager,
            force=force,
        )

    async def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: Literal["Foreground", "Background", "Orphan"] | None = None,
        preconditions: dict[str, str] | None = None,
        grace_period_seconds: int | None = None,
    ) -> dict[str, Any] | None:
        """Delete one object; ``preconditions`` may pin ``uid`` / ``resourceVersion``."""
        info = await self.resource(api_version, kind)
        body: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if propagation_policy:
            body["propagationPolicy"] = propagation_policy
        if preconditions:
            body["preconditions"] = preconditions
        if grace_period_seconds is not None:
            body["gracePeriodSeconds"] = grace_period_seconds
        result: dict[str, Any] | None = await self.request(
            "DELETE", info.path(namespace, name), verb="delete", body=body
        )
        return result


def _keepalive_socket(addr_info: tuple[Any, ...]) -> socket.socket:
    """A client socket with TCP keepalive as Go's dialer enables it (see TCP_KEEPALIVE)."""
    family, type_, proto = addr_info[0], addr_info[1], addr_info[2]
    sock = socket.socket(family=family, type=type_, proto=proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    idle, interval, count = TCP_KEEPALIVE
    for name, value in (
        ("TCP_KEEPIDLE", idle),
        ("TCP_KEEPINTVL", interval),
        ("TCP_KEEPCNT", count),
    ):
        option = getattr(socket, name, None)
        if option is not None:
            sock.setsockopt(socket.IPPROTO_TCP, option, value)
    return sock


def _dns_trace_config() -> aiohttp.TraceConfig:
    """Times DNS lookups into ``rest_client_dns_resolution_duration_seconds{host}``."""

    async def start(
        _session: aiohttp.ClientSession,
        ctx: types.SimpleNamespace,
        _params: aiohttp.TraceDnsResolveHostStartParams,
    ) -> None:
        ctx.dns_started = time.monotonic()

    async def end(
        _session: aiohttp.ClientSession,
        ctx: types.SimpleNamespace,
        params: aiohttp.TraceDnsResolveHostEndParams,
    ) -> None:
        started = getattr(ctx, "dns_started", None)
        if started is not None:
            REST_CLIENT_DNS_RESOLUTION_DURATION.labels(host=params.host).observe(
                time.monotonic() - started
            )

    config = aiohttp.TraceConfig()
    config.on_dns_resolvehost_start.append(start)
    config.on_dns_resolvehost_end.append(end)
    return config


def _label(obj: dict[str, Any], api_version: str, kind: str) -> None:
    """Label a ``PartialObjectMetadata`` answer with the kind it was asked for."""
    obj["apiVersion"] = api_version
    obj["kind"] = kind


def _clean_params(params: dict[str, Any] | None) -> dict[str, str]:
    if not params:
        return {}
    return {k: str(v) for k, v in params.items() if v is not None and v != ""}


__all__ = ["ApiError", "Client", "PatchType", "RequestStats", "WatchEvent", "WriteRefused"]
