"""The ``s3`` backend: Amazon S3 and S3-compatible servers (MinIO, moto, ...) through
aiobotocore (botocore on aiohttp).

Configuration is KubeRay's (``historyserver/pkg/storage/s3/config.go``): the credentials
``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_SESSION_TOKEN`` (without a key id,
botocore's default chain: web identity/IRSA, profile, instance role, ...) and the bucket
``S3_BUCKET`` (default ``ray-historyserver``) always come from the environment. Without a
JSON config, ``S3_ENDPOINT``, ``S3_REGION``, ``S3FORCE_PATH_STYLE`` and ``S3DISABLE_SSL``
(the string ``"true"`` means true) do too; with one, its keys ``s3Bucket``, ``s3Endpoint``,
``s3Region``, ``s3ForcePathStyle`` and ``s3DisableSSL`` replace them (the env values of
those four are then ignored, as KubeRay does). The bucket is created when missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Mapping
from typing import Any

import aiohttp
import attrs
from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from botocore.exceptions import BotoCoreError, ClientError

from kuberay.historyserver.storage.base import ListResult, ObjectInfo
from kuberay.historyserver.storage.chunks import (
    check_chunk_size,
    check_limit,
    check_range,
    is_dir_marker,
    parts,
)
from kuberay.historyserver.storage.errors import NotFound, StorageError

DEFAULT_BUCKET = "ray-historyserver"
#: a streamed ``put`` longer than one part becomes a multipart upload of parts this size
PART_SIZE = 8 << 20
_NOT_FOUND_CODES = frozenset({"NoSuchKey", "NoSuchBucket", "NotFound", "404"})
_FAILURES = (BotoCoreError, aiohttp.ClientError, asyncio.TimeoutError, OSError)


@attrs.frozen
class S3Config:
    """Where and how to reach the bucket (``None`` flags: the SDK's default)."""

    bucket: str = DEFAULT_BUCKET
    endpoint: str = ""
    region: str = ""
    force_path_style: bool | None = None
    disable_ssl: bool | None = None
    access_key_id: str = attrs.field(default="", repr=False)
    secret_access_key: str = attrs.field(default="", repr=False)
    session_token: str = attrs.field(default="", repr=False)

    @classmethod
    def from_sources(cls, env: Mapping[str, str], doc: Mapping[str, Any] | None) -> S3Config:
        """KubeRay's rules (module docstring) over ``env`` and the JSON config ``doc``."""
        bucket = env.get("S3_BUCKET") or DEFAULT_BUCKET
        endpoint = region = ""
        force: bool | None = None
        no_ssl: bool | None = None
        if not doc:
            endpoint = env.get("S3_ENDPOINT", "")
            region = env.get("S3_REGION", "")
            if env.get("S3FORCE_PATH_STYLE"):
                force = env["S3FORCE_PATH_STYLE"] == "true"
            if env.get("S3DISABLE_SSL"):
                no_ssl = env["S3DISABLE_SSL"] == "true"
        else:
            bucket = _string(doc, "s3Bucket", bucket)
            endpoint = _string(doc, "s3Endpoint", "")
            region = _string(doc, "s3Region", "")
            if "s3ForcePathStyle" in doc:
                force = _flag(doc["s3ForcePathStyle"])
            if "s3DisableSSL" in doc:
                no_ssl = _flag(doc["s3DisableSSL"])
        return cls(
            bucket=bucket,
            endpoint=endpoint,
            region=region,
            force_path_style=force,
            disable_ssl=no_ssl,
            access_key_id=env.get("AWS_ACCESS_KEY_ID", ""),
            secret_access_key=env.get("AWS_SECRET_ACCESS_KEY", ""),
            session_token=env.get("AWS_SESSION_TOKEN", ""),
        )

    def endpoint_url(self) -> str | None:
        """The endpoint as a URL: a bare ``host:port`` gets ``http://`` when SSL is disabled,
        else ``https://`` (as aws-sdk-go does); ``None`` for AWS's own endpoints."""
        if not self.endpoint:
            return None
        if "://" in self.endpoint:
            return self.endpoint
        scheme = "http" if self.disable_ssl else "https"
        return f"{scheme}://{self.endpoint}"


def _string(doc: Mapping[str, Any], name: str, default: str) -> str:
    value = doc.get(name, default)
    if not isinstance(value, str):
        raise StorageError(f"storage config key {name!r} must be a string, not {value!r}")
    return value


def _flag(value: Any) -> bool:
    # KubeRay reads these JSON values as strings ("true"); a JSON true is accepted as well
    return value is True or value == "true"


def _error_code(exc: ClientError) -> tuple[str, int]:
    error = exc.response.get("Error", {})
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    return str(error.get("Code", "")), int(status or 0)


def _is_not_found(exc: ClientError) -> bool:
    code, status = _error_code(exc)
    return code in _NOT_FOUND_CODES or status == 404


class S3Store:
    """An ``ObjectStore`` on one S3 bucket; build it with :func:`open_s3`."""

    def __init__(self, client: Any, bucket: str) -> None:
        """Use an entered aiobotocore S3 ``client`` (this store closes it)."""
        self._client = client
        self._bucket = bucket

    @property
    def bucket(self) -> str:
        """The bucket's name."""
        return self._bucket

    def _fail(self, action: str, key: str, exc: Exception) -> StorageError:
        if isinstance(exc, ClientError) and _is_not_found(exc):
            return NotFound(f"{action} {key!r} in bucket {self._bucket!r}: not found", key=key)
        return StorageError(f"{action} {key!r} in bucket {self._bucket!r}: {exc}", key=key)

    async def put(
        self,
        key: str,
        data: bytes | AsyncIterator[bytes],
        *,
        content_type: str | None = None,
    ) -> None:
        """One PutObject, or a multipart upload when streamed data exceeds one part."""
        extra = {"ContentType": content_type} if content_type else {}
        if isinstance(data, bytes):
            await self._put_object(key, data, extra)
            return
        stream = parts(data, PART_SIZE)
        first = await anext(stream)
        try:
            second = await anext(stream)
        except StopAsyncIteration:
            await self._put_object(key, first, extra)
            return
        await self._multipart(key, [first, second], stream, extra)

    async def _put_object(self, key: str, body: bytes, extra: dict[str, str]) -> None:
        try:
            await self._client.put_object(Bucket=self._bucket, Key=key, Body=body, **extra)
        except (ClientError, *_FAILURES) as exc:
            raise self._fail("put", key, exc) from exc

    async def _multipart(
        self, key: str, head: list[bytes], rest: AsyncIterator[bytes], extra: dict[str, str]
    ) -> None:
        try:
            created = await self._client.create_multipart_upload(
                Bucket=self._bucket, Key=key, **extra
            )
        except (ClientError, *_FAILURES) as exc:
            raise self._fail("put", key, exc) from exc
        upload_id = created["UploadId"]
        done: list[dict[str, Any]] = []

        async def upload(number: int, body: bytes) -> None:
            answer = await self._client.upload_part(
                Bucket=self._bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=body
            )
            done.append({"PartNumber": number, "ETag": answer["ETag"]})

        try:
            for body in head:
                await upload(len(done) + 1, body)
            async for body in rest:
                await upload(len(done) + 1, body)
            await self._client.complete_multipart_upload(
                Bucket=self._bucket,
                Key=key,
                UploadId=upload_id,
                MultipartUpload={"Parts": done},
            )
        except BaseException as exc:
            with contextlib.suppress(Exception):
                await self._client.abort_multipart_upload(
                    Bucket=self._bucket, Key=key, UploadId=upload_id
                )
            if isinstance(exc, ClientError | _FAILURES):
                raise self._fail("put", key, exc) from exc
            raise

    async def get(self, key: str, *, byte_range: tuple[int, int] | None = None) -> bytes:
        """GetObject (with a ``Range`` header for a slice); ``NotFound`` when missing."""
        wanted = check_range(byte_range)
        extra: dict[str, str] = {}
        if wanted is not None:
            start, end = wanted
            if start == end:
                if not await self.exists(key):
                    raise NotFound(f"get {key!r} in bucket {self._bucket!r}: not found", key=key)
                return b""
            extra["Range"] = f"bytes={start}-{end - 1}"
        try:
            answer = await self._client.get_object(Bucket=self._bucket, Key=key, **extra)
            async with answer["Body"] as body:
                data: bytes = await body.read()
                return data
        except ClientError as exc:
            if _error_code(exc)[0] == "InvalidRange" or _error_code(exc)[1] == 416:
                return b""  # the object exists; the range starts at or past its end
            raise self._fail("get", key, exc) from exc
        except _FAILURES as exc:
            raise self._fail("get", key, exc) from exc

    async def open(self, key: str, *, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        """GetObject, its body streamed; ``NotFound`` before the first chunk."""
        check_chunk_size(chunk_size)
        try:
            answer = await self._client.get_object(Bucket=self._bucket, Key=key)
        except (ClientError, *_FAILURES) as exc:
            raise self._fail("open", key, exc) from exc
        async with answer["Body"] as body:
            while True:
                try:
                    chunk: bytes = await body.read(chunk_size)
                except _FAILURES as exc:
                    raise self._fail("read", key, exc) from exc
                if not chunk:
                    return
                yield chunk

    async def exists(self, key: str) -> bool:
        """HeadObject."""
        try:
            await self._client.head_object(Bucket=self._bucket, Key=key)
        except ClientError as exc:
            if _is_not_found(exc):
                return False
            raise self._fail("head", key, exc) from exc
        except _FAILURES as exc:
            raise self._fail("head", key, exc) from exc
        return True

    async def delete(self, key: str) -> None:
        """DeleteObject (S3 answers 204 for a missing key too)."""
        try:
            await self._client.delete_object(Bucket=self._bucket, Key=key)
        except ClientError as exc:
            if _is_not_found(exc) and _error_code(exc)[0] != "NoSuchBucket":
                return
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
        """One ListObjectsV2 page (``MaxKeys`` counts objects and prefixes together)."""
        check_limit(limit)
        request: dict[str, Any] = {"Bucket": self._bucket, "Prefix": prefix, "MaxKeys": limit}
        if delimiter:
            request["Delimiter"] = delimiter
        if token:
            request["ContinuationToken"] = token
        try:
            page = await self._client.list_objects_v2(**request)
        except (ClientError, *_FAILURES) as exc:
            raise self._fail("list", prefix, exc) from exc
        objects = tuple(
            ObjectInfo(key=item["Key"], size=int(item.get("Size", 0)))
            for item in page.get("Contents", ())
            if not is_dir_marker(item["Key"], int(item.get("Size", 0)))
        )
        prefixes = tuple(item["Prefix"] for item in page.get("CommonPrefixes", ()))
        more = page.get("IsTruncated") and page.get("NextContinuationToken")
        return ListResult(objects, prefixes, next_token=more or None)

    async def close(self) -> None:
        """Close the client's connection pool."""
        await self._client.close()


async def _ensure_bucket(client: Any, config: S3Config) -> None:
    """Create the bucket when HeadBucket says it is missing (KubeRay's
    ``createBucketIfNotExists``); a bucket another writer creates meanwhile is fine."""
    try:
        await client.head_bucket(Bucket=config.bucket)
        return
    except ClientError as exc:
        code, status = _error_code(exc)
        missing = code in _NOT_FOUND_CODES or status == 404
    request: dict[str, Any] = {"Bucket": config.bucket}
    if config.region and config.region != "us-east-1":
        request["CreateBucketConfiguration"] = {"LocationConstraint": config.region}
    try:
        await client.create_bucket(**request)
    except ClientError as exc:
        code, _ = _error_code(exc)
        if code in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
            return
        if not missing and code == "AccessDenied":
            return  # no right to HeadBucket/CreateBucket: the bucket is the owner's business
        raise StorageError(f"cannot create bucket {config.bucket!r}: {exc}") from exc


@functools.cache
def _session() -> Any:
    """One botocore session per process: it caches the loaded service models (loading
    them takes about a second)."""
    return get_session()


async def open_s3(config: S3Config) -> S3Store:
    """A connected ``S3Store`` on ``config.bucket`` (created when missing)."""
    boto_config = AioConfig(
        connect_timeout=5,
        read_timeout=60,
        retries={"max_attempts": 3, "mode": "standard"},
        s3={"addressing_style": "path" if config.force_path_style else "auto"},
        # S3-compatible servers (MinIO, OSS, older Ceph) reject the CRC checksums botocore
        # adds by default since 1.36; send and check them only where the API requires them
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    credentials: dict[str, str] = {}
    if config.access_key_id:
        credentials = {
            "aws_access_key_id": config.access_key_id,
            "aws_secret_access_key": config.secret_access_key,
        }
        if config.session_token:
            credentials["aws_session_token"] = config.session_token
    creator = _session().create_client(
        "s3",
        region_name=config.region or None,
        endpoint_url=config.endpoint_url(),
        use_ssl=not config.disable_ssl,
        config=boto_config,
        **credentials,
    )
    try:
        client = await creator.__aenter__()
    except (ClientError, *_FAILURES) as exc:
        raise StorageError(f"cannot create the S3 client: {exc}") from exc
    try:
        await _ensure_bucket(client, config)
    except BaseException as exc:
        await client.close()
        if isinstance(exc, _FAILURES):
            raise StorageError(f"cannot reach bucket {config.bucket!r}: {exc}") from exc
        raise
    return S3Store(client, config.bucket)
