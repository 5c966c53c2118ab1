#!/usr/bin/env python3
"""Generate ``kuberay/gocompat/go_struct_schema.py``: the ``encoding/json`` layout of every Go
struct reachable from KubeRay's ``RayClusterSpec``, read from the Go sources.

Inputs (nothing is fetched):

* KubeRay's ``ray-operator/apis/ray/v1`` at :data:`KUBERAY_REF` (v1.7), from ``--kuberay``: a
  checkout of ray-project/kuberay, or its git directory (then read at ``--ref``);
* ``k8s.io/api`` (core/v1, networking/v1) and ``k8s.io/apimachinery`` (meta/v1) from the Go
  module cache (``--gomodcache``, default ``$GOMODCACHE`` or ``~/go/pkg/mod``) at the
  versions ``hack/gomod/go.mod`` pins (``make deps`` downloads them);
* :data:`LATER_KUBERAY`: the fields KubeRay added after v1.7 that the operator already hashes
  (v1.8's ``ScaleStrategy.scaleGate``, #5094), as Go source replacing v1.7's declarations.

Each struct lists its JSON field names in Go declaration order, embedded ``inline`` (or
untagged) structs flattened, with the type string :mod:`kuberay.gocompat.gojson` walks
(``string``, ``bool``, ``int``, ``quantity``, ``intorstring``, ``time``,
``custom:meta/v1.FieldsV1``, ``struct:<pkg>.<Name>``, ``ptr:``/``slice:``/``map:``) and the
``omitempty``/``omitzero`` tag options. The output is formatted with ``ruff format``.

Usage: python hack/gen_go_struct_schema.py --kuberay PATH [--ref REF] [--gomodcache DIR]
[--out FILE] [--check]   (``--check``: exit 1 when the file differs from what is generated)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "kuberay" / "gocompat" / "go_struct_schema.py"
GO_MOD = ROOT / "hack" / "gomod" / "go.mod"
KUBERAY_REF = "feeaf72"
ROOT_STRUCT = "ray/v1.RayClusterSpec"
RAY_API_DIR = "ray-operator/apis/ray/v1"

#: Go import path -> (package key, its directory under a module root).
K8S_PACKAGES = {
    "k8s.io/api/core/v1": ("core/v1", "k8s.io/api", "core/v1"),
    "k8s.io/api/networking/v1": ("networking/v1", "k8s.io/api", "networking/v1"),
    "k8s.io/apimachinery/pkg/apis/meta/v1": ("meta/v1", "k8s.io/apimachinery", "pkg/apis/meta/v1"),
}
#: Types encoding/json writes through their own MarshalJSON: leaves of the walk.
LEAVES = {
    "k8s.io/apimachinery/pkg/api/resource.Quantity": "quantity",
    "k8s.io/apimachinery/pkg/util/intstr.IntOrString": "intorstring",
    "k8s.io/apimachinery/pkg/types.UID": "string",
    "meta/v1.Time": "time",
    "meta/v1.FieldsV1": "custom:meta/v1.FieldsV1",
}
INTS = {"int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64"}
OMITEMPTY, OMITZERO = 1, 2

LATER_KUBERAY = """
package v1

// ScaleStrategy of KubeRay v1.8 (#5094): scaleGate added.
type ScaleStrategy struct {
	WorkersToDelete []string `json:"workersToDelete,omitempty"`
	ScaleGate []ScaleGate `json:"scaleGate,omitempty"`
}

type ScaleGate struct {
	Type ScaleGateType `json:"type"`
}

