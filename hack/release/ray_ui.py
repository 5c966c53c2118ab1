"""Ray's built dashboard UI, taken out of a Ray image built here (``hack/release/images.py``).

Every ``ray`` wheel ships the dashboard's production build under
``ray/dashboard/client/build/`` (``index.html``, ``static/``, ``speedscope-*``). The history
server serves it for stored sessions (``kuberay/historyserver/server/ui_builds.py``); its
image carries the builds of the Ray images built here, one directory per ``major.minor``
under ``/dashboard`` (the default of KubeRay's ``--dashboard-dir``), and tests that load the UI
in a browser take it from the same archives.

The history server ``make run HISTORY_SERVER=1`` starts on the host gets the same builds
from :func:`cached_builds`: taken out of the Ray images once, on demand, into a cache laid out
as the image's ``/dashboard``, and given to it as ``--dashboard-ui-dir``.

Usage: ``python hack/release/ray_ui.py ARCHIVE DEST`` (prints the Ray version and the file count).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

#: where the Ray image's site-packages keep the build (python3.X varies)
_BUILD = re.compile(
    r"^\.?/?home/ray/anaconda3/lib/python3\.\d+/site-packages/ray/dashboard/client/build/"
)


class RayUiError(RuntimeError):
    """The archive holds no dashboard build (or is not a Docker image archive)."""


def major_minor(version: str) -> str:
    """``2.60`` from ``2.60.0``."""
    parts = version.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        raise ValueError(f"not a Ray version: {version!r}")
    return f"{parts[0]}.{parts[1]}"


def extract_dashboard_ui(archive: Path, dest: Path) -> int:
    """Write the dashboard build inside the Ray image ``archive`` (a ``docker save`` tar as
    ``hack/release/images.py`` writes them) to ``dest`` (created; ``dest/index.html``
    afterwards) and return how many files were written. Only regular files and directories are
    taken, and no path may leave ``dest``. ``RayUiError`` when the image has no build."""
    count = 0
    with tarfile.open(archive) as outer:
        manifest_file = outer.extractfile("manifest.json")
        if manifest_file is None:
            raise RayUiError(f"{archive}: no manifest.json (not a docker image archive)")
        layers = json.load(manifest_file)[0]["Layers"]
        for layer_name in layers:
            layer = outer.extractfile(layer_name)
            if layer is None:
                continue
            with tarfile.open(fileobj=layer, mode="r|*") as inner:
                for member in inner:
                    match = _BUILD.match(member.name)
                    if match is None or not member.isfile():
                        continue
                    rel = PurePosixPath(member.name[match.end() :])
                    if not rel.parts or ".." in rel.parts or rel.is_absolute():
                        continue
                    data = inner.extractfile(member)
                    if data is None:
                        continue
                    target = dest.joinpath(*rel.parts)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data.read())
                    count += 1
    if not (dest / "index.html").is_file():
        raise RayUiError(f"{archive}: no ray/dashboard/client/build/index.html in any layer")
    return count


def cached_builds(archives: Mapping[str, Path], cache: Path) -> Path | None:
    """``cache`` holding the dashboard build of every Ray image in ``archives`` (Ray version ->
    image archive) that is built, one directory per ``major.minor`` as the server image's
    ``/dashboard``; None when none is built. A build is extracted once (into a temporary
    directory renamed into place, so a half-written one is never used) and reused after."""
    found = False
    for version, archive in archives.items():
        dest = cache / major_minor(version)
        if (dest / "index.html").is_file():
            found = True
            continue
        if not archive.is_file():
            continue
        cache.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=cache))
        try:
            extract_dashboard_ui(archive, tmp)
            shutil.rmtree(dest, ignore_errors=True)
            tmp.rename(dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        found = True
    return cache if found else None


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        n = extract_dashboard_ui(Path(argv[0]), Path(argv[1]))
    except (RayUiError, OSError, tarfile.TarError) as exc:
        print(f"hack/release/ray_ui.py: {exc}", file=sys.stderr)
        return 1
    print(f"{n} files in {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
