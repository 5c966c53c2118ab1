"""``DIR/object-store.env`` (hack/cluster/object_store.py): KubeRay's S3 variable names, values a
RayCluster's ``collectorOptions.env`` carries unchanged, read back by our storage config."""

from __future__ import annotations

from pathlib import Path

import pytest

from hack.cluster import object_store
from kuberay.historyserver.storage.config import backend_config, storage_settings

ENDPOINT = "http://10.250.0.1:41234"


def test_env_names_and_values_are_kuberay_s() -> None:
    env = object_store.store_env(ENDPOINT)
    assert env == {
        "STORAGE_BACKEND": "s3",
        "S3_BUCKET": "ray-historyserver",
        "S3_ENDPOINT": ENDPOINT,
        "S3_REGION": "us-east-1",
        "S3FORCE_PATH_STYLE": "true",
        "S3DISABLE_SSL": "true",
        "AWS_ACCESS_KEY_ID": object_store.ACCESS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": object_store.SECRET_ACCESS_KEY,
    }
    assert tuple(env) == object_store.ENV_KEYS


def test_env_file_round_trips_and_is_plain_key_value_lines(tmp_path: Path) -> None:
    env = object_store.store_env(ENDPOINT, "my-bucket")
    text = object_store.env_file_text(env)
    assert text.splitlines() == [f"{k}={v}" for k, v in env.items()]
    assert text.endswith("\n")
    path = tmp_path / object_store.ENV_FILE
    path.write_text("# a comment\n\n" + text)
    assert object_store.read_env_file(path) == env


def test_env_file_values_configure_the_s3_backend() -> None:
    # what a collector given these env vars (and nothing else) opens
    env = object_store.store_env(ENDPOINT)
    settings = storage_settings(env=env)
    assert settings.backend == "s3" and settings.root_dir == "" and settings.document is None
    config = backend_config(settings)
    assert config.bucket == "ray-historyserver"
    assert config.endpoint_url() == ENDPOINT
    assert config.region == "us-east-1"
    assert config.force_path_style is True and config.disable_ssl is True
    assert config.access_key_id == object_store.ACCESS_KEY_ID
    assert config.secret_access_key == object_store.SECRET_ACCESS_KEY


@pytest.mark.parametrize("value", ["a b", "x#y", 'q"', "new\nline", "$HOME"])
def test_values_needing_quotes_are_refused(value: str) -> None:
    with pytest.raises(object_store.ObjectStoreError):
        object_store.env_file_text({"S3_BUCKET": value})


def test_only_plain_http_endpoints() -> None:
    with pytest.raises(object_store.ObjectStoreError):
        object_store.store_env("https://127.0.0.1:1")


@pytest.mark.parametrize("host", ["", "0.0.0.0", "::", "*"])
def test_wildcard_hosts_are_refused(tmp_path: Path, host: str) -> None:
    with pytest.raises(object_store.ObjectStoreError, match="every interface"):
        object_store.ObjectStoreServer(tmp_path, host)


def test_info_endpoint_and_env(tmp_path: Path) -> None:
    info = object_store.ObjectStoreInfo("127.0.0.1", 9, "b", tmp_path / "e.env")
    assert info.endpoint == "http://127.0.0.1:9"
    assert info.env() == object_store.store_env("http://127.0.0.1:9", "b")


def test_controlplane_binds_the_bridge_address_with_a_real_node() -> None:
    from hack import controlplane

    realnode = controlplane._load_realnode()
    assert controlplane.object_store_host(real_node=True) == realnode.NODE_IP
    assert controlplane.object_store_host(real_node=False) == "127.0.0.1"
