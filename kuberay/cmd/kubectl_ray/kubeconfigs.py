"""Kubeconfig files loaded and merged exactly as kubectl (client-go's ``clientcmd``) does.

* ``--kubeconfig FILE``: that file alone; it must exist.
* else ``$KUBECONFIG``: every file it lists (``os.pathsep``-separated, duplicates and
  missing files skipped; an empty file is an empty config);
* else ``~/.kube/config`` (absent: an empty config).

Merging: for ``clusters``, ``users`` and ``contexts`` the first file to define a name
wins the whole entry; for ``current-context`` the first file to set it wins. Relative
paths in an entry (certificate files, ``tokenFile``, an ``exec`` command with a
directory part) are resolved against the directory of the file defining the entry.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import yaml

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj


#: Path-valued fields of a cluster / a user entry.
CLUSTER_PATHS = ("certificate-authority",)
USER_PATHS = ("client-certificate", "client-key", "tokenFile")


class KubeconfigError(Exception):
    """A kubeconfig that cannot be read or names something it does not define."""


@attrs.define
class MergedConfig:
    """The merged view: named entries and the current context, plus where they came from."""

    clusters: dict[str, Obj] = attrs.field(factory=dict)
    users: dict[str, Obj] = attrs.field(factory=dict)
    contexts: dict[str, Obj] = attrs.field(factory=dict)
    current_context: str = ""
    files: list[Path] = attrs.field(factory=list)

    def is_empty(self) -> bool:
        """True when no file defined any cluster, user or context (client-go then tries
        the in-cluster config)."""
        return not (self.clusters or self.users or self.contexts)

    def as_dict(self) -> Obj:
        """The merged config as one kubeconfig document."""
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": self.current_context,
            "clusters": [{"name": n, "cluster": c} for n, c in self.clusters.items()],
            "users": [{"name": n, "user": u} for n, u in self.users.items()],
            "contexts": [{"name": n, "context": c} for n, c in self.contexts.items()],
        }


def kubeconfig_files(explicit: str | None, environ: Mapping[str, str] | None = None) -> list[Path]:
    """The files kubectl would read, in precedence order (only existing ones from
    ``$KUBECONFIG``; an explicit file is returned even when missing, to be reported)."""
    env = os.environ if environ is None else environ
    if explicit:
        return [Path(explicit).expanduser()]
    listed = env.get("KUBECONFIG", "")
    if listed:
        seen: list[Path] = []
        for part in listed.split(os.pathsep):
            if not part:
                continue
            path = Path(part).expanduser()
            if path not in seen and path.exists():
                seen.append(path)
        return seen
    home = Path(env.get("HOME") or Path.home())
    default = home / ".kube" / "config"
    return [default] if default.exists() else []


def _resolve(entry: Obj, fields: tuple[str, ...], base: Path) -> Obj:
    out = dict(entry)
    for field in fields:
        value = out.get(field)
        if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
            out[field] = str(base / value)
        elif isinstance(value, str) and value:
            out[field] = str(Path(value).expanduser())
    exec_spec = out.get("exec")
    if isinstance(exec_spec, dict):
        command = str(exec_spec.get("command") or "")
        if command and os.sep in command and not Path(command).is_absolute():
            out["exec"] = {**exec_spec, "command": str(base / command)}
    return out


def read_file(path: Path) -> Obj:
    """One kubeconfig document (an empty file is an empty config)."""
    try:
        text = path.read_text()
    except FileNotFoundError as exc:
        raise KubeconfigError(f"stat {path}: no such file or directory") from exc
    except OSError as exc:
        raise KubeconfigError(f"cannot read kubeconfig {path}: {exc.strerror or exc}") from exc
    try:
        doc = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
        raise KubeconfigError(f"error loading config file {path}: {first}") from exc
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise KubeconfigError(f"error loading config file {path}: not a kubeconfig mapping")
    return doc


def merge(paths: list[Path]) -> MergedConfig:
    """The files merged with kubectl's rules (see the module doc)."""
    merged = MergedConfig(files=list(paths))
    for path in paths:
        doc = read_file(path)
        base = path.parent.resolve()
        for section, into, fields in (
            ("clusters", merged.clusters, CLUSTER_PATHS),
            ("users", merged.users, USER_PATHS),
            ("contexts", merged.contexts, ()),
        ):
            for entry in doc.get(section) or []:
                if not isinstance(entry, dict) or not entry.get("name"):
                    continue
                body = entry.get(section[:-1]) or {}
                into.setdefault(str(entry["name"]), _resolve(body, fields, base))
        if not merged.current_context and doc.get("current-context"):
            merged.current_context = str(doc["current-context"])
    return merged


__all__ = ["KubeconfigError", "MergedConfig", "kubeconfig_files", "merge", "read_file"]
