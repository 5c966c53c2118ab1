"""Choosing and opening a backend: names, flags over env, the JSON config file, the root
dir, and the error naming the extra to install when a client library is missing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kuberay.historyserver.storage import StorageError
from kuberay.historyserver.storage.config import (
    BACKENDS,
    backend_config,
    open_store,
    storage_settings,
)
from kuberay.historyserver.storage.local import LocalStore
from kuberay.historyserver.storage.rooted import RootedStore, go_clean, root_head
from kuberay.historyserver.storage.s3 import S3Config


def test_backend_names_are_kuberays_lowercased_plus_local() -> None:
    assert set(BACKENDS) == {"s3", "gcs", "azureblob", "aliyunoss", "local"}
    assert storage_settings(env={"STORAGE_BACKEND": "S3"}).backend == "s3"
    assert storage_settings(" AzureBlob ", env={}).backend == "azureblob"
    # the flag wins over the env var
    assert storage_settings("gcs", env={"STORAGE_BACKEND": "s3"}).backend == "gcs"


@pytest.mark.parametrize("name", ["", "localtest", "minio"])
def test_a_missing_or_unknown_backend_is_an_error(name: str) -> None:
    with pytest.raises(StorageError, match="s3, gcs, azureblob, aliyunoss"):
        storage_settings(env={"STORAGE_BACKEND": name})


def test_root_dir_and_config_path_come_from_flags_or_env(tmp_path: Path) -> None:
    path = tmp_path / "storage.json"
    path.write_text(json.dumps({"s3Bucket": "from-file"}))
    env = {
        "STORAGE_BACKEND": "s3",
        "STORAGE_ROOT_DIR": "env-root",
        "STORAGE_BACKEND_CONFIG_PATH": str(path),
    }
    settings = storage_settings(env=env)
    assert settings.root_dir == "env-root"
    assert settings.document == {"s3Bucket": "from-file"}
    assert backend_config(settings).bucket == "from-file"
    flagged = storage_settings(root_dir="flag-root", config_path="", env=env)
    assert flagged.root_dir == "flag-root"
    assert flagged.document is None
    assert backend_config(flagged).bucket == "ray-historyserver"


@pytest.mark.parametrize(
    ("content", "error"),
    [(None, "cannot read"), ("{not json", "not JSON"), ("[1, 2]", "not a JSON object")],
)
def test_a_bad_config_file_is_an_error(tmp_path: Path, content: str | None, error: str) -> None:
    path = tmp_path / "storage.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(StorageError, match=error):
        storage_settings("s3", config_path=str(path), env={})


def test_the_json_file_replaces_the_backend_env_vars(tmp_path: Path) -> None:
    path = tmp_path / "storage.json"
    path.write_text(json.dumps({"s3Bucket": "b", "s3ForcePathStyle": "true"}))
    env = {"S3_ENDPOINT": "http://env:9000", "S3_REGION": "env-region", "S3DISABLE_SSL": "true"}
    config = backend_config(storage_settings("s3", config_path=str(path), env=env))
    assert config == S3Config(bucket="b", force_path_style=True)


def test_a_missing_client_library_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "kuberay.historyserver.storage.s3", raising=False)
    monkeypatch.setitem(sys.modules, "aiobotocore", None)
    monkeypatch.setitem(sys.modules, "aiobotocore.config", None)
    with pytest.raises(StorageError) as caught:
        backend_config(storage_settings("s3", env={}))
    assert "pip install 'kuberay[history-s3]'" in str(caught.value)
    assert "aiobotocore" in str(caught.value)


def test_the_operator_and_the_storage_package_import_no_client_library() -> None:
    """The backends are imported lazily: importing the storage package (what the collector
    and server do first) pulls in none of the cloud SDKs."""
    import subprocess

    code = (
        "import sys, kuberay.historyserver.storage, kuberay.historyserver.storage.config;"
        "bad = [m for m in ('aiobotocore', 'botocore', 'gcloud', 'azure', "
        "'alibabacloud_oss_v2') if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("path", "cleaned"),
    [
        ("", "."),
        (".", "."),
        ("a//b/", "a/b"),
        ("/a/", "/a"),
        ("a/./b/../c", "a/c"),
        ("../a", "../a"),
        ("/../a", "/a"),
        ("//", "/"),
    ],
)
def test_go_clean_matches_gos_path_clean(path: str, cleaned: str) -> None:
    assert go_clean(path) == cleaned


def test_root_head_joins_like_path_join() -> None:
    assert root_head("") == ""
    assert root_head("./") == ""
    assert root_head("/") == "/"
    assert root_head("history/") == "history/"
    assert root_head("/history//ray") == "/history/ray/"


async def test_open_store_roots_keys_and_drops_a_leading_slash_for_local(
    tmp_path: Path,
) -> None:
    env = {"LOCAL_STORAGE_DIR": str(tmp_path)}
    store = await open_store(storage_settings("local", root_dir="/hist//root/", env=env))
    assert isinstance(store, RootedStore)
    await store.put("cluster-metadata/raycluster/ns_c/session_1", b"")
    assert (tmp_path / "hist" / "root" / "cluster-metadata" / "raycluster").is_dir()
    assert (await store.list("cluster-metadata/", delimiter=None)).objects[0].key == (
        "cluster-metadata/raycluster/ns_c/session_1"
    )
    await store.close()
    plain = await open_store(storage_settings("local", env=env))
    assert isinstance(plain, LocalStore)
    await plain.close()
