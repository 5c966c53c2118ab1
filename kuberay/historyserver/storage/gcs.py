"""The ``gcs`` backend: Google Cloud Storage through gcloud-aio-storage (its JSON API on
aiohttp, natively async: no thread per call, the same aiohttp the rest of the project uses).

Configuration is KubeRay's (``historyserver/pkg/storage/gcs/config.go``): the bucket is the
JSON config's ``gcsBucket`` when given, else ``GCS_BUCKET``; there is no default (a bucket
name is global in GCS, so a default would name someone else's bucket) and the bucket is not
created. Credentials: gcloud-aio-auth's chain (``GOOGLE_APPLICATION_CREDENTIALS``, gcloud's
application-default file, then the metadata server, which is Workload Identity on GKE).
``STORAGE_EMULATOR_HOST`` (``http://host:port``) points the client at an emulator such as
fake-gcs-server, without credentials.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

import aiohttp
import attrs
from gcloud.aio.storage import Storage

from kuberay.historyserver.storage.base import ListResult, ObjectInfo
from kuberay.historyserver.storage.chunks import (
    check_chunk_size,
    check_limit,
    check_range,
    is_dir_marker,
    spool,
)
from kuberay.historyserver.storage.errors import NotFound, StorageError

_FAILURES = (aiohttp.ClientError, asyncio.TimeoutError, OSError)
#: empty pages (a pageToken and nothing else) followed within one ``list`` call
_EMPTY_PAGES = 20
#: seconds for one request (an upload of a big log file takes one request)
REQUEST_TIMEOUT = 120


@attrs.frozen
class GCSConfig:
    """The bucket, and the emulator's URL when one is used."""

    bucket: str
    emulator_host: str = ""

    @classmethod
    def from_sources(cls, env: Mapping[str, str], doc: Mapping[str, Any] | None) -> GCSConfig:
        """``gcsBucket`` from the JSON config, else ``GCS_BUCKET``; ``StorageError`` when
        neither is set."""
        bucket = ""
        if doc and isinstance(doc.get("gcsBucket"), str):
            bucket = doc["gcsBucket"]
        bucket = bucket or env.get("GCS_BUCKET", "")
        if not bucket:
            raise StorageError(
                "the gcs storage backend needs a bucket: set GCS_BUCKET "
                "(or gcsBucket in the storage backend config file)"
            )
        host = env.get("STORAGE_EMULATOR_HOST", "")
        if host and "://" not in host:
            host = f"http://{host}"
        return cls(bucket=bucket, emulator_host=host)


def _status(exc: BaseException) -> int:
    return exc.status if isinstance(exc, aiohttp.ClientResponseError) else 0


