"""The ``azureblob`` backend: Azure Blob Storage (and Azurite) through azure-storage-blob's
``aio`` package (azure-identity's ``aio`` credentials for token auth).

Configuration is KubeRay's (``historyserver/pkg/storage/azureblob/config.go``): env
``AZURE_STORAGE_CONNECTION_STRING``, ``AZURE_STORAGE_ACCOUNT_URL``,
``AZURE_STORAGE_CONTAINER`` (default ``ray-historyserver``) and ``AZURE_STORAGE_AUTH_MODE``
(``connection_string``, ``workload_identity`` or ``default``; any other value means
"auto"), each replaced by the JSON config's ``azureConnectionString``, ``azureAccountURL``,
``azureContainer`` or ``azureAuthMode`` when that key is there. Auto mode uses the connection
string when there is one (it wins over an account URL), else ``DefaultAzureCredential`` on
the account URL. The container is created when missing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

import aiohttp
import attrs
from azure.core.exceptions import (
    AzureError,
    HttpResponseError,
    ResourceExistsError,
    ResourceNotFoundError,
)
from azure.storage.blob import ContentSettings
from azure.storage.blob.aio import BlobPrefix, BlobServiceClient, ContainerClient

from kuberay.historyserver.storage.base import ListResult, ObjectInfo
from kuberay.historyserver.storage.chunks import (
    check_chunk_size,
    check_limit,
    check_range,
    is_dir_marker,
    iter_chunks,
)
from kuberay.historyserver.storage.errors import NotFound, StorageError

DEFAULT_CONTAINER = "ray-historyserver"
AUTH_MODES = ("connection_string", "workload_identity", "default")
_FAILURES = (AzureError, aiohttp.ClientError, asyncio.TimeoutError, OSError)
#: download and upload sizes: one request for up to this many bytes, then chunks of it
_TRANSFER_SIZE = 4 << 20


@attrs.frozen
class AzureConfig:
    """The container and how to authenticate (``auth_mode`` ``""``: auto-detect)."""

    container: str = DEFAULT_CONTAINER
    connection_string: str = attrs.field(default="", repr=False)
    account_url: str = ""
    auth_mode: str = ""

    @classmethod
    def from_sources(cls, env: Mapping[str, str], doc: Mapping[str, Any] | None) -> AzureConfig:
        """KubeRay's rules (module docstring) over ``env`` and the JSON config ``doc``."""
        values = {
            "connection_string": env.get("AZURE_STORAGE_CONNECTION_STRING", ""),
            "account_url": env.get("AZURE_STORAGE_ACCOUNT_URL", ""),
            "container": env.get("AZURE_STORAGE_CONTAINER") or DEFAULT_CONTAINER,
            "auth_mode": env.get("AZURE_STORAGE_AUTH_MODE", ""),
        }
        for json_key, field in (
            ("azureContainer", "container"),
            ("azureConnectionString", "connection_string"),
            ("azureAccountURL", "account_url"),
            ("azureAuthMode", "auth_mode"),
        ):
            if doc and isinstance(doc.get(json_key), str):
                values[field] = doc[json_key]
        mode = values["auth_mode"].strip().lower()
        values["auth_mode"] = mode if mode in AUTH_MODES else ""
        return cls(**values)

    def resolved_mode(self) -> str:
        """The auth mode to use; ``StorageError`` when nothing to authenticate with."""
        if self.auth_mode:
            mode = self.auth_mode
        elif self.connection_string:
            mode = "connection_string"
        elif self.account_url:
            mode = "default"
        else:
            raise StorageError(
                "either AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT_URL must be set"
            )
        if mode == "connection_string" and not self.connection_string:
            raise StorageError("auth mode connection_string needs AZURE_STORAGE_CONNECTION_STRING")
        if mode != "connection_string" and not self.account_url:
            raise StorageError(f"auth mode {mode} needs AZURE_STORAGE_ACCOUNT_URL")
        return mode


def _status(exc: BaseException) -> int:
    return int(getattr(exc, "status_code", 0) or 0)


