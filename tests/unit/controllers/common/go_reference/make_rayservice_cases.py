"""Cases for ``rayservice_golden_harness_test.go``: every RayService in the vendored samples,
namespace ``default`` when unset and uid ``uid-1``.

Usage: ``python make_rayservice_cases.py <kuberay samples dir> cases.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml


def main(samples: Path, out: Path) -> None:
    cases = []
    for path in sorted(samples.glob("*ray-service*.yaml")):
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if doc and doc.get("kind") == "RayService":
                doc["metadata"].setdefault("namespace", "default")
                doc["metadata"]["uid"] = "uid-1"
                cases.append({"name": f"{path.name}#{i}", "rayService": doc})
    out.write_text(json.dumps(cases))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