type ScaleGateType string
"""

_TYPE_DECL = re.compile(r"^type\s+(\w+)\s+(.+?)\s*$")
_FIELD = re.compile(r"^(?:(\w+)\s+)?([\w.\[\]*]+)\s*(?:`([^`]*)`)?$")
_IMPORT = re.compile(r'^\s*(?:(\w+)\s+)?"([^"]+)"\s*$')


class Package:
    """The struct and named-type declarations of one Go package, and its imports."""

    def __init__(self, key: str, sources: Iterable[str]) -> None:
        self.key = key
        self.structs: dict[str, list[str]] = {}  # name -> field lines
        self.named: dict[str, str] = {}  # name -> underlying type expression
        self.imports: dict[str, str] = {}  # alias -> import path
        for source in sources:
            self._read(source)

    def _read(self, source: str) -> None:
        lines = [re.sub(r"\s*//.*$", "", line).rstrip() for line in source.splitlines()]
        i = 0
        while i < len(lines):
            line = lines[i].strip()
            if line.startswith("import ("):
                i += 1
                while lines[i].strip() != ")":
                    self._import(lines[i])
                    i += 1
            elif line.startswith("import "):
                self._import(line[len("import ") :])
            elif (m := _TYPE_DECL.match(line)) and m[2] == "struct {":
                body = []
                i += 1
                while lines[i].strip() != "}":
                    if lines[i].strip():
                        body.append(lines[i].strip())
                    i += 1
                self.structs[m[1]] = body
            elif m and not m[2].startswith(("interface", "struct", "func", "=")):
                self.named[m[1]] = m[2]
            i += 1

    def _import(self, line: str) -> None:
        m = _IMPORT.match(line)
        if m:
            self.imports[m[1] or m[2].rsplit("/", 1)[-1]] = m[2]


class Schema:
    """Walks the struct graph from :data:`ROOT_STRUCT` and renders the table."""

    def __init__(self, packages: dict[str, Package]) -> None:
        self.packages = packages
        self.by_path = {path: key for path, (key, _, _) in K8S_PACKAGES.items()}
        self.tables: dict[str, list[tuple[str, str, int]]] = {}

    def type_string(self, expr: str, pkg: Package, *, walk: bool = True) -> str:
        """The table's type string of Go type expression ``expr`` read in ``pkg``; a struct it
        names is added to the table unless ``walk`` is false (an inline one, flattened)."""
        if expr.startswith("*"):
            return "ptr:" + self.type_string(expr[1:], pkg)
        if expr.startswith("[]"):
            return "slice:" + self.type_string(expr[2:], pkg)
        if expr.startswith("map["):
            return "map:" + self.type_string(expr[expr.index("]") + 1 :], pkg)
        if expr in ("string", "bool"):
            return expr
        if expr in INTS:
            return "int"
        owner, name = pkg, expr
        if "." in expr:
            alias, name = expr.split(".", 1)
            path = pkg.imports[alias]
            if f"{path}.{name}" in LEAVES:
                return LEAVES[f"{path}.{name}"]
            owner = self.packages[self.by_path[path]]
        full = f"{owner.key}.{name}"
        if full in LEAVES:
            return LEAVES[full]
        if name in owner.structs:
            if walk:
                self.walk(full)
            return f"struct:{full}"
        if name in owner.named:
            return self.type_string(owner.named[name], owner)
        raise KeyError(f"unknown Go type {expr} in package {pkg.key}")

    def fields(self, full: str) -> list[tuple[str, str, int]]:
        """The JSON fields of struct ``full`` in Go order, embedded inline structs flattened."""
        key, name = full.rsplit(".", 1)
        pkg = self.packages[key]
        out: list[tuple[str, str, int]] = []
        for line in pkg.structs[name]:
            m = _FIELD.match(line)
            if m is None:
                raise ValueError(f"{full}: cannot read field {line!r}")
            field, expr, tag = m[1], m[2], m[3] or ""
            json = re.search(r'json:"([^"]*)"', tag)
            json_name, *options = (json[1] if json else "").split(",")
            if json_name == "-" or (field and not field[0].isupper()):
                continue
            if field is None and not json_name:  # embedded without a name: inline
                embedded = self.type_string(expr, pkg, walk=False).removeprefix("struct:")
                out.extend(self.fields(embedded))
                continue
            flags = (OMITEMPTY if "omitempty" in options else 0) | (
                OMITZERO if "omitzero" in options else 0
            )
            out.append((json_name or field or expr, self.type_string(expr, pkg), flags))
        return out

    def walk(self, full: str) -> None:
        """Add ``full`` and every struct it reaches to the table."""
        if full not in self.tables:
            self.tables[full] = []  # placeholder: a struct may reach itself
            self.tables[full] = self.fields(full)

    def render(self) -> str:
        """The module's source (before ``ruff format``)."""
        flag_names = {0: "0", 1: "OMITEMPTY", 2: "OMITZERO", 3: "OMITEMPTY | OMITZERO"}
        entries = []
        for name in sorted(self.tables):
            rows = "".join(
                f'        ("{json}", "{kind}", {flag_names[flags]}),\n'
                for json, kind, flags in self.tables[name]
            )
            entries.append(f'    "{name}": (\n{rows}    ),\n')
        return HEADER + "".join(entries) + FOOTER