class AzureStore:
    """An ``ObjectStore`` on one blob container; build it with :func:`open_azure`."""

    def __init__(
        self, service: BlobServiceClient, container: ContainerClient, credential: Any = None
    ) -> None:
        """Use ``container`` of ``service`` (this store closes both, and ``credential``)."""
        self._service = service
        self._container = container
        self._credential = credential

    def _fail(self, action: str, key: str, exc: BaseException) -> StorageError:
        name = self._container.container_name
        if isinstance(exc, ResourceNotFoundError) or _status(exc) == 404:
            return NotFound(f"{action} {key!r} in container {name!r}: not found", key=key)
        return StorageError(f"{action} {key!r} in container {name!r}: {exc}", key=key)

    async def put(
        self,
        key: str,
        data: bytes | AsyncIterator[bytes],
        *,
        content_type: str | None = None,
    ) -> None:
        """One Put Blob, or staged blocks committed at the end (past 4 MiB): atomic."""
        settings = ContentSettings(content_type=content_type) if content_type else None
        body: Any = data if isinstance(data, bytes) else iter_chunks(data)
        try:
            await self._container.upload_blob(key, body, overwrite=True, content_settings=settings)
        except _FAILURES as exc:
            raise self._fail("put", key, exc) from exc

    async def get(self, key: str, *, byte_range: tuple[int, int] | None = None) -> bytes:
        """Get Blob (``offset``/``length`` for a slice)."""
        wanted = check_range(byte_range)
        offset = length = None
        if wanted is not None:
            start, end = wanted
            if start == end:
                if not await self.exists(key):
                    raise self._fail("get", key, ResourceNotFoundError("no such blob"))
                return b""
            offset, length = start, end - start
        try:
            downloader = await self._container.download_blob(key, offset, length)
            data: bytes = await downloader.readall()
            return data
        except _FAILURES as exc:
            if _status(exc) == 416:
                return b""  # the blob exists; the range starts at or past its end
            raise self._fail("get", key, exc) from exc

    async def open(self, key: str, *, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        """Get Blob, read in chunks."""
        check_chunk_size(chunk_size)
        try:
            downloader = await self._container.download_blob(key)
        except _FAILURES as exc:
            raise self._fail("open", key, exc) from exc
        while True:
            try:
                chunk: bytes = await downloader.read(chunk_size)
            except _FAILURES as exc:
                raise self._fail("read", key, exc) from exc
            if not chunk:
                return
            yield chunk

    async def exists(self, key: str) -> bool:
        """Get Blob Properties."""
        try:
            return bool(await self._container.get_blob_client(key).exists())
        except _FAILURES as exc:
            raise self._fail("stat", key, exc) from exc

    async def delete(self, key: str) -> None:
        """Delete Blob (a missing blob is fine; a missing container is not)."""
        try:
            await self._container.delete_blob(key)
        except ResourceNotFoundError as exc:
            if getattr(exc, "error_code", None) == "ContainerNotFound":
                raise self._fail("delete", key, exc) from exc
        except _FAILURES as exc:
            raise self._fail("delete", key, exc) from exc

    async def list(
        self,
        prefix: str,
        *,
        delimiter: str | None = "/",
        token: str | None = None,
        limit: int = 1000,
    ) -> ListResult:
        """One List Blobs page (``maxresults`` counts blobs and prefixes together)."""
        check_limit(limit)
        start = prefix or None
        paged: Any
        if delimiter:
            paged = self._container.walk_blobs(
                name_starts_with=start, delimiter=delimiter, results_per_page=limit
            )
        else:
            paged = self._container.list_blobs(name_starts_with=start, results_per_page=limit)
        pages = paged.by_page(continuation_token=token)
        objects: list[ObjectInfo] = []
        prefixes: list[str] = []
        try:
            page = await pages.__anext__()
            async for item in page:
                if isinstance(item, BlobPrefix):
                    prefixes.append(item.name)
                elif not is_dir_marker(item.name, int(item.size or 0)):
                    objects.append(ObjectInfo(key=item.name, size=int(item.size or 0)))
        except StopAsyncIteration:
            pass
        except _FAILURES as exc:
            raise self._fail("list", prefix, exc) from exc
        next_token = getattr(pages, "continuation_token", None) or None
        return ListResult(tuple(objects), tuple(sorted(prefixes)), next_token=next_token)

    async def close(self) -> None:
        """Close the clients' connection pools (and a token credential)."""
        await self._container.close()
        await self._service.close()
        if self._credential is not None:
            await self._credential.close()


async def open_azure(config: AzureConfig) -> AzureStore:
    """A connected ``AzureStore`` on ``config.container`` (created when missing)."""
    mode = config.resolved_mode()
    sizes: dict[str, Any] = {
        "max_single_get_size": _TRANSFER_SIZE,
        "max_chunk_get_size": _TRANSFER_SIZE,
        "max_single_put_size": _TRANSFER_SIZE,
        "max_block_size": _TRANSFER_SIZE,
    }
    credential: Any = None
    try:
        if mode == "connection_string":
            service = BlobServiceClient.from_connection_string(config.connection_string, **sizes)
        else:
            from azure.identity.aio import DefaultAzureCredential, WorkloadIdentityCredential

            credential = (
                WorkloadIdentityCredential()
                if mode == "workload_identity"
                else DefaultAzureCredential()
            )
            service = BlobServiceClient(config.account_url, credential=credential, **sizes)
    except (ValueError, *_FAILURES) as exc:
        if credential is not None:
            await credential.close()
        raise StorageError(f"cannot create the Azure Blob client ({mode}): {exc}") from exc
    container = service.get_container_client(config.container)
    store = AzureStore(service, container, credential)
    try:
        await _ensure_container(container)
    except BaseException:
        await store.close()
        raise
    return store


async def _ensure_container(container: ContainerClient) -> None:
    """Create the container unless it exists (KubeRay's ``ensureContainerExists``)."""
    name = container.container_name
    try:
        if await container.exists():
            return
        await container.create_container()
    except ResourceExistsError:
        return  # created by another writer meanwhile
    except HttpResponseError as exc:
        raise StorageError(f"cannot create container {name!r}: {exc}") from exc
    except _FAILURES as exc:
        raise StorageError(f"cannot reach container {name!r}: {exc}") from exc
