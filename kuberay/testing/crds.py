"""Install the ray.io CRDs (``manifests/crds``) into a test apiserver, shared by tests.

Many tests of one pytest session need the CRDs, so installing is idempotent and tolerant of
others doing the same at the same time: every CRD is server-side applied (forced, one field
manager), which is a no-op when it is already there unchanged, updates a stale copy, and never
fails on AlreadyExists or a conflict. :func:`install_crds` returns once every CRD is
``Established`` (and its resources answer a list), i.e. custom objects can be created.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import yaml

from kuberay.kube import Client, NotFound

ROOT = Path(__file__).resolve().parents[2]
CRD_DIR = ROOT / "manifests" / "crds"
FIELD_MANAGER = "kuberay-tests"
CRD_API_VERSION = "apiextensions.k8s.io/v1"

__all__ = ["CRD_DIR", "FIELD_MANAGER", "crd_established", "install_crds", "load_crds"]


def load_crds(directory: Path = CRD_DIR) -> list[dict[str, Any]]:
    """Every CustomResourceDefinition document in ``directory`` (sorted by file name)."""
    crds: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                crds.append(doc)
    return crds


def crd_established(crd: dict[str, Any]) -> bool:
    """Whether a CRD as read from the server is Established with its names accepted."""
    conditions = {
        c.get("type"): c.get("status") for c in (crd.get("status") or {}).get("conditions") or []
    }
    return conditions.get("Established") == "True" and conditions.get("NamesAccepted") == "True"


async def _wait_served(client: Client, crd: dict[str, Any], deadline: float) -> None:
    name = crd["metadata"]["name"]
    group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
    storage = next(v["name"] for v in crd["spec"]["versions"] if v.get("storage"))
    last: object = None
    while True:
        try:
            live = await client.get(CRD_API_VERSION, "CustomResourceDefinition", name)
            if crd_established(live):
                await client.request(
                    "GET", f"/apis/{group}/{storage}/{plural}", verb="list", params={"limit": 1}
                )
                return
            last = (live.get("status") or {}).get("conditions")
        except NotFound as exc:
            last = exc
        if time.monotonic() > deadline:
            raise TimeoutError(f"CRD {name} not established: {last!r}")
        await asyncio.sleep(0.1)


async def install_crds(
    client: Client, *, timeout: float = 180.0, directory: Path = CRD_DIR
) -> None:
    """Apply every CRD of ``directory`` (default ``manifests/crds``) and wait until all are
    Established and served."""
    crds = load_crds(directory)
    if not crds:
        raise FileNotFoundError(f"no CRDs in {directory}")
    await asyncio.gather(
        *(client.apply(crd, field_manager=FIELD_MANAGER, force=True) for crd in crds)
    )
    deadline = time.monotonic() + timeout
    await asyncio.gather(*(_wait_served(client, crd, deadline) for crd in crds))
