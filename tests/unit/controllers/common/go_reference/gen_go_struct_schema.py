"""Turn ``dump_schema.go`` output into ``kuberay/controllers/common/go_struct_schema.py``.

Usage: ``python gen_go_struct_schema.py schema.json <output.py>`` then ``ruff format`` the output.
"""

from __future__ import annotations

import json
import sys
from typing import Any

HEADER = '''\
"""Go ``encoding/json`` layout of the Kubernetes and KubeRay types inside ``RayClusterSpec``.

Generated data, not logic: for every Go struct reachable from KubeRay's ``RayClusterSpec``
(``ray.io/v1`` at KubeRay v1.7 / k8s.io/api v0.36) it lists the JSON field names in Go
declaration order (embedded ``inline`` structs already flattened), each with its Go type and
``omitempty``/``omitzero`` tag options. It was produced by walking the Go types with
``reflect`` (see ``tests/unit/controllers/common/go_reference/``); regenerate it the same way
when the upstream API types change.

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


def type_name(name: str) -> str:
    return name.replace("goschema/rayv1", "ray/v1")


def encode(go_type: Any) -> str:
    if isinstance(go_type, str):
        return go_type
    kind, inner = go_type
    if kind == "struct":
        return "struct:" + type_name(inner)
    return f"{kind}:{encode(inner)}"


def main(schema_path: str, output_path: str) -> None:
    with open(schema_path) as handle:
        schema = json.load(handle)
    lines = [HEADER]
    for name in sorted(schema["types"]):
        lines.append(f'    "{type_name(name)}": (\n')
        for field in schema["types"][name]:
            flags = [
                f
                for f, on in (("OMITEMPTY", field["omitempty"]), ("OMITZERO", field["omitzero"]))
                if on
            ]
            flag_text = " | ".join(flags) if flags else "0"
            lines.append(f'        ("{field["name"]}", "{encode(field["type"])}", {flag_text}),\n')
        lines.append("    ),\n")
    lines.append("}\n\n#: The Go type KubeRay hashes for its upgrade annotations.\n")
    lines.append('RAY_CLUSTER_SPEC: Final = "ray/v1.RayClusterSpec"\n')
    with open(output_path, "w") as handle:
        handle.write("".join(lines))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
