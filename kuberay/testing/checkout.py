"""The kuberay source checkout, for the parts of :mod:`kuberay.testing` that need one.

The etcd + kube-apiserver control plane needs only this package and two binaries
(:mod:`kuberay.testing.binaries`). Building binaries, the full control plane's kwok stages,
the real node and the history server's object store are development scripts under the
checkout's ``hack/`` (a package, not shipped in the wheel): :func:`import_hack` imports them by
their dotted names once :func:`checkout_root` has found a checkout, and raises
:class:`CheckoutNotFound` (what needs it, and how to get one) when there is none.

A checkout is found, in order:

1. ``$KUBERAY_CHECKOUT``: the root of a kuberay clone (it must hold ``hack/__init__.py``);
2. the directory above the imported ``kuberay`` package, when it holds ``hack/__init__.py``
   and ``pyproject.toml`` (an editable install, or a run from the checkout).

An installed wheel has neither, so :func:`checkout_root` returns None there.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType

from kuberay.testing._base import ControlPlaneError

__all__ = ["CHECKOUT_ENV", "CheckoutNotFound", "checkout_root", "import_hack", "require_checkout"]

#: names the root of a kuberay clone to use when the package is not imported from one
CHECKOUT_ENV = "KUBERAY_CHECKOUT"

_PACKAGE_PARENT = Path(__file__).resolve().parents[2]


class CheckoutNotFound(ControlPlaneError):
    """A mode that needs the source checkout's ``hack/`` ran without one (message: what
    needs it and how to provide it)."""


def _is_checkout(path: Path) -> bool:
    return (path / "hack" / "__init__.py").is_file()


def checkout_root() -> Path | None:
    """The root of the kuberay checkout in use, or None (an installed wheel, no
    ``$KUBERAY_CHECKOUT``). A ``$KUBERAY_CHECKOUT`` without ``hack/__init__.py`` raises
    :class:`CheckoutNotFound` rather than being ignored."""
    configured = os.environ.get(CHECKOUT_ENV)
    if configured:
        root = Path(configured).expanduser().resolve()
        if not _is_checkout(root):
            raise CheckoutNotFound(f"${CHECKOUT_ENV}={configured}: no hack/__init__.py there")
        return root
    if _is_checkout(_PACKAGE_PARENT) and (_PACKAGE_PARENT / "pyproject.toml").is_file():
        return _PACKAGE_PARENT
    return None


def require_checkout(what: str) -> Path:
    """:func:`checkout_root`, or :class:`CheckoutNotFound` naming ``what`` needs it."""
    root = checkout_root()
    if root is None:
        raise CheckoutNotFound(
            f"{what} needs the kuberay source checkout's hack/ scripts, which the installed "
            f"package ({_PACKAGE_PARENT / 'kuberay'}) does not include: clone this project's "
            f"source repository and set ${CHECKOUT_ENV} to its root (or install it editable, "
            f"pip install -e '<checkout>[testing]'). Without a checkout only ControlPlane() "
            f"with etcd and kube-apiserver works (binaries from $KUBEBUILDER_ASSETS)"
        )
    return root


def import_hack(module: str, what: str) -> ModuleType:
    """Import ``module`` (a dotted name under ``hack``, e.g. ``hack.cluster.realnode``) from
    the checkout; ``what`` (the mode that needs it) goes into the :class:`CheckoutNotFound`
    raised without one.

    The checkout's root is appended to ``sys.path`` when it is not there yet (appended, so
    the ``kuberay`` already imported keeps precedence); a ``hack`` imported from elsewhere
    raises ``ImportError``."""
    root = require_checkout(what)
    if str(root) not in sys.path:
        sys.path.append(str(root))
    loaded = importlib.import_module(module)
    origin = Path(getattr(loaded, "__file__", None) or "").resolve()
    if not origin.is_relative_to(root / "hack"):
        raise ImportError(f"{module} came from {origin}, not from the checkout at {root}")
    return loaded