HEADER = '''"""Go ``encoding/json`` layout of the Go types inside KubeRay's ``RayClusterSpec``.

Generated by hack/gen_go_struct_schema.py (do not edit; run it again when the upstream types
change): for every Go struct reachable from KubeRay's ``RayClusterSpec`` (``ray.io/v1`` at KubeRay
v1.7, commit ``feeaf72``, plus v1.8's ``ScaleStrategy.scaleGate`` (#5094); k8s.io/api at the
version ``hack/gomod/go.mod`` pins) the JSON field names in Go declaration order (embedded
``inline`` structs flattened), each with its Go type and ``omitempty``/``omitzero`` tag options.

Type strings: ``string``, ``bool``, ``int``, ``quantity`` (resource.Quantity),
``intorstring``, ``time`` (metav1.Time), ``custom:meta/v1.FieldsV1`` (raw JSON),
``struct:<name>``, and the constructors ``ptr:<t>``, ``slice:<t>``, ``map:<t>`` (string keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

OMITEMPTY: Final = 1
OMITZERO: Final = 2

#: Go struct name -> ((json name, type string, tag flags), ...) in Go field order.
GO_STRUCTS: Final[Mapping[str, tuple[tuple[str, str, int], ...]]] = {
'''
FOOTER = """}

#: The Go type KubeRay hashes for its upgrade annotations.
RAY_CLUSTER_SPEC: Final = "ray/v1.RayClusterSpec"
"""


def pinned_version(module: str, go_mod: str) -> str:
    """The version ``go.mod`` pins for ``module`` (its ``replace`` line wins)."""
    m = re.search(rf"^replace {re.escape(module)} => {re.escape(module)} (\S+)", go_mod, re.M)
    m = m or re.search(rf"^\s+{re.escape(module)} (\S+)", go_mod, re.M)
    if m is None:
        raise SystemExit(f"{GO_MOD} pins no version of {module}")
    return m[1]


def go_files(directory: Path) -> list[str]:
    """The non-test Go sources of a package directory."""
    return [
        p.read_text(encoding="utf-8")
        for p in sorted(directory.glob("*.go"))
        if not p.name.endswith("_test.go")
    ]


def kuberay_sources(path: Path, ref: str) -> list[str]:
    """KubeRay's ray/v1 sources from a checkout, or from a git directory at ``ref``."""
    checkout = path / RAY_API_DIR
    if checkout.is_dir():
        return go_files(checkout)

    def git(*args: str) -> str:
        run = subprocess.run(
            ["git", f"--git-dir={path}", *args], check=True, capture_output=True, text=True
        )
        return run.stdout

    names = git("ls-tree", "--name-only", f"{ref}:{RAY_API_DIR}").split()
    return [git("show", f"{ref}:{RAY_API_DIR}/{n}") for n in names if n.endswith(".go")]


def generate(kuberay: Path, ref: str, gomodcache: Path) -> str:
    """The formatted module text."""
    go_mod = GO_MOD.read_text(encoding="utf-8")
    packages = {"ray/v1": Package("ray/v1", [*kuberay_sources(kuberay, ref), LATER_KUBERAY])}
    for key, module, subdir in K8S_PACKAGES.values():
        root = gomodcache / f"{module}@{pinned_version(module, go_mod)}"
        if not root.is_dir():
            raise SystemExit(f"{root} is missing: run `make deps` (hack/gomod) first")
        packages[key] = Package(key, go_files(root / subdir))
    schema = Schema(packages)
    schema.walk(ROOT_STRUCT)
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(OUT), "-"],
        input=schema.render(),
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return formatted.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--kuberay", type=Path, required=True, help="KubeRay checkout or git dir")
    parser.add_argument("--ref", default=KUBERAY_REF, help="commit read from a git dir")
    default_cache = os.environ.get("GOMODCACHE") or str(Path.home() / "go" / "pkg" / "mod")
    parser.add_argument("--gomodcache", type=Path, default=Path(default_cache))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    text = generate(args.kuberay, args.ref, args.gomodcache)
    if args.check:
        same = args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'up to date' if same else 'stale'}")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
