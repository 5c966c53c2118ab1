"""Finding builds of Ray's dashboard UI to serve, by Ray ``major.minor``.

The built UI ships in every ``ray`` wheel under ``ray/dashboard/client/build/``
(``index.html``, ``static/js|css|media``, ``favicon.ico``, ``asset-manifest.json``,
``speedscope-<v>/``); ``index.html`` refers to its assets relatively (``./static/...``).

Sources, in priority order:

1. ``--dashboard-ui-dir DIR``: either one build (``DIR/index.html``; its version is
   unknown) or one subdirectory per version, named ``2.60`` or ``2.60.0``, each holding a
   build directly, or under ``client/build/`` (the layout KubeRay's commented-out code
   intended for ``--dashboard-dir``), or under ``ray/dashboard/client/build/`` (an unpacked
   wheel).
2. An installed ``ray`` package: ``importlib.util.find_spec("ray")`` locates it **without
   importing it**, its version comes from the distribution metadata.

``UiBuilds.pick(version)`` chooses for a session: a build of the same ``major.minor``
(the first source wins), else an explicit unversioned build, else the newest version.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path

import attrs
import structlog

log = structlog.get_logger("historyserver.server.ui")

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[.+-].*)?$")
_NESTED = ("", "client/build", "ray/dashboard/client/build")


def major_minor(version: str | None) -> tuple[int, int] | None:
    """``(2, 60)`` from ``2.60``, ``2.60.0``, ``v2.60.1rc1``; ``None`` otherwise."""
    m = _VERSION.match((version or "").strip())
    return (int(m[1]), int(m[2])) if m else None


@attrs.frozen
class UiBuild:
    """One build: its directory (holding ``index.html``), its Ray version (``None``:
    unknown) and where it came from (``dir`` or ``ray-package``)."""

    root: Path
    version: tuple[int, int] | None
    source: str

    @property
    def label(self) -> str:
        """``2.60`` or ``unversioned``."""
        return f"{self.version[0]}.{self.version[1]}" if self.version else "unversioned"

    def file(self, rel: str) -> Path | None:
        """The regular file at ``rel`` inside the build; ``None`` when missing or when
        ``rel`` would leave the build directory."""
        if not rel or "\x00" in rel or "\\" in rel:
            return None
        parts = rel.split("/")
        if any(p in ("", ".", "..") for p in parts):
            return None
        path = self.root.joinpath(*parts)
        try:
            resolved = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        if not resolved.is_relative_to(self.root.resolve()) or not resolved.is_file():
            return None
        return resolved


def _is_build(path: Path) -> bool:
    return (path / "index.html").is_file()


def builds_in_dir(directory: Path) -> list[UiBuild]:
    """The builds ``--dashboard-ui-dir`` holds (see the module doc)."""
    if _is_build(directory):
        return [UiBuild(directory, None, "dir")]
    found = []
    if directory.is_dir():
        for sub in sorted(directory.iterdir()):
            version = major_minor(sub.name)
            if version is None or not sub.is_dir():
                continue
            for nested in _NESTED:
                candidate = sub / nested if nested else sub
                if _is_build(candidate):
                    found.append(UiBuild(candidate, version, "dir"))
                    break
    return found


def installed_ray_build() -> UiBuild | None:
    """The build inside an installed ``ray`` package, found without importing ``ray``."""
    try:
        spec = importlib.util.find_spec("ray")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        build = Path(location) / "dashboard" / "client" / "build"
        if _is_build(build):
            try:
                version = major_minor(importlib.metadata.version("ray"))
            except importlib.metadata.PackageNotFoundError:
                version = None
            return UiBuild(build, version, "ray-package")
    return None


@attrs.frozen
class UiBuilds:
    """The builds found, in priority order."""

    builds: tuple[UiBuild, ...] = ()

    @classmethod
    def discover(cls, ui_dir: str = "", *, use_installed_ray: bool = True) -> UiBuilds:
        """Builds from ``ui_dir`` (if given), then an installed ``ray`` (if wanted)."""
        found: list[UiBuild] = []
        if ui_dir:
            directory = Path(ui_dir)
            if not directory.is_dir():
                log.warning("dashboard UI directory not found", path=ui_dir)
            found += builds_in_dir(directory)
        if use_installed_ray:
            ray_build = installed_ray_build()
            if ray_build is not None:
                found.append(ray_build)
        for b in found:
            log.info("dashboard UI build found", version=b.label, source=b.source, path=str(b.root))
        return cls(tuple(found))

    def __bool__(self) -> bool:
        return bool(self.builds)

    def pick(self, version: str | None) -> UiBuild | None:
        """The build for a session of Ray ``version`` (see the module doc)."""
        wanted = major_minor(version)
        if wanted is not None:
            for b in self.builds:
                if b.version == wanted:
                    return b
        for b in self.builds:
            if b.version is None and b.source == "dir":
                return b
        versioned = [b for b in self.builds if b.version is not None]
        if versioned:
            return max(versioned, key=lambda b: b.version or (0, 0))
        return self.builds[0] if self.builds else None
