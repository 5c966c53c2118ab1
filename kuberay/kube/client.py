"""An async Kubernetes client that speaks plain dicts: the verbs.

:class:`Client` is :class:`kuberay.kube.transport.Transport` (session, auth, throttling,
retries, counting, write guard, discovery; its module doc states those contracts) plus
the constructors from a kubeconfig or a pod's service account and the verbs: ``get``,
``list``, ``list_all``, ``watch``, ``create``, ``update``, ``patch``, ``apply``,
``delete``. It satisfies :class:`kuberay.kube.interfaces.ReadWriter`.

* Watches ask for bookmarks and a server-side ``timeoutSeconds`` and are bounded
  end to end: connect plus response headers within ``request_timeout``, then
  each line (event or bookmark) within ``inactivity_timeout`` -- by default the
  watch's own ``timeoutSeconds`` plus :data:`WATCH_TIMEOUT_GRACE`, because the
  apiserver sends no bookmarks for a resource that has had no event since it
  started, and a quiet watch is healthy. Watches are not rate limited.
* ``metadata_only`` gets, lists, watches and patches ask for ``PartialObjectMetadata``;
  the objects they return are labelled with the requested ``apiVersion``/``kind``.
"""

from __future__ import annotations

import asyncio
import builtins
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal, NamedTuple

import orjson

from kuberay import http
from kuberay.kube import objects as k8s
from kuberay.kube.errors import (
    RequestRefused,
    TransportError,
    error_from_response,
    error_from_status,
)
from kuberay.kube.interfaces import PatchType, ReadWriter
from kuberay.kube.transport import (
    ACCEPT_JSON,
    ACCEPT_METADATA,
    ACCEPT_METADATA_LIST,
    Transport,
    clean_params,
)

_PATCH_CONTENT_TYPES: dict[PatchType, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}

#: Watch inactivity bound when the watch has no ``timeoutSeconds``.
DEFAULT_INACTIVITY_TIMEOUT = 70.0
#: Seconds past its ``timeoutSeconds`` a silent watch is given before it is abandoned.
WATCH_TIMEOUT_GRACE = 30.0


class WatchEvent(NamedTuple):
    """One watch event: ``type`` is ADDED, MODIFIED, DELETED or BOOKMARK."""

    type: str
    object: dict[str, Any]


class Client(Transport):
    """Dict-based async client for one apiserver. Create with a ``from_*`` constructor.

    ``configuration`` is a :class:`~kuberay.kube.restconfig.RestConfig` (see
    :class:`~kuberay.kube.transport.Transport`). Close with :meth:`close` or ``async with``.
    """

    # ----- construction -------------------------------------------------
    @classmethod
    async def from_kubeconfig(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        context: str | None = None,
        **kwargs: Any,
    ) -> Client:
        """Client for a kubeconfig file (default: the files ``$KUBECONFIG`` lists, else
        ``~/.kube/config``; inside a pod with neither, the service account), read by
        :mod:`kuberay.kube.kubeconfig` (every auth method kubectl has but the removed
        auth-providers). An exec plugin runs now. ConfigError (a KubeError) when the
        configuration is unusable, naming what is wrong."""
        from kuberay.kube import kubeconfig

        config = kubeconfig.load(path, kubeconfig.Overrides(context=context))
        await config.prepare()
        return cls(config, **kwargs)

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
            accept=ACCEPT_METADATA if metadata_only else ACCEPT_JSON,
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
            accept=ACCEPT_METADATA_LIST if metadata_only else ACCEPT_JSON,
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
            meta = k8s.meta(page)
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
        headers = await self._headers(None, ACCEPT_METADATA if metadata_only else ACCEPT_JSON)
        code = 0
        resp: http.Response | None = None
        try:
            try:
                async with asyncio.timeout(self.request_timeout):
                    resp = await self.pool.request(
                        "GET", info.path(namespace), params=clean_params(params), headers=headers
                    )
            except TimeoutError as exc:
                raise TransportError(
                    f"watch {info.plural}: no response within {self.request_timeout:g}s"
                ) from exc
            code = resp.status
            self._count("GET", "watch", code)
            if code >= 400:
                self._rejected(code)
                async with asyncio.timeout(self.request_timeout):
                    raise error_from_response(code, await resp.read(), resp.headers.as_dict())
            self._watches.add(resp)
            while True:
                try:
                    async with asyncio.timeout(inactivity_timeout):
                        line = await resp.readline()
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
        except http.InvalidRequest as exc:
            raise RequestRefused(f"watch {info.plural}: {exc}") from exc
        except (http.HTTPClientError, OSError) as exc:
            if resp is not None and resp in self._aborted:
                raise TransportError(f"watch {info.plural}: connection closed") from exc
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
        ns = k8s.meta(obj).get("namespace")
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
        meta = k8s.meta(obj)
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
            accept=ACCEPT_METADATA if metadata_only else ACCEPT_JSON,
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
        meta = k8s.meta(obj)
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


def _label(obj: dict[str, Any], api_version: str, kind: str) -> None:
    """Label a ``PartialObjectMetadata`` answer with the kind it was asked for."""
    obj["apiVersion"] = api_version
    obj["kind"] = kind


__all__ = ["DEFAULT_INACTIVITY_TIMEOUT", "WATCH_TIMEOUT_GRACE", "Client", "WatchEvent"]


def _is_read_writer(client: Client) -> ReadWriter:
    """Checked by mypy: :class:`Client` satisfies the published interfaces."""
    return client
