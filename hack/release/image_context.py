"""What an image build copies from the repository (hack/release/images.py's build context).

:func:`context_files` lists the files under the ``include`` roots, minus everything matching
:data:`IGNORE` (a pattern matches any path component, as ``**/<pattern>`` in a
``.dockerignore`` would): never a virtualenv, VCS data, the local run directory, caches or build
output, so an image holds what ``pip install`` of the project needs and nothing of this
machine's state.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: the operator image's build context: the project metadata, the lock of its dependencies
#: (hack/release/lock.py) and the package
OPERATOR_CONTEXT = (
    "pyproject.toml",
    "README.md",
    "LICENSE",
    "requirements/runtime.lock",
    "kuberay",
)
IGNORE = (
    ".git",
    ".venv",
    "venv",
    ".run",
    "__pycache__",
    "*.pyc",
    "*.pyo",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    "*.egg-info",
    "dist",
    "build",
    ".DS_Store",
    "*.swp",
    "*~",
)


def ignored(relative: Path) -> bool:
    """Whether a path (relative to the context root) is left out."""
    return any(fnmatch.fnmatch(part, pattern) for part in relative.parts for pattern in IGNORE)


def context_files(root: Path = REPO, include: Iterable[str] = OPERATOR_CONTEXT) -> list[Path]:
    """The files an image build copies, sorted (absolute paths under ``root``)."""
    files: list[Path] = []
    for name in include:
        top = root / name
        if top.is_file() and not ignored(top.relative_to(root)):
            files.append(top)
        elif top.is_dir():
            files += [
                p
                for p in top.rglob("*")
                if p.is_file() and not p.is_symlink() and not ignored(p.relative_to(root))
            ]
    return sorted(files)
