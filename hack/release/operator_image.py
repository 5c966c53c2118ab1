"""The operator image's recipe as data (hack/release/images.py builds it): its tags, config, the
dependencies it installs, what it removes from the rootfs, and the one version every artifact
carries (``kuberay/__init__.py``). The API server's image is the operator's layer with its own
tags and entrypoint (:func:`apiserver_tags`, :func:`apiserver_config`)."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PATH_ENV = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#: A clearly local name (``localhost/``: no registry anyone else owns; a node that lacks it
#: fails to pull instead of pulling someone else's image): manifests/helm values.yaml
OPERATOR_REPOSITORY = "localhost/kuberay-python/operator"
OPERATOR_IMAGE = f"{OPERATOR_REPOSITORY}:latest"
#: the API server's image (manifests/helm/kuberay-apiserver, manifests/apiserver)
APISERVER_REPOSITORY = "localhost/kuberay-python/apiserver"
OPERATOR_ENTRYPOINT = "kuberay-operator"
APISERVER_ENTRYPOINT = "kuberay-apiserver"
OPERATOR_VENV = "/opt/kuberay"
OPERATOR_USER = "kuberay"
OPERATOR_HOME = "/home/kuberay"
# 2: the slim image (Debian minbase + python3 + the package; no Ray); 4: dependencies from
# requirements/runtime.lock (exact pins, --no-deps), the rootfs's dpkg status kept for the SBOM
OPERATOR_RECIPE_VERSION = "4"
#: removed from the operator image's rootfs (globs relative to it)
SLIM_PATHS = (
    "usr/share/doc/*",
    "usr/share/man/*",
    "usr/share/info/*",
    "usr/share/locale/*",
    "usr/share/lintian",
    "usr/lib/x86_64-linux-gnu/gconv",
    "usr/lib/x86_64-linux-gnu/perl-base",
    "usr/lib/x86_64-linux-gnu/perl",
    "usr/share/perl5",
    "usr/bin/perl*",
    "var/lib/dpkg/info/*",
    "var/cache/debconf/*",
    "var/log/*",
    "usr/lib/python3.11/test",
    "usr/lib/python3.11/idlelib",
    "usr/lib/python3.11/tkinter",
    "usr/lib/python3.11/turtledemo",
    "usr/lib/python3.11/lib2to3",
    "usr/lib/python3.11/pydoc_data",
    "usr/lib/python3.11/ensurepip",
    "usr/bin/apt*",
    "usr/lib/apt",
    "usr/lib/x86_64-linux-gnu/libapt-*",
    "etc/apt",
    "var/lib/apt",
    "var/cache/apt",
    "opt/kuberay/lib/python3.11/site-packages/pip",
    "opt/kuberay/lib/python3.11/site-packages/pip-*",
    "opt/kuberay/lib/python3.11/site-packages/setuptools",
    "opt/kuberay/lib/python3.11/site-packages/setuptools-*",
    "opt/kuberay/lib/python3.11/site-packages/pkg_resources",
    "opt/kuberay/lib/python3.11/site-packages/_distutils_hack",
    "opt/kuberay/lib/python3.11/site-packages/distutils-precedence.pth",
    "opt/kuberay/bin/pip*",
)
#: dependencies the operator image leaves out: kubernetes-asyncio (48 MiB with its compiled
#: models), which only tests use (kuberay.kube.kubeconfig loads every kubeconfig, exec
#: plugins included, itself)
IMAGE_OMITTED_DEPENDENCIES = ("kubernetes-asyncio",)


def operator_dependencies(root: Path = REPO) -> list[str]:
    """pyproject.toml's dependencies the operator image installs (requirement strings)."""
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    omitted = {name.lower() for name in IMAGE_OMITTED_DEPENDENCIES}
    return [
        dep
        for dep in project["dependencies"]
        if re.split(r"[\s<>=!~;\[]", dep, maxsplit=1)[0].lower() not in omitted
    ]


def package_version(root: Path = REPO) -> str:
    """``kuberay.__version__`` (read, not imported): the one version of every artifact."""
    text = (root / "kuberay" / "__init__.py").read_text()
    match = re.search(r'^__version__ = "([^"]+)"', text, flags=re.MULTILINE)
    assert match, "kuberay/__init__.py has no __version__"
    return match.group(1)


def operator_tags() -> tuple[str, ...]:
    """The operator image's tags: the chart's default (``:<appVersion>``) and ``:latest``."""
    return (f"{OPERATOR_REPOSITORY}:{package_version()}", f"{OPERATOR_REPOSITORY}:latest")


def apiserver_tags() -> tuple[str, ...]:
    """The API server image's tags: the chart's default (``:<appVersion>``) and ``:latest``."""
    return (f"{APISERVER_REPOSITORY}:{package_version()}", f"{APISERVER_REPOSITORY}:latest")


def operator_config(entrypoint: str = OPERATOR_ENTRYPOINT) -> dict[str, object]:
    """Non-root (1000:1000), the venv on PATH, ``entrypoint`` (``kuberay-operator``) as the
    entrypoint and no Cmd (a Deployment's ``args`` are its flags)."""
    return {
        "Env": [
            f"PATH={OPERATOR_VENV}/bin:{PATH_ENV}",
            f"HOME={OPERATOR_HOME}",
            "LANG=C.UTF-8",
            "PYTHONUNBUFFERED=1",
            "PYTHONDONTWRITEBYTECODE=1",  # a read-only root filesystem: compiled at build
        ],
        "Entrypoint": [entrypoint],
        "User": "1000:1000",
        "WorkingDir": OPERATOR_HOME,
    }


def apiserver_config() -> dict[str, object]:
    """The operator image's config with ``kuberay-apiserver`` as the entrypoint."""
    return operator_config(APISERVER_ENTRYPOINT)


def _slim(rootfs: Path) -> None:
    """Drop what a Python service never reads: docs, man pages, locales, Debian's package
    manager state, perl, pip and the interpreter's test/IDE modules."""
    for rel in SLIM_PATHS:
        for path in rootfs.glob(rel):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
