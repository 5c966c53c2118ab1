"""The dashboard's page names every module ``main.js`` can import as a ``modulepreload``, so
the browser asks for them all at once instead of one import level at a time (four levels:
main, detail-view, history-view, why-view), and names no module that is not there."""

from __future__ import annotations

import re

from kuberay.apiserver.dashboard.assets import STATIC_DIR

PRELOAD = re.compile(r'<link rel="modulepreload" href="([^"]+)">')
IMPORT = re.compile(r'^import .* from "\./([^"]+)";$', re.MULTILINE)


def _reachable(start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        for found in IMPORT.findall((STATIC_DIR / name).read_text()):
            if found not in seen:
                seen.add(found)
                todo.append(found)
    return seen


def test_every_module_main_imports_is_preloaded_and_every_preload_exists() -> None:
    page = (STATIC_DIR / "index.html").read_text()
    preloaded = PRELOAD.findall(page)
    assert len(preloaded) == len(set(preloaded))
    reachable = _reachable("main.js")
    assert "why-view.js" in reachable  # four import levels down: the walk follows them
    assert set(preloaded) == reachable
