"""Object storage for the history server: the ``ObjectStore`` interface, its errors, and one
module per backend (imported lazily by ``open_store`` so that a backend's client library is
needed only when that backend is used)."""

from kuberay.historyserver.storage.base import ListResult, ObjectInfo, ObjectStore
from kuberay.historyserver.storage.errors import NotFound, StorageError

__all__ = ["ListResult", "NotFound", "ObjectInfo", "ObjectStore", "StorageError"]
