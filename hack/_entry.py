"""The old paths of hack/'s scripts, kept working after they moved into folders by purpose.

``hack/NAME.py`` at its old path is a thin entry that calls :func:`forward` with the script's
new place (``hack/build/``, ``hack/cluster/``, ``hack/bench/``, ``hack/release/``,
``hack/docs/``): run as a script it runs that file as ``__main__`` (same flags, same output,
same exit code); imported by name (hack/ on ``sys.path``) or loaded from its path it becomes
that module, so ``import NAME`` keeps finding every name, private ones included.
"""

from __future__ import annotations

import importlib.util
import runpy
import sys
from pathlib import Path
from typing import Any

HACK = Path(__file__).resolve().parent


def forward(namespace: dict[str, Any], relpath: str) -> None:
    """Make the entry whose ``globals()`` is ``namespace`` be ``hack/<relpath>``."""
    name = namespace["__name__"]
    path = HACK / relpath
    if name == "__main__":
        sys.argv[0] = str(path)
        runpy.run_path(str(path), run_name="__main__")
        return
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    registered = sys.modules.get(name)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        if registered is not None:
            sys.modules[name] = registered
        else:
            sys.modules.pop(name, None)
        raise
    if registered is None:  # loaded from its path without registering: not ours to keep
        sys.modules.pop(name, None)
    # a caller that loaded the entry from its path holds the entry module itself
    namespace.update({k: v for k, v in module.__dict__.items() if not k.startswith("__")})
