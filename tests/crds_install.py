"""Install the ray.io CRDs from manifests/crds into a cluster (idempotent)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml

from kuberay.kube import Client

CRD_DIR = Path(__file__).resolve().parents[1] / "manifests" / "crds"


def crd_documents() -> list[dict[str, Any]]:
    """Every CRD object under manifests/crds."""
    docs: list[dict[str, Any]] = []
    for path in sorted(CRD_DIR.glob("*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


async def install_crds(client: Client, timeout: float = 60.0) -> None:
    """Server-side apply every CRD and wait until each is Established."""
    names = []
    for doc in crd_documents():
        await client.apply(doc, field_manager="kuberay-tests", force=True)
        names.append(doc["metadata"]["name"])
    async with asyncio.timeout(timeout):
        for name in names:
            while True:
                crd = await client.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)
                conds = {
                    c["type"]: c["status"]
                    for c in (crd.get("status") or {}).get("conditions") or []
                }
                if conds.get("Established") == "True":
                    break
                await asyncio.sleep(0.2)
