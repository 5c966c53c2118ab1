"""Opening a store against the real servers: buckets and containers are created where
KubeRay creates them (S3, Azure), required where it does not (GCS), and a JSON config file
configures a backend as fully as its env vars."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from kuberay.historyserver.storage import NotFound, StorageError
from kuberay.historyserver.storage.config import open_store, storage_settings
from tests.integration.historyserver.storage.conftest import backend_env


@pytest.mark.parametrize("name", ["s3", "azureblob"])
async def test_a_missing_bucket_or_container_is_created(
    name: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    fresh = f"fresh-{uuid.uuid4().hex[:12]}"
    env = backend_env(name, request, tmp_path)
    env["S3_BUCKET" if name == "s3" else "AZURE_STORAGE_CONTAINER"] = fresh
    for _ in range(2):  # the second open finds it there
        store = await open_store(storage_settings(name, env=env))
        try:
            await store.put("k", b"v")
            assert await store.get("k") == b"v"
        finally:
            await store.close()


async def test_a_missing_gcs_bucket_is_not_found(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    env = backend_env("gcs", request, tmp_path)
    env["GCS_BUCKET"] = f"missing-{uuid.uuid4().hex[:12]}"
    with pytest.raises(NotFound, match="does not exist"):
        await open_store(storage_settings("gcs", env=env))


async def test_s3_configured_by_a_json_config_file(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """KubeRay's JSON keys (string flags) against moto, with no S3_* env but the keys."""
    endpoint = request.getfixturevalue("moto_endpoint")
    path = tmp_path / "storage.json"
    path.write_text(
        json.dumps(
            {
                "s3Bucket": f"json-{uuid.uuid4().hex[:12]}",
                "s3Endpoint": endpoint.removeprefix("http://"),
                "s3Region": "us-east-1",
                "s3ForcePathStyle": "true",
                "s3DisableSSL": "true",
            }
        )
    )
    env = {
        "AWS_ACCESS_KEY_ID": "contract-test",
        "AWS_SECRET_ACCESS_KEY": "contract-test",
        "S3_ENDPOINT": "http://127.0.0.1:1",  # ignored once a JSON config is given
        "STORAGE_BACKEND": "S3",
        "STORAGE_BACKEND_CONFIG_PATH": str(path),
        "STORAGE_ROOT_DIR": "history",
    }
    store = await open_store(storage_settings(env=env))
    try:
        await store.put("cluster-metadata/raycluster/default_c/session_x", b"")
        page = await store.list("cluster-metadata/", delimiter=None)
        assert [o.key for o in page.objects] == ["cluster-metadata/raycluster/default_c/session_x"]
    finally:
        await store.close()


async def test_an_unreachable_s3_endpoint_is_a_storage_error(tmp_path: Path) -> None:
    env = {
        "S3_ENDPOINT": "http://127.0.0.1:1",
        "S3_REGION": "us-east-1",
        "S3FORCE_PATH_STYLE": "true",
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
    }
    with pytest.raises(StorageError, match="ray-historyserver"):
        await open_store(storage_settings("s3", env=env))
