#!/usr/bin/env python3
"""Snapshot the Kubernetes OpenAPI v3 schemas of the types the ray.io CRDs embed.

    python hack/build/fetch_k8s_openapi.py --kubeconfig DIR/kubeconfig   # from a running apiserver
    python hack/controlplane.py up --dir /tmp/cp &  # e.g. the test apiserver (v1.36.3)

Reads ``/openapi/v3/api/v1``, ``/openapi/v3/apis/networking.k8s.io/v1`` and
``/openapi/v3/apis/meta.k8s.io/v1`` ... from the apiserver (the apiserver's own description of
core/v1, networking/v1 and meta/v1), keeps the component schemas reachable from the embedded
roots in :data:`kuberay.api.v1.k8s_schemas.ROOTS`, drops descriptions, and writes
``kuberay/api/v1/k8s_openapi.json`` (committed). ``hack/docs/gen_crds.py`` turns that snapshot into
the structural CRD schemas; regenerating from the same snapshot is byte-identical (unit-tested).
"""

from __future__ import annotations

import argparse
import base64
import json
import ssl
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(REPO)

from kuberay.api.v1.k8s_schemas import ROOTS, SNAPSHOT, ref_name  # noqa: E402

GROUP_PATHS = ("api/v1", "apis/networking.k8s.io/v1")
KEEP = (
    "type",
    "format",
    "properties",
    "additionalProperties",
    "items",
    "required",
    "default",
    "enum",
    "allOf",
    "$ref",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
)


def _context(kubeconfig: Path) -> tuple[str, ssl.SSLContext]:
    cfg = yaml.safe_load(kubeconfig.read_text())
    cluster = cfg["clusters"][0]["cluster"]
    user = cfg["users"][0]["user"]
    ctx = ssl.create_default_context(
        cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
    )
    tmp = Path(tempfile.mkdtemp())
    (tmp / "c.crt").write_bytes(base64.b64decode(user["client-certificate-data"]))
    (tmp / "c.key").write_bytes(base64.b64decode(user["client-key-data"]))
    ctx.load_cert_chain(tmp / "c.crt", tmp / "c.key")
    return str(cluster["server"]), ctx


def _get(server: str, ctx: ssl.SSLContext, path: str) -> Any:
    req = urllib.request.Request(server + path, headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=60, context=ctx) as resp:
        return json.loads(resp.read())


def _clean(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {k: _clean(v) for k, v in schema.items() if k in KEEP}
        if "properties" in schema:
            out["properties"] = {k: _clean(v) for k, v in schema["properties"].items()}
        if "$ref" in out:
            out["$ref"] = ref_name(out["$ref"])
        return out
    if isinstance(schema, list):
        return [_clean(v) for v in schema]
    return schema


def _refs(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        found = [ref_name(schema["$ref"])] if "$ref" in schema else []
        for key, value in schema.items():
            if key != "$ref":
                found.extend(_refs(value))
        return found
    if isinstance(schema, list):
        return [r for v in schema for r in _refs(v)]
    return []


def build_snapshot(version: str, documents: list[Any]) -> dict[str, Any]:
    """The snapshot (version + trimmed component schemas) from the OpenAPI v3 documents."""
    components: dict[str, Any] = {}
    for doc in documents:
        components.update(doc["components"]["schemas"])
    kept: dict[str, Any] = {}
    todo = list(ROOTS.values())
    while todo:
        name = todo.pop()
        if name in kept:
            continue
        kept[name] = _clean(components[name])
        todo.extend(_refs(kept[name]))
    return {"kubernetesVersion": version, "schemas": dict(sorted(kept.items()))}


def render(snapshot: dict[str, Any]) -> str:
    """The committed text of a snapshot."""
    return json.dumps(snapshot, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=SNAPSHOT)
    args = parser.parse_args(argv)
    server, ctx = _context(args.kubeconfig)
    version = _get(server, ctx, "/version")["gitVersion"]
    documents = [_get(server, ctx, f"/openapi/v3/{path}") for path in GROUP_PATHS]
    snapshot = build_snapshot(version, documents)
    args.out.write_text(render(snapshot))
    print(f"wrote {args.out}: {len(snapshot['schemas'])} schemas from {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
