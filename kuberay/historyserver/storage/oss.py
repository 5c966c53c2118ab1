"""The ``aliyunoss`` backend: Alibaba Cloud OSS through its official Python SDK v2
(``alibabacloud-oss-v2``, whose ``aio`` client runs on aiohttp; KubeRay uses the Go SDK v2).

Configuration is KubeRay's (``historyserver/pkg/storage/aliyunoss/ray/config.go``): without a
JSON config, ``OSS_REGION``, ``OSS_BUCKET`` and ``OSS_ENDPOINT``; with one, its
``ossRegion``, ``ossBucket`` and ``ossEndpoint`` only. The bucket and region are required
(the SDK signs with V4, which needs the region); without an endpoint the SDK derives the
public one from the region. Credentials, as KubeRay's ``rrsa`` package: RRSA (the OIDC
role of ``ALIBABA_CLOUD_ROLE_ARN``, ``ALIBABA_CLOUD_OIDC_PROVIDER_ARN`` and
``ALIBABA_CLOUD_OIDC_TOKEN_FILE``), or with ``LOCAL_TEST=true`` the default chain of
``alibabacloud-credentials`` (env keys, profile, ECS role, ...). Credentials are fetched
with the providers' async calls before each request, so a refresh never blocks the event
loop. The bucket is not created (KubeRay does not either).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import aiohttp
import alibabacloud_oss_v2 as oss
import attrs
from alibabacloud_oss_v2.aio import AsyncClient

from kuberay.historyserver.storage.base import ListResult, ObjectInfo
from kuberay.historyserver.storage.chunks import (
    check_chunk_size,
    check_limit,
    check_range,
    is_dir_marker,
    parts,
)
from kuberay.historyserver.storage.errors import NotFound, StorageError

#: a streamed ``put`` longer than one part becomes a multipart upload of parts this size
PART_SIZE = 8 << 20
_NOT_FOUND_CODES = frozenset({"NoSuchKey", "NoSuchBucket"})
_FAILURES = (oss.exceptions.BaseError, aiohttp.ClientError, asyncio.TimeoutError, OSError)


@attrs.frozen
class OSSConfig:
    """Where the bucket is, and which credential source to use."""

    bucket: str
    region: str
    endpoint: str = ""
    local_test: bool = False
    #: RRSA: the role to assume with the pod's OIDC token (from the env, never the JSON)
    role_arn: str = ""
    oidc_provider_arn: str = ""
    oidc_token_file: str = ""

    @classmethod
    def from_sources(cls, env: Mapping[str, str], doc: Mapping[str, Any] | None) -> OSSConfig:
        """KubeRay's rules (module docstring); ``StorageError`` without a bucket or region."""
        if doc:
            values = {name: doc.get(key, "") for name, key in _JSON_KEYS}
        else:
            values = {name: env.get(key, "") for name, key in _ENV_KEYS}
        for name, value in values.items():
            if not isinstance(value, str):
                raise StorageError(f"OSS config {name} must be a string, not {value!r}")
        for name, env_key in (("bucket", "OSS_BUCKET"), ("region", "OSS_REGION")):
            if not values[name]:
                raise StorageError(
                    f"the aliyunoss storage backend needs a {name}: set {env_key} "
                    f"(or oss{name.capitalize()} in the storage backend config file)"
                )
        return cls(
            local_test=env.get("LOCAL_TEST") == "true",
            role_arn=env.get("ALIBABA_CLOUD_ROLE_ARN", ""),
            oidc_provider_arn=env.get("ALIBABA_CLOUD_OIDC_PROVIDER_ARN", ""),
            oidc_token_file=env.get("ALIBABA_CLOUD_OIDC_TOKEN_FILE", ""),
            **values,
        )


_ENV_KEYS = (("bucket", "OSS_BUCKET"), ("region", "OSS_REGION"), ("endpoint", "OSS_ENDPOINT"))
_JSON_KEYS = (("bucket", "ossBucket"), ("region", "ossRegion"), ("endpoint", "ossEndpoint"))


def credential_source(config: OSSConfig) -> Any:
    """The ``alibabacloud_credentials`` provider KubeRay would use: the default chain with
    ``LOCAL_TEST=true``, else RRSA's OIDC role (``ValueError`` when its env is missing)."""
    from alibabacloud_credentials.provider import (
        DefaultCredentialsProvider,
        OIDCRoleArnCredentialsProvider,
    )

    if config.local_test:
        return DefaultCredentialsProvider()
    return OIDCRoleArnCredentialsProvider(
        role_arn=config.role_arn or None,
        oidc_provider_arn=config.oidc_provider_arn or None,
        oidc_token_file_path=config.oidc_token_file or None,
    )


