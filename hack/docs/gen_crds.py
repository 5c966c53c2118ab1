#!/usr/bin/env python3
"""Generate manifests/crds/ray.io_*.yaml from the ray.io/v1 models.

    python hack/docs/gen_crds.py            # (re)write the CRD files
    python hack/docs/gen_crds.py --check    # exit 1 if the committed files differ
    python hack/docs/gen_crds.py --out DIR  # write somewhere else

The schema rules (embedded Kubernetes types typed from the apiserver's OpenAPI snapshot
``kuberay/api/v1/k8s_openapi.json``, unknown fields pruned, served v1alpha1) are documented in
:mod:`kuberay.api.v1.crd`. The CRDs are large (like KubeRay's): install
them with ``kubectl apply --server-side`` (client-side apply's last-applied annotation is
limited to 256 KiB) or ``kubectl create``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(REPO)

from kuberay.api.v1.crd import generate_crds, render_yaml  # noqa: E402

DEFAULT_OUT = REPO / "manifests" / "crds"
#: the operator chart's copies (real files, so a copied or packaged chart keeps them)
CHART_CRDS = REPO / "manifests" / "helm" / "kuberay-operator" / "crds"
#: etcd rejects requests above ~1.5 MiB; the stored (JSON) CRDs must stay well below, leaving
#: room for server-side apply's managedFields. KubeRay's largest (RayJob) is ~420 KB as JSON.
SIZE_LIMIT_BYTES = 750_000


def rendered() -> dict[str, str]:
    """File name -> YAML text of every CRD."""
    return {name: render_yaml(crd) for name, crd in sorted(generate_crds().items())}


def check(out_dir: Path) -> int:
    """0 when every file in ``out_dir`` matches the generator, else 1 (with a diff)."""
    status = 0
    for name, text in rendered().items():
        path = out_dir / name
        current = path.read_text() if path.exists() else ""
        if current != text:
            status = 1
            print(f"{path} is out of date; run: python hack/docs/gen_crds.py", file=sys.stderr)
            diff = difflib.unified_diff(
                current.splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=f"{name} (committed)",
                tofile=f"{name} (generated)",
                n=2,
            )
            sys.stderr.writelines(list(diff)[:60])
    return status


def write(out_dir: Path) -> int:
    """Write every CRD into ``out_dir``; 1 if one is suspiciously large."""
    out_dir.mkdir(parents=True, exist_ok=True)
    status = 0
    crds = generate_crds()
    for name, text in rendered().items():
        (out_dir / name).write_text(text)
        size = len(json.dumps(crds[name], separators=(",", ":")).encode())
        print(f"wrote {out_dir / name} ({len(text.encode())} bytes YAML, {size} bytes JSON)")
        if size > SIZE_LIMIT_BYTES:
            print(f"{name} exceeds {SIZE_LIMIT_BYTES} bytes", file=sys.stderr)
            status = 1
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail if the files are stale")
    parser.add_argument(
        "--out", type=Path, help="output directory (default: manifests/crds and the chart's crds/)"
    )
    args = parser.parse_args(argv)
    outs = [args.out] if args.out else [DEFAULT_OUT, CHART_CRDS]
    run = check if args.check else write
    return max(run(out) for out in outs)


if __name__ == "__main__":
    sys.exit(main())
