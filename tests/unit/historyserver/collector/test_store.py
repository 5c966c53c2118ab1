"""Opening the configured store: the backend named by the options, with its env and JSON
config file, and no second root dir (the layout puts ``STORAGE_ROOT_DIR`` in every key)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kuberay.historyserver.collector.config import ConfigError, parse_options
from kuberay.historyserver.collector.store import open_configured_store


async def test_local_store_from_json_config_without_a_second_root(tmp_path: Path) -> None:
    cfg = tmp_path / "backend.json"
    cfg.write_text(json.dumps({"localDir": str(tmp_path / "store")}))
    env = {
        "RAY_CLUSTER_NAME": "c",
        "STORAGE_BACKEND": "local",
        "STORAGE_ROOT_DIR": "root",
        "STORAGE_BACKEND_CONFIG_PATH": str(cfg),
    }
    store = await open_configured_store(parse_options([], env), env)
    try:
        await store.put("root/cluster-metadata/raycluster/default_c/s", b"")
    finally:
        await store.close()
    assert (tmp_path / "store" / "root" / "cluster-metadata" / "raycluster" / "default_c").is_dir()


async def test_bad_config_file_is_one_line_error(tmp_path: Path) -> None:
    cfg = tmp_path / "backend.json"
    cfg.write_text("[1]")
    env = {
        "RAY_CLUSTER_NAME": "c",
        "STORAGE_BACKEND": "s3",
        "STORAGE_BACKEND_CONFIG_PATH": str(cfg),
    }
    with pytest.raises(ConfigError, match="not a JSON object"):
        await open_configured_store(parse_options([], env), env)
