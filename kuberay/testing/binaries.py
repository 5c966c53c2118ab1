"""Where :class:`~kuberay.testing.envtest.ControlPlane` finds its component binaries.

Looked up, in order, as controller-runtime's envtest does and then as this project does:

1. ``$KUBEBUILDER_ASSETS``: a directory holding ``etcd`` and ``kube-apiserver`` (what
   ``setup-envtest use -p path`` prints, or a copy of this project's cache directory);
2. the project's cache, :func:`cache_dir`: ``$KUBERAY_BIN_CACHE/<KUBERNETES_VERSION>``,
   default ``~/.cache/kuberay/bin/<KUBERNETES_VERSION>/``, which ``hack/build/build.py``
   fills from Go modules;
3. with ``build=True`` and a source checkout (:mod:`kuberay.testing.checkout`), a build into
   that cache by ``hack/build/build.py``.

A binary found in none of them raises :class:`BuildError`, its message naming the places
looked at and how to provide the binary.
"""

from __future__ import annotations

import os
from pathlib import Path

from kuberay.testing.checkout import checkout_root, import_hack

__all__ = [
    "ASSETS_ENV",
    "KUBERNETES_VERSION",
    "BuildError",
    "binary_path",
    "cache_dir",
    "find_binary",
    "locate",
]

#: the Kubernetes version the control plane is pinned to (and ``hack/build/build.py`` builds)
KUBERNETES_VERSION = "v1.36.3"
#: controller-runtime's variable: a directory holding etcd and kube-apiserver
ASSETS_ENV = "KUBEBUILDER_ASSETS"


class BuildError(Exception):
    """A binary could not be found or built; the message is one line for the user."""


def cache_dir() -> Path:
    """Where binaries for the pinned Kubernetes version are kept (may not exist)."""
    base = os.environ.get("KUBERAY_BIN_CACHE") or str(Path.home() / ".cache" / "kuberay" / "bin")
    return Path(base) / KUBERNETES_VERSION


def binary_path(name: str) -> Path:
    """Path of binary ``name`` in :func:`cache_dir` (may not exist yet)."""
    return cache_dir() / name


def find_binary(name: str) -> Path | None:
    """Binary ``name`` from ``$KUBEBUILDER_ASSETS``, else from :func:`cache_dir`; None when
    neither holds it. Builds nothing."""
    assets = os.environ.get(ASSETS_ENV)
    candidates = [Path(assets).expanduser() / name] if assets else []
    candidates.append(binary_path(name))
    return next((path for path in candidates if path.is_file()), None)


def locate(name: str, *, build: bool) -> Path:
    """:func:`find_binary`, else (``build=True``, in a checkout) built by
    ``hack/build/build.py``; raises :class:`BuildError` saying where it looked and how to
    get the binary."""
    found = find_binary(name)
    if found is not None:
        return found
    assets = os.environ.get(ASSETS_ENV)
    looked = f"${ASSETS_ENV} ({assets})" if assets else f"${ASSETS_ENV} (unset)"
    missing = f"{name} not found in {looked} nor in {binary_path(name).parent}"
    if checkout_root() is None:
        raise BuildError(
            f"{missing}: set {ASSETS_ENV} to a directory holding etcd and kube-apiserver "
            f"{KUBERNETES_VERSION} (e.g. from setup-envtest), or build them from a source "
            f"checkout with python hack/build/build.py"
        )
    if not build:
        raise BuildError(f"{missing} (run python hack/build/build.py {name})")
    built: dict[str, Path] = import_hack("hack.build.build", f"building {name}").ensure([name])
    return built[name]
