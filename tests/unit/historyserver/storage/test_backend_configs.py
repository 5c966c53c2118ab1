"""Each backend's configuration, read as KubeRay reads it (``historyserver/pkg/storage/*/
config.go``): env vars, and which JSON config keys replace them."""

from __future__ import annotations

from typing import Any

import pytest

from kuberay.historyserver.storage import StorageError
from kuberay.historyserver.storage.azure import AzureConfig
from kuberay.historyserver.storage.gcs import GCSConfig
from kuberay.historyserver.storage.s3 import S3Config

S3_ENV = {
    "S3_BUCKET": "env-bucket",
    "S3_ENDPOINT": "minio:9000",
    "S3_REGION": "eu-west-1",
    "S3FORCE_PATH_STYLE": "true",
    "S3DISABLE_SSL": "true",
    "AWS_ACCESS_KEY_ID": "id",
    "AWS_SECRET_ACCESS_KEY": "secret",
    "AWS_SESSION_TOKEN": "token",
}


def test_s3_from_env() -> None:
    config = S3Config.from_sources(S3_ENV, None)
    assert config == S3Config(
        bucket="env-bucket",
        endpoint="minio:9000",
        region="eu-west-1",
        force_path_style=True,
        disable_ssl=True,
        access_key_id="id",
        secret_access_key="secret",
        session_token="token",
    )
    assert config.endpoint_url() == "http://minio:9000"
    assert "secret" not in repr(config)


def test_s3_defaults_and_flags_other_than_true() -> None:
    config = S3Config.from_sources({"S3FORCE_PATH_STYLE": "True", "S3DISABLE_SSL": "1"}, None)
    assert config.bucket == "ray-historyserver"
    assert config.force_path_style is False  # only the string "true" means true
    assert config.disable_ssl is False
    assert S3Config.from_sources({}, None).force_path_style is None
    assert S3Config(endpoint="s3.example:443").endpoint_url() == "https://s3.example:443"
    assert S3Config(endpoint="http://x:1").endpoint_url() == "http://x:1"
    assert S3Config().endpoint_url() is None


def test_s3_json_replaces_endpoint_region_and_flags_but_not_credentials() -> None:
    doc = {"s3Endpoint": "http://json:9000", "s3DisableSSL": "true"}
    config = S3Config.from_sources(S3_ENV, doc)
    assert config.bucket == "env-bucket"  # S3_BUCKET stays the default for s3Bucket
    assert config.endpoint == "http://json:9000"
    assert config.region == ""  # S3_REGION is ignored once a JSON config is given
    assert config.force_path_style is None  # and so is S3FORCE_PATH_STYLE
    assert config.disable_ssl is True
    assert config.access_key_id == "id"
    assert S3Config.from_sources(S3_ENV, {"s3Bucket": "json-bucket"}).bucket == "json-bucket"
    # an empty JSON object counts as no config file, as in KubeRay (len(jd) == 0)
    assert S3Config.from_sources(S3_ENV, {}).region == "eu-west-1"


def test_s3_json_values_must_be_strings() -> None:
    with pytest.raises(StorageError, match="s3Bucket"):
        S3Config.from_sources({}, {"s3Bucket": 3})
    assert S3Config.from_sources({}, {"s3ForcePathStyle": True}).force_path_style is True


def test_gcs_bucket_from_json_then_env_and_no_default() -> None:
    assert GCSConfig.from_sources({"GCS_BUCKET": "env"}, None).bucket == "env"
    assert GCSConfig.from_sources({"GCS_BUCKET": "env"}, {"gcsBucket": "json"}).bucket == "json"
    assert GCSConfig.from_sources({"GCS_BUCKET": "env"}, {"other": 1}).bucket == "env"
    with pytest.raises(StorageError, match="GCS_BUCKET"):
        GCSConfig.from_sources({}, None)


def test_gcs_emulator_host() -> None:
    env = {"GCS_BUCKET": "b", "STORAGE_EMULATOR_HOST": "127.0.0.1:4443"}
    assert GCSConfig.from_sources(env, None).emulator_host == "http://127.0.0.1:4443"
    env["STORAGE_EMULATOR_HOST"] = "http://localhost:1"
    assert GCSConfig.from_sources(env, None).emulator_host == "http://localhost:1"
    assert GCSConfig.from_sources({"GCS_BUCKET": "b"}, None).emulator_host == ""


AZURE_ENV = {
    "AZURE_STORAGE_CONNECTION_STRING": "UseDevelopmentStorage=true",
    "AZURE_STORAGE_ACCOUNT_URL": "https://acct.blob.core.windows.net",
    "AZURE_STORAGE_CONTAINER": "env-container",
    "AZURE_STORAGE_AUTH_MODE": " Workload_Identity ",
}


def test_azure_from_env_and_json_overrides() -> None:
    config = AzureConfig.from_sources(AZURE_ENV, None)
    assert config == AzureConfig(
        container="env-container",
        connection_string="UseDevelopmentStorage=true",
        account_url="https://acct.blob.core.windows.net",
        auth_mode="workload_identity",
    )
    doc: dict[str, Any] = {"azureContainer": "c2", "azureAuthMode": "bogus", "azureAccountURL": 5}
    overridden = AzureConfig.from_sources(AZURE_ENV, doc)
    assert overridden.container == "c2"
    assert overridden.auth_mode == ""  # unknown: auto-detect
    assert overridden.account_url == AZURE_ENV["AZURE_STORAGE_ACCOUNT_URL"]  # not a string
    assert AzureConfig.from_sources({}, None).container == "ray-historyserver"


@pytest.mark.parametrize(
    ("fields", "mode"),
    [
        ({"connection_string": "cs", "account_url": "https://a"}, "connection_string"),
        ({"account_url": "https://a"}, "default"),
        ({"account_url": "https://a", "auth_mode": "workload_identity"}, "workload_identity"),
        (
            {"connection_string": "cs", "account_url": "https://a", "auth_mode": "default"},
            "default",
        ),
    ],
)
def test_azure_auth_mode_resolution(fields: dict[str, str], mode: str) -> None:
    """Auto mode: a connection string wins over an account URL (KubeRay's
    createAzureBlobClient)."""
    assert AzureConfig(**fields).resolved_mode() == mode


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({}, "either AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT_URL"),
        (
            {"auth_mode": "connection_string", "account_url": "https://a"},
            "needs AZURE_STORAGE_CONN",
        ),
        ({"auth_mode": "workload_identity", "connection_string": "cs"}, "needs AZURE_STORAGE_ACC"),
    ],
)
def test_azure_auth_mode_errors(fields: dict[str, str], error: str) -> None:
    with pytest.raises(StorageError, match=error):
        AzureConfig(**fields).resolved_mode()
