"""Write the inputs of ``mtls_golden_harness_test.go`` and combine its output.

Usage: ``python make_mtls_golden_cases.py <samples dir> cases.json`` writes the cases: the
``ray-cluster.mtls.yaml`` sample without pods, with live pods of both node types (plus pods
that must not count: terminating, Failed, Succeeded, without an IP, of another cluster), and
with a custom head Service name. ``python make_mtls_golden_cases.py --combine cases.json
out.json data.json.gz`` stores ``[{"case": <case>, "expected": <objects>, "err": <err>}]``.
"""

from __future__ import annotations

import copy
import gzip
import json
import sys
from pathlib import Path
from typing import Any

import yaml

NAMESPACE = "mtls-golden"
UID = "9f8e7d6c-0000-4000-8000-00000000abcd"


def _pod(name: str, cluster: str, node_type: str, ip: str, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": NAMESPACE,
        "labels": {"ray.io/cluster": cluster, "ray.io/node-type": node_type},
    }
    if extra.get("deleting"):
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        meta["finalizers"] = ["example.com/hold"]
    status: dict[str, Any] = {"phase": extra.get("phase", "Running")}
    if ip:
        status["podIP"] = ip
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": status,
    }


def make_cases(samples: Path) -> list[dict[str, Any]]:
    """The sample and its variants."""
    doc = yaml.safe_load((samples / "ray-cluster.mtls.yaml").read_text())
    doc["metadata"].update(namespace=NAMESPACE, uid=UID)
    name = doc["metadata"]["name"]
    pods = [
        _pod("h", name, "head", "10.2.0.9"),
        _pod("w1", name, "worker", "10.2.0.10"),
        _pod("w2", name, "worker", "10.2.0.2"),
        _pod("w3", name, "worker", "10.2.0.3", deleting=True),
        _pod("w4", name, "worker", "10.2.0.4", phase="Failed"),
        _pod("w5", name, "worker", "10.2.0.5", phase="Succeeded"),
        _pod("w6", name, "worker", ""),
        _pod("o1", "other", "worker", "10.2.0.6"),
    ]
    custom = copy.deepcopy(doc)
    custom["metadata"]["name"] = "custom-svc"
    custom["spec"]["headGroupSpec"]["headService"] = {"metadata": {"name": "my-head"}}
    return [
        {"name": "sample", "cluster": doc, "pods": []},
        {"name": "sample-with-pods", "cluster": doc, "pods": pods},
        {"name": "custom-head-service", "cluster": custom, "pods": []},
    ]


def main(argv: list[str]) -> None:
    if argv[0] == "--combine":
        cases = json.loads(Path(argv[1]).read_text())
        out = {o["name"]: o for o in json.loads(Path(argv[2]).read_text())}
        data = [
            {"case": c, "expected": out[c["name"]]["objects"], "err": out[c["name"]].get("err", "")}
            for c in cases
        ]
        with gzip.open(argv[3], "wt") as fh:
            json.dump(data, fh, sort_keys=True)
        return
    Path(argv[1]).write_text(json.dumps(make_cases(Path(argv[0])), indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
