"""The adapter to ``storage.config.open_store`` (the expected signature)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from kuberay.historyserver.collector.config import ConfigError, parse_options
from kuberay.historyserver.collector.store import open_configured_store
from tests.unit.historyserver.memstore import MemoryStore


async def test_open_store_gets_backend_parsed_config_and_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, Any, Any]] = []
    store = MemoryStore()

    async def open_store(backend: str, *, config: Any, environ: Any) -> MemoryStore:
        calls.append((backend, config, environ))
        return store

    module = types.ModuleType("kuberay.historyserver.storage.config")
    module.open_store = open_store  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kuberay.historyserver.storage.config", module)
    cfg = tmp_path / "backend.json"
    cfg.write_text(json.dumps({"s3Bucket": "b", "s3Endpoint": "http://127.0.0.1:9000"}))
    env = {
        "RAY_CLUSTER_NAME": "c",
        "STORAGE_BACKEND": "s3",
        "STORAGE_BACKEND_CONFIG_PATH": str(cfg),
    }
    assert await open_configured_store(parse_options([], env), env) is store
    assert calls == [("s3", {"s3Bucket": "b", "s3Endpoint": "http://127.0.0.1:9000"}, env)]

    cfg.write_text("[1]")
    with pytest.raises(ConfigError, match="must hold a JSON object"):
        await open_configured_store(parse_options([], env), env)
