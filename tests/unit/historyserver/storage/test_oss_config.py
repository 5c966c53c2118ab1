"""The aliyunoss backend's configuration and credential choice (KubeRay's
``aliyunoss/ray/config.go`` and ``rrsa``). No OSS server runs on this machine (none is in a
registry reachable here; Aliyun's own oss-emulator is a Ruby project outside them and
answers only ListObjects v1), so the contract suite cannot run against this backend: these
tests cover what can be checked without one."""

from __future__ import annotations

from typing import Any

import alibabacloud_oss_v2 as oss
import pytest
from alibabacloud_credentials.provider import (
    DefaultCredentialsProvider,
    OIDCRoleArnCredentialsProvider,
    StaticAKCredentialsProvider,
)

from kuberay.historyserver.storage import NotFound, StorageError
from kuberay.historyserver.storage.config import backend_config, storage_settings
from kuberay.historyserver.storage.oss import (
    OSSConfig,
    OSSStore,
    _Credentials,
    credential_source,
    open_oss,
)

ENV = {"OSS_REGION": "cn-hangzhou", "OSS_BUCKET": "logs", "OSS_ENDPOINT": "oss.example:80"}


def test_from_env() -> None:
    config = OSSConfig.from_sources(ENV, None)
    assert config == OSSConfig(bucket="logs", region="cn-hangzhou", endpoint="oss.example:80")
    assert backend_config(storage_settings("AliyunOSS", env=ENV)) == config


def test_the_json_config_replaces_every_env_var() -> None:
    doc = {"ossRegion": "cn-beijing", "ossBucket": "json-bucket"}
    config = OSSConfig.from_sources(ENV, doc)
    assert config == OSSConfig(bucket="json-bucket", region="cn-beijing", endpoint="")
    assert OSSConfig.from_sources(ENV, {}).bucket == "logs"  # {} counts as no file


@pytest.mark.parametrize(
    ("env", "doc", "error"),
    [
        ({"OSS_REGION": "cn-hangzhou"}, None, "needs a bucket: set OSS_BUCKET"),
        ({"OSS_BUCKET": "b"}, None, "needs a region: set OSS_REGION"),
        (ENV, {"ossBucket": "b"}, "ossRegion"),
        (ENV, {"ossBucket": 1, "ossRegion": "r"}, "must be a string"),
    ],
)
def test_bucket_and_region_are_required(
    env: dict[str, str], doc: dict[str, Any] | None, error: str
) -> None:
    with pytest.raises(StorageError, match=error):
        OSSConfig.from_sources(env, doc)


RRSA_ENV = {
    "ALIBABA_CLOUD_ROLE_ARN": "acs:ram::1:role/r",
    "ALIBABA_CLOUD_OIDC_PROVIDER_ARN": "acs:ram::1:oidc-provider/p",
    "ALIBABA_CLOUD_OIDC_TOKEN_FILE": "/var/run/secrets/token",
}


def test_credentials_are_rrsa_unless_local_test() -> None:
    rrsa = OSSConfig.from_sources({**ENV, **RRSA_ENV}, None)
    assert not rrsa.local_test
    assert rrsa.role_arn == RRSA_ENV["ALIBABA_CLOUD_ROLE_ARN"]
    assert isinstance(credential_source(rrsa), OIDCRoleArnCredentialsProvider)
    local = OSSConfig.from_sources({**ENV, "LOCAL_TEST": "true"}, None)
    assert isinstance(credential_source(local), DefaultCredentialsProvider)


async def test_without_rrsa_env_opening_fails_with_the_reason() -> None:
    with pytest.raises(StorageError, match="ALIBABA_CLOUD_ROLE_ARN"):
        await open_oss(OSSConfig.from_sources(ENV, None))


async def test_the_client_gets_the_region_endpoint_and_fetched_credentials() -> None:
    source = StaticAKCredentialsProvider(access_key_id="ak", access_key_secret="sk")
    store = await open_oss(OSSConfig.from_sources(ENV, None), credentials_source=source)
    try:
        assert isinstance(store, OSSStore)
        config = store._client._client._config  # the SDK's own Config
        assert config.region == "cn-hangzhou"
        assert config.endpoint == "oss.example:80"
        credentials = config.credentials_provider
        assert isinstance(credentials, _Credentials)
        await credentials.refresh()
        fetched = credentials.get_credentials()
        assert (fetched.access_key_id, fetched.access_key_secret) == ("ak", "sk")
    finally:
        await store.close()


def _service_error(status: int, code: str) -> Exception:
    fields = ("message", "request_id", "ec", "timestamp", "request_target")
    return oss.exceptions.ServiceError(
        status_code=status, code=code, **{name: "-" for name in fields}
    )


def test_service_errors_map_to_not_found() -> None:
    store = OSSStore(client=None, bucket="b")  # type: ignore[arg-type]
    missing = oss.exceptions.OperationError(
        name="GetObject",
        error=_service_error(404, "NoSuchKey"),
    )
    assert isinstance(store._fail("get", "k", missing), NotFound)
    denied = oss.exceptions.OperationError(
        name="GetObject",
        error=_service_error(403, "AccessDenied"),
    )
    failure = store._fail("get", "k", denied)
    assert isinstance(failure, StorageError) and not isinstance(failure, NotFound)