class _Credentials(oss.credentials.CredentialsProvider):  # type: ignore[misc]
    """What the SDK's signer reads (synchronously): the last credentials fetched by
    :meth:`refresh`, which awaits the real provider."""

    def __init__(self, source: Any) -> None:
        self._source = source
        self._current = oss.credentials.Credentials("", "")

    async def refresh(self) -> None:
        fetched = await self._source.get_credentials_async()
        self._current = oss.credentials.Credentials(
            fetched.get_access_key_id(),
            fetched.get_access_key_secret(),
            fetched.get_security_token() or None,
        )

    def get_credentials(self) -> Any:
        return self._current


def _service_error(exc: BaseException) -> Any:
    unwrap = getattr(exc, "unwrap", None)
    inner = unwrap() if callable(unwrap) else exc
    return inner if isinstance(inner, oss.exceptions.ServiceError) else None


def _is_not_found(exc: BaseException) -> bool:
    error = _service_error(exc)
    return error is not None and (error.status_code == 404 or error.code in _NOT_FOUND_CODES)


class OSSStore:
    """An ``ObjectStore`` on one OSS bucket; build it with :func:`open_oss`."""

    def __init__(self, client: AsyncClient, bucket: str, credentials: Any = None) -> None:
        """Use ``client`` (this store closes it); ``credentials`` (a ``_Credentials``) is
        refreshed before each request."""
        self._client = client
        self._bucket = bucket
        self._credentials = credentials

    async def _ready(self, action: str, key: str) -> None:
        if self._credentials is None:
            return
        try:
            await self._credentials.refresh()
        except Exception as exc:
            raise StorageError(f"{action} {key!r}: cannot get OSS credentials: {exc}") from exc

    def _fail(self, action: str, key: str, exc: BaseException) -> StorageError:
        if _is_not_found(exc):
            return NotFound(f"{action} {key!r} in bucket {self._bucket!r}: not found", key=key)
        return StorageError(f"{action} {key!r} in bucket {self._bucket!r}: {exc}", key=key)

    async def put(
        self,
        key: str,
        data: bytes | AsyncIterator[bytes],
        *,
        content_type: str | None = None,
    ) -> None:
        """PutObject, or a multipart upload when streamed data exceeds one part."""
        await self._ready("put", key)
        stream = parts(data, PART_SIZE)
        first = await anext(stream)
        try:
            second = await anext(stream)
        except StopAsyncIteration:
            try:
                await self._client.put_object(
                    oss.PutObjectRequest(
                        bucket=self._bucket, key=key, body=first, content_type=content_type
                    )
                )
            except _FAILURES as exc:
                raise self._fail("put", key, exc) from exc
            return
        await self._multipart(key, [first, second], stream, content_type)

    async def _multipart(
        self, key: str, head: list[bytes], rest: AsyncIterator[bytes], content_type: str | None
    ) -> None:
        try:
            created = await self._client.initiate_multipart_upload(
                oss.InitiateMultipartUploadRequest(
                    bucket=self._bucket, key=key, content_type=content_type
                )
            )
        except _FAILURES as exc:
            raise self._fail("put", key, exc) from exc
        upload_id = created.upload_id
        done: list[Any] = []

        async def upload(body: bytes) -> None:
            number = len(done) + 1
            answer = await self._client.upload_part(
                oss.UploadPartRequest(
                    bucket=self._bucket, key=key, upload_id=upload_id, part_number=number, body=body
                )
            )
            done.append(oss.UploadPart(part_number=number, etag=answer.etag))

        try:
            for body in head:
                await upload(body)
            async for body in rest:
                await upload(body)
            await self._client.complete_multipart_upload(
                oss.CompleteMultipartUploadRequest(
                    bucket=self._bucket,
                    key=key,
                    upload_id=upload_id,
                    complete_multipart_upload=oss.CompleteMultipartUpload(parts=done),
                )
            )
        except BaseException as exc:
            with contextlib.suppress(Exception):
                await self._client.abort_multipart_upload(
                    oss.AbortMultipartUploadRequest(
                        bucket=self._bucket, key=key, upload_id=upload_id
                    )
                )
            if isinstance(exc, _FAILURES):
                raise self._fail("put", key, exc) from exc
            raise

    async def get(self, key: str, *, byte_range: tuple[int, int] | None = None) -> bytes:
        """GetObject (a standard ``Range`` for a slice)."""
        wanted = check_range(byte_range)
        request = oss.GetObjectRequest(bucket=self._bucket, key=key)
        if wanted is not None:
            start, end = wanted
            if start == end:
                if not await self.exists(key):
                    raise NotFound(f"get {key!r} in bucket {self._bucket!r}: not found", key=key)
                return b""
            request.range_header = f"bytes={start}-{end - 1}"
            request.range_behavior = "standard"
        await self._ready("get", key)
        try:
            answer = await self._client.get_object(request)
            data: bytes = await answer.body.read()
            return data
        except _FAILURES as exc:
            error = _service_error(exc)
            if error is not None and (error.status_code == 416 or error.code == "InvalidRange"):
                return b""  # the object exists; the range starts at or past its end
            raise self._fail("get", key, exc) from exc

    async def open(self, key: str, *, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        """GetObject, streamed (the SDK resumes a broken transfer with a ranged GET)."""
        check_chunk_size(chunk_size)
        await self._ready("open", key)
        try:
            answer = await self._client.get_object_as_stream(
                oss.GetObjectRequest(bucket=self._bucket, key=key)
            )
        except _FAILURES as exc:
            raise self._fail("open", key, exc) from exc
        async with answer.body as body:
            try:
                async for chunk in await body.iter_bytes(block_size=chunk_size):
                    yield chunk
            except _FAILURES as exc:
                raise self._fail("read", key, exc) from exc

    async def exists(self, key: str) -> bool:
        """HeadObject."""
        await self._ready("head", key)
        try:
            await self._client.head_object(oss.HeadObjectRequest(bucket=self._bucket, key=key))
        except _FAILURES as exc:
            error = _service_error(exc)
            if error is not None and error.status_code == 404 and error.code != "NoSuchBucket":
                return False
            raise self._fail("head", key, exc) from exc
        return True

    async def delete(self, key: str) -> None:
        """DeleteObject (OSS answers 204 for a missing key too)."""
        await self._ready("delete", key)
        try:
            await self._client.delete_object(oss.DeleteObjectRequest(bucket=self._bucket, key=key))
        except _FAILURES as exc:
            error = _service_error(exc)
            if error is not None and error.code == "NoSuchKey":
                return
            raise self._fail("delete", key, exc) from exc

    async def list(
        self,
        prefix: str,
        *,
        delimiter: str | None = "/",
        token: str | None = None,
        limit: int = 1000,
    ) -> ListResult:
        """One ListObjectsV2 page (``max-keys`` counts objects and prefixes together)."""
        check_limit(limit)
        await self._ready("list", prefix)
        request = oss.ListObjectsV2Request(
            bucket=self._bucket,
            prefix=prefix,
            max_keys=limit,
            delimiter=delimiter or None,
            continuation_token=token or None,
            encoding_type="url",
        )
        try:
            page = await self._client.list_objects_v2(request)
        except _FAILURES as exc:
            raise self._fail("list", prefix, exc) from exc
        objects = tuple(
            ObjectInfo(key=item.key, size=int(item.size or 0))
            for item in page.contents or ()
            if not is_dir_marker(item.key, int(item.size or 0))
        )
        prefixes = tuple(item.prefix for item in page.common_prefixes or ())
        more = page.is_truncated and page.next_continuation_token
        return ListResult(objects, prefixes, next_token=more or None)

    async def close(self) -> None:
        """Close the client's connection pool."""
        await self._client.close()


async def open_oss(config: OSSConfig, *, credentials_source: Any = None) -> OSSStore:
    """An ``OSSStore`` on ``config.bucket``; ``credentials_source`` (an
    ``alibabacloud_credentials`` provider) replaces :func:`credential_source`'s choice."""
    try:
        source = credentials_source or credential_source(config)
    except ValueError as exc:
        raise StorageError(f"cannot get OSS credentials (RRSA): {exc}") from exc
    credentials = _Credentials(source)
    cfg = oss.config.load_default()
    cfg.credentials_provider = credentials
    cfg.region = config.region
    if config.endpoint:
        cfg.endpoint = config.endpoint
    cfg.connect_timeout = 5
    cfg.readwrite_timeout = 60
    return OSSStore(AsyncClient(cfg), config.bucket, credentials)
