"""Opening the configured object store: the collector's only dependency on the backends.

The backend, its env vars and the JSON config file (``--storage-backend-config-path``) go to
``storage.config``; the storage root dir does not: the collector's ``layout.Layout`` puts
``STORAGE_ROOT_DIR`` into every key itself (as KubeRay's collector joins it), so the store
is opened without a root of its own.
"""

from __future__ import annotations

from collections.abc import Mapping

from kuberay.historyserver.collector.config import CollectorOptions, ConfigError
from kuberay.historyserver.storage.base import ObjectStore
from kuberay.historyserver.storage.config import open_store, storage_settings
from kuberay.historyserver.storage.errors import StorageError


async def open_configured_store(
    options: CollectorOptions, environ: Mapping[str, str]
) -> ObjectStore:
    """The store the options name; ``ConfigError`` (one line) when it cannot be opened."""
    try:
        settings = storage_settings(
            options.storage_backend,
            root_dir="",
            config_path=options.storage_backend_config_path,
            env=environ,
        )
        return await open_store(settings)
    except (StorageError, ValueError) as exc:
        raise ConfigError(f"cannot open the {options.storage_backend} store: {exc}") from None
