"""Opening the configured object store.

The backends live in ``kuberay.historyserver.storage`` (another module's work); this adapter
is the collector's only dependency on them. Expected there::

    # kuberay/historyserver/storage/config.py
    async def open_store(
        backend: str,                       # "s3", "gcs", "azureblob", "aliyunoss", "local"
        *,
        config: Mapping[str, Any] | None,   # the parsed --storage-backend-config-path JSON
                                            # (KubeRay's s3Bucket, gcsBucket, ... keys), or None
        environ: Mapping[str, str],         # S3_BUCKET, GCS_BUCKET, AZURE_STORAGE_*, OSS_* ...
    ) -> ObjectStore

raising ``StorageError`` (or ``ValueError`` for bad settings). ``STORAGE_ROOT_DIR`` is not
passed: it is part of every key (``layout.Layout.root``), as in KubeRay.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from kuberay.historyserver.collector.config import CollectorOptions, ConfigError
from kuberay.historyserver.storage.base import ObjectStore
from kuberay.historyserver.storage.errors import StorageError


def read_backend_config(path: str) -> dict[str, Any] | None:
    """The JSON object in ``path`` (``None`` for ``""``); ``ConfigError`` when unreadable."""
    if not path:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"failed to read storage backend config from {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"storage backend config {path} must hold a JSON object")
    return data


async def open_configured_store(
    options: CollectorOptions, environ: Mapping[str, str]
) -> ObjectStore:
    """The store the options name, opened through ``storage.config.open_store``."""
    config = read_backend_config(options.storage_backend_config_path)
    try:
        module = importlib.import_module("kuberay.historyserver.storage.config")
    except ImportError as exc:
        raise ConfigError(f"storage backends are not available: {exc}") from None
    try:
        store = await module.open_store(options.storage_backend, config=config, environ=environ)
    except (StorageError, ValueError) as exc:
        raise ConfigError(f"cannot open the {options.storage_backend} store: {exc}") from None
    return cast(ObjectStore, store)
