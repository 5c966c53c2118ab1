"""Choosing and opening a storage backend the way KubeRay's collector and server do.

``STORAGE_BACKEND`` (or ``--storage-backend``), lowercased, names the backend: KubeRay's
``s3``, ``gcs``, ``azureblob`` and ``aliyunoss``, plus our ``local`` directory. A JSON
config file (``STORAGE_BACKEND_CONFIG_PATH`` / ``--storage-backend-config-path``) replaces
the backend's env vars by its own keys (each backend module's docstring says which; a
``{}`` file counts as none, as in KubeRay). ``STORAGE_ROOT_DIR`` (``--storage-root-dir``)
puts every key under a root dir (:mod:`.rooted`). A backend module, and so its client
library, is imported only when that backend is opened; a missing library is a
``StorageError`` naming the extra to install.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from kuberay.historyserver.storage.base import ObjectStore
from kuberay.historyserver.storage.errors import StorageError
from kuberay.historyserver.storage.rooted import RootedStore, root_head


@attrs.frozen
class Backend:
    """One backend: its module, config class and opener, and the extra providing its
    client library (``None``: nothing to install)."""

    module: str
    config_class: str
    opener: str
    extra: str | None
    packages: str = ""


BACKENDS: Mapping[str, Backend] = {
    "local": Backend("kuberay.historyserver.storage.local", "LocalConfig", "open_local", None),
    "s3": Backend(
        "kuberay.historyserver.storage.s3", "S3Config", "open_s3", "history-s3", "aiobotocore"
    ),
    "gcs": Backend(
        "kuberay.historyserver.storage.gcs",
        "GCSConfig",
        "open_gcs",
        "history-gcs",
        "gcloud-aio-storage",
    ),
    "azureblob": Backend(
        "kuberay.historyserver.storage.azure",
        "AzureConfig",
        "open_azure",
        "history-azure",
        "azure-storage-blob and azure-identity",
    ),
    "aliyunoss": Backend(
        "kuberay.historyserver.storage.oss",
        "OSSConfig",
        "open_oss",
        "history-oss",
        "alibabacloud-oss-v2 and alibabacloud-credentials",
    ),
}


@attrs.frozen
class StorageSettings:
    """Everything needed to open a store: the backend's name, the root dir, the env the
    backend reads, and the JSON config file's content (``None``: no file)."""

    backend: str
    root_dir: str = ""
    env: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    document: Mapping[str, Any] | None = attrs.field(default=None, repr=False)


def load_config_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON object in ``path``; ``StorageError`` when unreadable or not an object."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise StorageError(f"cannot read the storage backend config {str(path)!r}: {exc}") from exc
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise StorageError(f"storage backend config {str(path)!r} is not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise StorageError(f"storage backend config {str(path)!r} is not a JSON object")
    return document


def storage_settings(
    backend: str | None = None,
    *,
    root_dir: str | None = None,
    config_path: str | None = None,
    env: Mapping[str, str] | None = None,
) -> StorageSettings:
    """Settings from flags (the arguments) over their env vars (``STORAGE_BACKEND``,
    ``STORAGE_ROOT_DIR``, ``STORAGE_BACKEND_CONFIG_PATH``); ``StorageError`` for a missing
    or unknown backend or an unreadable config file."""
    environ: Mapping[str, str] = dict(os.environ) if env is None else env
    name = (backend or environ.get("STORAGE_BACKEND", "")).strip().lower()
    if not name:
        raise StorageError(
            f"no storage backend: set STORAGE_BACKEND (or --storage-backend) to one of "
            f"{', '.join(BACKENDS)}"
        )
    if name not in BACKENDS:
        raise StorageError(f"unknown storage backend {name!r}: use one of {', '.join(BACKENDS)}")
    root = environ.get("STORAGE_ROOT_DIR", "") if root_dir is None else root_dir
    path = environ.get("STORAGE_BACKEND_CONFIG_PATH", "") if config_path is None else config_path
    document = load_config_file(path) if path else None
    return StorageSettings(backend=name, root_dir=root, env=environ, document=document)


def backend_module(name: str) -> Any:
    """The backend's module, imported now; ``StorageError`` naming the extra to install
    when its client library is missing."""
    backend = BACKENDS[name]
    try:
        return importlib.import_module(backend.module)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("kuberay"):
            raise
        raise StorageError(
            f"the {name} storage backend needs {backend.packages} (missing module "
            f"{exc.name!r}): pip install 'kuberay[{backend.extra}]'"
        ) from exc


def backend_config(settings: StorageSettings) -> Any:
    """The backend's parsed config (its ``*Config.from_sources``)."""
    module = backend_module(settings.backend)
    config_class = getattr(module, BACKENDS[settings.backend].config_class)
    return config_class.from_sources(settings.env, settings.document)


async def open_store(settings: StorageSettings) -> ObjectStore:
    """The opened store (bucket or container created where the backend does that), under
    the root dir when one is set. Close it with ``await store.close()``."""
    config = backend_config(settings)
    opener = getattr(backend_module(settings.backend), BACKENDS[settings.backend].opener)
    store: ObjectStore = await opener(config)
    head = root_head(settings.root_dir)
    if settings.backend == "local":
        head = head.lstrip("/")  # a directory tree has no key with a leading '/'
    return RootedStore(store, head) if head else store
