"""Write the inputs of ``netpol_golden_harness_test.go`` and combine its output.

Usage: ``python make_netpol_golden_cases.py <samples dir> cases.json`` writes the cases: the
``ray-cluster.network-policy-deny-all.yaml`` sample and crafted variants of it (each mode,
no mode, per-group overrides, rules without a protocol, RayJob-owned clusters in each
submission mode, dashboard-port overrides, owners that are not a RayJob controller).
``python make_netpol_golden_cases.py --combine cases.json out.json data.json.gz`` stores
``[{"case": <case>, "expected": [<policies>]}]`` gzip-compressed.
"""

from __future__ import annotations

import copy
import gzip
import json
import sys
from pathlib import Path
from typing import Any

import yaml

Case = dict[str, Any]
SAMPLE = "ray-cluster.network-policy-deny-all.yaml"
NAMESPACE = "np-golden"
UID = "6b1e2c1a-0000-4000-8000-00000000c1c1"


def _cluster(doc: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    cluster = copy.deepcopy(doc)
    meta = cluster.setdefault("metadata", {})
    if name:
        meta["name"] = name
    meta["namespace"] = NAMESPACE
    meta["uid"] = UID
    return cluster


def _owner(kind: str, name: str, *, api_version: str = "ray.io/v1", controller: bool = True):
    ref: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name, "uid": "u-1"}
    if controller is not None:
        ref["controller"] = controller
    return ref


def make_cases(samples: Path) -> list[Case]:
    """The sample and its crafted variants."""
    sample = yaml.safe_load((samples / SAMPLE).read_text())
    cases: list[Case] = [{"name": "sample", "cluster": _cluster(sample)}]

    def variant(name: str, edit: Any) -> None:
        cluster = _cluster(sample, name=f"np-{name}")
        edit(cluster)
        cases.append({"name": name, "cluster": cluster})

    np_of = lambda c: c["spec"]["networkPolicy"]  # noqa: E731

    for mode in ("DenyAllIngress", "DenyAllEgress"):

        def set_mode(c: dict[str, Any], mode: str = mode) -> None:
            np_of(c)["mode"] = mode
            if mode == "DenyAllIngress":
                np_of(c)["head"].pop("egressRules", None)
                np_of(c)["worker"].pop("egressRules", None)

        variant(mode.lower(), set_mode)
    variant("no-mode", lambda c: np_of(c).pop("mode"))
    variant("empty-config", lambda c: c["spec"].__setitem__("networkPolicy", {}))

    def groups(c: dict[str, Any]) -> None:
        workers = c["spec"]["workerGroupSpecs"]
        second = copy.deepcopy(workers[0])
        second["groupName"] = "gpu"
        third = copy.deepcopy(workers[0])
        third["groupName"] = "empty-override"
        workers.extend([second, third])
        np_of(c)["workerGroups"] = [
            {
                "groupName": "gpu",
                "egressRules": [
                    {
                        "to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}],
                        "ports": [{"port": 443}, {"port": "https", "protocol": "TCP"}],
                    }
                ],
                "ingressRules": [
                    {
                        "from": [{"namespaceSelector": {}}],
                        "ports": [{"port": 8080, "endPort": 8090}],
                    }
                ],
            },
            {"groupName": "empty-override"},
        ]
        np_of(c)["head"]["ingressRules"] = [
            {
                "from": [
                    {
                        "podSelector": {
                            "matchExpressions": [
                                {"key": "app", "operator": "In", "values": ["prom", "graf"]}
                            ]
                        }
                    }
                ],
                "ports": [{"port": 8080}],
            }
        ]

    variant("worker-groups", groups)

    def rayjob(mode: str | None, **owner_kw: Any) -> Any:
        def edit(c: dict[str, Any]) -> None:
            if mode is not None:
                c["metadata"].setdefault("labels", {})["ray.io/job-submission-mode"] = mode
            c["metadata"]["ownerReferences"] = [
                _owner(**{"kind": "RayJob", "name": "my-job", **owner_kw})
            ]

        return edit

    variant("rayjob-k8sjobmode", rayjob("K8sJobMode"))
    variant("rayjob-httpmode", rayjob("HTTPMode"))
    variant("rayjob-sidecarmode", rayjob("SidecarMode"))
    variant("rayjob-no-label", rayjob(None))
    variant("rayjob-not-controller", rayjob("K8sJobMode", controller=False))
    variant("rayjob-other-group", rayjob("K8sJobMode", api_version="example.com/v1"))
    variant("rayservice-owner", rayjob("K8sJobMode", kind="RayService"))

    def dash(value: str) -> Any:
        def edit(c: dict[str, Any]) -> None:
            rayjob("K8sJobMode")(c)
            c["spec"]["headGroupSpec"]["rayStartParams"]["dashboard-port"] = value

        return edit

    variant("dashboard-port", dash("9265"))
    variant("dashboard-port-bad", dash("not-a-port"))
    variant("dashboard-port-big", dash("99999999999"))

    def deny_egress_job(c: dict[str, Any]) -> None:
        rayjob("K8sJobMode")(c)
        np_of(c)["mode"] = "DenyAllEgress"

    variant("rayjob-denyallegress", deny_egress_job)
    variant("no-workers", lambda c: c["spec"].pop("workerGroupSpecs"))
    return cases


def main(argv: list[str]) -> None:
    if argv[0] == "--combine":
        cases = json.loads(Path(argv[1]).read_text())
        out = {o["name"]: o["policies"] for o in json.loads(Path(argv[2]).read_text())}
        data = [{"case": c, "expected": out[c["name"]]} for c in cases]
        with gzip.open(argv[3], "wt") as fh:
            json.dump(data, fh, indent=None, sort_keys=True)
        return
    Path(argv[1]).write_text(json.dumps(make_cases(Path(argv[0])), indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