class GCSStore:
    """An ``ObjectStore`` on one GCS bucket; build it with :func:`open_gcs`."""

    def __init__(self, client: Storage, bucket: str) -> None:
        """Use ``client`` (this store closes it) on ``bucket``."""
        self._client = client
        self._bucket = bucket

    def _fail(self, action: str, key: str, exc: BaseException) -> StorageError:
        if _status(exc) == 404:
            return NotFound(f"{action} {key!r} in bucket {self._bucket!r}: not found", key=key)
        return StorageError(f"{action} {key!r} in bucket {self._bucket!r}: {exc}", key=key)

    async def put(
        self,
        key: str,
        data: bytes | AsyncIterator[bytes],
        *,
        content_type: str | None = None,
    ) -> None:
        """One upload (simple, or resumable past 5 MiB); streamed data is spooled first
        because the JSON API wants the length up front."""
        body: Any = data
        if not isinstance(data, bytes):
            body, _size = await spool(data)
        try:
            await self._client.upload(
                self._bucket,
                key,
                body,
                content_type=content_type or "application/octet-stream",
                timeout=REQUEST_TIMEOUT,
            )
        except _FAILURES as exc:
            raise self._fail("put", key, exc) from exc
        finally:
            if not isinstance(data, bytes):
                body.close()

    async def get(self, key: str, *, byte_range: tuple[int, int] | None = None) -> bytes:
        """The media download (with a ``Range`` header for a slice)."""
        wanted = check_range(byte_range)
        headers: dict[str, str] = {}
        if wanted is not None:
            start, end = wanted
            if start == end:
                if not await self.exists(key):
                    raise NotFound(f"get {key!r} in bucket {self._bucket!r}: not found", key=key)
                return b""
            headers["Range"] = f"bytes={start}-{end - 1}"
        try:
            data: bytes = await self._client.download(
                self._bucket, key, headers=headers, timeout=REQUEST_TIMEOUT
            )
            return data
        except _FAILURES as exc:
            if _status(exc) == 416:
                return b""  # the object exists; the range starts at or past its end
            raise self._fail("get", key, exc) from exc

    async def open(self, key: str, *, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        """The media download, streamed."""
        check_chunk_size(chunk_size)
        try:
            response = await self._client.download_stream(
                self._bucket, key, timeout=REQUEST_TIMEOUT
            )
        except _FAILURES as exc:
            raise self._fail("open", key, exc) from exc
        async with response:
            while True:
                try:
                    chunk: bytes = await response.read(chunk_size)
                except _FAILURES as exc:
                    raise self._fail("read", key, exc) from exc
                if not chunk:
                    return
                yield chunk

    async def exists(self, key: str) -> bool:
        """The object's metadata (404: no object)."""
        try:
            await self._client.download_metadata(self._bucket, key, timeout=REQUEST_TIMEOUT)
        except _FAILURES as exc:
            if _status(exc) == 404:
                return False
            raise self._fail("stat", key, exc) from exc
        return True

    async def delete(self, key: str) -> None:
        """Delete the object (404 is fine)."""
        try:
            await self._client.delete(self._bucket, key, timeout=REQUEST_TIMEOUT)
        except _FAILURES as exc:
            if _status(exc) == 404 and await self._bucket_exists():
                return
            raise self._fail("delete", key, exc) from exc

    async def _bucket_exists(self) -> bool:
        try:
            await self._client.get_bucket_metadata(self._bucket, timeout=REQUEST_TIMEOUT)
        except _FAILURES:
            return False
        return True

    async def list(
        self,
        prefix: str,
        *,
        delimiter: str | None = "/",
        token: str | None = None,
        limit: int = 1000,
    ) -> ListResult:
        """One page of objects.list, paged by ``startOffset`` (see :func:`_page`)."""
        check_limit(limit)
        params = {"prefix": prefix, "maxResults": str(limit + 1), "fields": _LIST_FIELDS}
        if delimiter:
            params["delimiter"] = delimiter
        after: tuple[str, str] | None = None
        if token:
            after = _parse_token(token)
            params["startOffset"] = after[1] if after[0] == "o" else _past(after[1])
        for _ in range(_EMPTY_PAGES):
            try:
                answer = await self._client.list_objects(
                    self._bucket, params=params, timeout=REQUEST_TIMEOUT
                )
            except _FAILURES as exc:
                raise self._fail("list", prefix, exc) from exc
            page = _page(answer, after, limit)
            if page.next_token or not answer.get("nextPageToken"):
                return page
            # GCS may answer a page with nothing in it but a pageToken: follow it
            params["pageToken"] = str(answer["nextPageToken"])
        raise StorageError(f"list {prefix!r}: {_EMPTY_PAGES} empty pages in a row", key=prefix)

    async def close(self) -> None:
        """Close the client's HTTP session."""
        await self._client.close()


_LIST_FIELDS = "items(name,size),prefixes,nextPageToken"


def _parse_token(token: str) -> tuple[str, str]:
    kind, _, name = token.partition(":")
    if kind not in ("o", "p") or not name:
        raise StorageError(f"not a GCS list token of this store: {token!r}")
    return kind, name


def _past(prefix: str) -> str:
    """The least name after every name that starts with ``prefix`` (its last character,
    the delimiter, incremented: ``a/`` gives ``a0``)."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _page(answer: Mapping[str, Any], after: tuple[str, str] | None, limit: int) -> ListResult:
    """One page out of an objects.list answer, at most ``limit`` entries in name order.

    Pages resume with ``startOffset`` after the last entry returned (the token is ``o:<key>``
    or ``p:<prefix>``) rather than with GCS's ``pageToken``: the API counts items and
    prefixes together towards ``maxResults`` while emulators differ (fake-gcs-server counts
    only items and repeats every later prefix on each page), so the page is cut here, and
    only up to the answer's last item (or last prefix, without items) when the answer says
    more follow: a range every server has answered completely."""
    items = [(str(item["name"]), int(item.get("size", 0))) for item in answer.get("items", ())]
    prefixes = [str(p) for p in answer.get("prefixes", ())]
    if after is not None and after[0] == "o":
        items = [(name, size) for name, size in items if name != after[1]]
    more = bool(answer.get("nextPageToken"))
    entries = sorted([(name, "o", size) for name, size in items] + [(p, "p", 0) for p in prefixes])
    if more:
        bound = max(name for name, _ in items) if items else max(prefixes, default="")
        entries = [entry for entry in entries if entry[0] <= bound]
    if len(entries) > limit:
        entries = entries[:limit]
        more = True
    objects = tuple(
        ObjectInfo(key=name, size=size)
        for name, kind, size in entries
        if kind == "o" and not is_dir_marker(name, size)
    )
    found = tuple(name for name, kind, _ in entries if kind == "p")
    token = f"{entries[-1][1]}:{entries[-1][0]}" if more and entries else None
    return ListResult(objects, found, next_token=token)


async def open_gcs(config: GCSConfig) -> GCSStore:
    """A ``GCSStore`` on ``config.bucket``; ``NotFound`` when the bucket does not exist."""
    if config.emulator_host:
        client = Storage(api_root=config.emulator_host, api_is_dev=True)
    else:
        client = Storage(api_root="https://www.googleapis.com", api_is_dev=False)
    store = GCSStore(client, config.bucket)
    try:
        await client.get_bucket_metadata(config.bucket, timeout=REQUEST_TIMEOUT)
    except _FAILURES as exc:
        await client.close()
        if _status(exc) == 404:
            raise NotFound(f"GCS bucket {config.bucket!r} does not exist") from exc
        raise StorageError(f"cannot reach GCS bucket {config.bucket!r}: {exc}") from exc
    return store
