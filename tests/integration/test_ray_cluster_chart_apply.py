"""Every golden case of the ray-cluster chart is accepted by a real kube-apiserver with the
ray.io CRDs (server-side apply, ``dryRun=All``: validated against the CRD schemas, nothing
stored), so the committed objects are RayClusters the apiserver takes, not just YAML."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kuberay.kube import Client
from kuberay.testing.crds import install_crds
from tests.integration.test_manifests import dry_run_apply, namespaces  # noqa: F401
from tests.unit.manifests.ray_cluster_chart_cases import CASES, needs_helm, render_case


def _within(wrote: Any, stored: Any) -> bool:
    """Whether everything in ``wrote`` is in ``stored`` (which may have more map keys)."""
    if isinstance(wrote, dict):
        return isinstance(stored, dict) and all(
            k in stored and _within(v, stored[k]) for k, v in wrote.items()
        )
    if isinstance(wrote, list):
        return (
            isinstance(stored, list)
            and len(wrote) == len(stored)
            and all(_within(w, s) for w, s in zip(wrote, stored, strict=True))
        )
    return bool(wrote == stored)


@needs_helm
async def test_rendered_cases_dry_run_apply(
    kclient: Client,
    namespaces: Callable[[], Any],  # noqa: F811
) -> None:
    await install_crds(kclient)
    ns = await namespaces()
    objs = [o for case in CASES for o in render_case(case, namespace=ns)]
    assert sum(o["kind"] == "RayCluster" for o in objs) == len(CASES)
    for obj in objs:
        obj["metadata"].setdefault("namespace", ns)
        stored = await dry_run_apply(kclient, obj)
        assert stored is not None
        if obj["kind"] == "RayCluster":
            # nothing pruned by the schema: every field the chart wrote is kept (the
            # apiserver only adds defaults)
            assert _within(obj["spec"], stored["spec"])
