#!/usr/bin/env python3
"""Fetch third-party CRDs from their Go modules into ``~/.cache/kuberay/`` (pinned versions).

    python hack/build/fetch_crds.py                 # every source; prints one directory per line
    python hack/build/fetch_crds.py volcano         # one source

Each :class:`Source` names a Go module at a pinned version (the one KubeRay's ``go.mod``
requires) and the CRD YAMLs it ships; ``go mod download`` brings the module through the Go
module proxy (or the local module cache) and the files are copied to
``~/.cache/kuberay/<name>-<version>/crds``. ``volcano.sh/apis`` ships Go types but no CRD
YAML (and ``volcano.sh/volcano``, which does, is not served by the module proxy), so its
PodGroup CRD is generated from those types with controller-gen (``sigs.k8s.io/controller-
tools`` at :data:`CONTROLLER_TOOLS`, built once into the cache). Idempotent: an existing copy
is reused. ``KUBERAY_CACHE`` overrides the cache root, ``GO`` the go binary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a file: import kuberay and hack.* from this checkout
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from hack.build.gobuild import go_binary

CONTROLLER_TOOLS = "v0.17.3"


@dataclass(frozen=True)
class Source:
    """CRDs of one Go module: ``files`` under ``subdir``, or generated from the API
    package ``generate`` (relative to the module) when the module ships no YAML."""

    name: str
    module: str
    version: str
    files: tuple[str, ...]
    subdir: str = ""
    generate: str = ""


SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source(
            "cert-manager",
            "github.com/cert-manager/cert-manager",
            "v1.19.4",
            (
                "cert-manager.io_certificaterequests.yaml",
                "cert-manager.io_certificates.yaml",
                "cert-manager.io_clusterissuers.yaml",
                "cert-manager.io_issuers.yaml",
            ),
            subdir="deploy/crds",
        ),
        Source(
            "gateway-api",
            "sigs.k8s.io/gateway-api",
            "v1.4.1",  # the oldest served here; newer ones need a newer Go than this machine's
            (
                "gateway.networking.k8s.io_gatewayclasses.yaml",
                "gateway.networking.k8s.io_gateways.yaml",
                "gateway.networking.k8s.io_httproutes.yaml",
                "gateway.networking.k8s.io_grpcroutes.yaml",
                "gateway.networking.k8s.io_referencegrants.yaml",
                # standard channel too; Traefik's Gateway provider watches it (e2e gateway)
                "gateway.networking.k8s.io_backendtlspolicies.yaml",
            ),
            subdir="config/crd/standard",
        ),
        Source(
            "kueue",
            "sigs.k8s.io/kueue",
            "v0.17.0",  # the controller itself is built by hack/build/build_kueue.py
            tuple(
                f"kueue.x-k8s.io_{kind}.yaml"
                for kind in (
                    "admissionchecks",
                    "clusterqueues",
                    "cohorts",
                    "localqueues",
                    "multikueueclusters",
                    "multikueueconfigs",
                    "provisioningrequestconfigs",
                    "resourceflavors",
                    "topologies",
                    "workloadpriorityclasses",
                    "workloads",
                )
            ),
            subdir="config/components/crd/bases",
        ),
        Source(
            "scheduler-plugins",
            "sigs.k8s.io/scheduler-plugins",
            "v0.33.5",
            # ElasticQuota too: the project's PodGroup controller (run by the e2e gang
            # tests) also reconciles ElasticQuotas and fails to start without their CRD
            ("scheduling.x-k8s.io_podgroups.yaml", "scheduling.x-k8s.io_elasticquotas.yaml"),
            subdir="config/crd/bases",
        ),
        Source(
            "volcano",
            "volcano.sh/apis",
            "v1.13.0",
            ("scheduling.volcano.sh_podgroups.yaml", "scheduling.volcano.sh_queues.yaml"),
            generate="pkg/apis/scheduling/v1beta1",
        ),
    )
}


def cache_root() -> Path:
    """``$KUBERAY_CACHE`` or ``~/.cache/kuberay``."""
    return Path(os.environ.get("KUBERAY_CACHE") or Path.home() / ".cache" / "kuberay")


def crd_dir(source: Source) -> Path:
    """Where the CRDs of ``source`` live once fetched."""
    return cache_root() / f"{source.name}-{source.version}" / "crds"


def _go_env() -> dict[str, str]:
    return {**os.environ, "GOFLAGS": "-mod=mod", "GO111MODULE": "on"}


def _download(module: str, version: str) -> Path:
    out = subprocess.run(
        [go_binary(), "mod", "download", "-json", f"{module}@{version}"],
        check=True,
        capture_output=True,
        text=True,
        env=_go_env(),
    )
    return Path(json.loads(out.stdout)["Dir"])


def _generate(source: Source, staging: Path) -> None:
    """controller-gen over ``source.generate`` in a scratch module requiring the module."""
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        (work / "go.mod").write_text("module crdgen\n\ngo 1.24\n")
        package = f"{source.module}/{source.generate}"
        (work / "tools.go").write_text(
            "//go:build tools\n\npackage crdgen\n\nimport (\n"
            '\t_ "sigs.k8s.io/controller-tools/cmd/controller-gen"\n'
            f'\t_ "{package}"\n)\n'
        )
        env = _go_env()
        run = {"cwd": work, "check": True, "env": env, "capture_output": True}
        subprocess.run(
            [
                go_binary(),
                "get",
                f"sigs.k8s.io/controller-tools/cmd/controller-gen@{CONTROLLER_TOOLS}",
                f"{source.module}@{source.version}",
            ],
            **run,  # type: ignore[call-overload]
        )
        tool = cache_root() / f"controller-gen-{CONTROLLER_TOOLS}"
        if not tool.exists():
            tool.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                [
                    go_binary(),
                    "build",
                    "-o",
                    str(tool),
                    "sigs.k8s.io/controller-tools/cmd/controller-gen",
                ],
                **run,  # type: ignore[call-overload]
            )
        subprocess.run(
            [str(tool), "crd", f"paths={package}", f"output:crd:dir={staging}"],
            **run,  # type: ignore[call-overload]
        )


def fetch(name: str = "cert-manager") -> Path:
    """Make sure the CRDs of source ``name`` are in the cache; their directory."""
    source = SOURCES[name]
    target = crd_dir(source)
    if all((target / f).is_file() for f in source.files):
        return target
    staging = target.with_name(target.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    if source.generate:
        _generate(source, staging)
    else:
        root = _download(source.module, source.version) / source.subdir
        for file in source.files:
            shutil.copyfile(root / file, staging / file)
    missing = [f for f in source.files if not (staging / f).is_file()]
    if missing:
        raise SystemExit(f"{name}: {', '.join(missing)} not produced")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


if __name__ == "__main__":
    for wanted in sys.argv[1:] or list(SOURCES):
        print(fetch(wanted))
    sys.exit(0)
