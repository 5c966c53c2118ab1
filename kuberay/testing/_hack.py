"""The source checkout's ``hack/`` scripts that the control plane drives, imported by path.

``hack/`` is not a package (its files are scripts run as ``python hack/NAME.py``), and
``import build`` could pick up PyPI's ``build``: each module is loaded once from its file
under a private name (``kuberay_hack_<stem>``) that ``hack/run.py`` shares.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HACK = Path(__file__).resolve().parents[2] / "hack"

# stem -> file under hack/ (grouped by purpose)
SCRIPTS = {
    "build": "build/build.py",
    "object_store": "cluster/object_store.py",
    "history_server": "cluster/history_server.py",
    "realnode": "cluster/realnode.py",
}


def load(stem: str) -> ModuleType:
    """Import ``hack/<SCRIPTS[stem]>`` (once); raise ``FileNotFoundError`` outside a checkout."""
    name = f"kuberay_hack_{stem}"
    if name in sys.modules:
        return sys.modules[name]
    path = HACK / SCRIPTS[stem]
    if not path.is_file():
        raise FileNotFoundError(f"{path}: kuberay.testing.envtest needs a source checkout")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
