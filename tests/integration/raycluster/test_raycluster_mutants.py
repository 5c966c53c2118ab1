"""Issue 14: every hostile RayCluster gets a visible answer, and the operator stays up.

``MUTANTS`` (200) mutants of KubeRay's sample clusters (``tests/mutants.py``, fixed seed) are
posted through the real apiserver to a namespace watched by the in-process operator. Each must
get an answer the user can see:

* rejected by the apiserver (422/400: the typed CRD schema names the field), or
* admitted and answered by the operator: a head pod was created, or a Warning Event names the
  object (``InvalidRayClusterSpec``/``InvalidRayClusterMetadata`` with an ``InvalidSpec``
  condition naming the field path, or ``FailedToCreate*`` when the apiserver refuses a child).

Mutants that would ask for more than ``MAX_PODS`` pods are redrawn (bounds the test, not the
operator). A well-formed cluster created afterwards must still get its head pod.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from kuberay.api.v1.rules import calculate_desired_replicas
from kuberay.kube import ApiError, Client
from tests.helpers import eventually
from tests.integration.raycluster.conftest import Operator
from tests.integration.raycluster.helpers import condition, raycluster
from tests.kuberay_samples import requires_kuberay_samples
from tests.mutants import mutate, sample_clusters

MUTANTS = 200
SEED = 14
MAX_PODS = 8
INVALID_REASONS = ("InvalidRayClusterSpec", "InvalidRayClusterMetadata", "InvalidRayClusterStatus")

SAMPLES = sample_clusters()
pytestmark = requires_kuberay_samples


def _small(cluster: dict[str, Any]) -> bool:
    try:
        return calculate_desired_replicas(cluster) <= MAX_PODS
    except Exception:
        return True  # not computable: the operator will not get far with it either


def _mutants(namespace: str) -> list[tuple[str, list[str], dict[str, Any]]]:
    rng = random.Random(SEED)
    out: list[tuple[str, list[str], dict[str, Any]]] = []
    while len(out) < MUTANTS:
        sample, base = rng.choice(SAMPLES)
        mutant, edits = mutate(base, rng)
        if not _small(mutant):
            continue
        name = f"m-{len(out):03d}"
        mutant["metadata"] = {**mutant["metadata"], "name": name, "namespace": namespace}
        mutant["metadata"].pop("uid", None)
        out.append((name, [sample, *edits], mutant))
    return out


async def test_every_mutant_gets_an_answer(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    mutants = _mutants(namespace)
    sem = asyncio.Semaphore(8)
    rejected: dict[str, str] = {}
    admitted: list[str] = []

    async def post(name: str, body: dict[str, Any]) -> None:
        async with sem:
            try:
                await kclient.create(body)
            except ApiError as exc:
                assert exc.status in (400, 422), f"{name}: {exc}"
                rejected[name] = str(exc)
            else:
                admitted.append(name)

    await asyncio.gather(*(post(name, body) for name, _, body in mutants))
    assert len(rejected) + len(admitted) == MUTANTS

    async def answers() -> dict[str, str]:
        pods, _ = await kclient.list_all("v1", "Pod", namespace)
        heads = {
            p["metadata"]["labels"].get("ray.io/cluster")
            for p in pods
            if (p["metadata"].get("labels") or {}).get("ray.io/node-type") == "head"
        }
        events, _ = await kclient.list_all("v1", "Event", namespace)
        warned: dict[str, str] = {}
        for e in events:
            if e.get("type") == "Warning":
                warned.setdefault((e.get("involvedObject") or {}).get("name", ""), e["reason"])
        out: dict[str, str] = {}
        for name in admitted:
            if name in heads:
                out[name] = "head pod"
            elif name in warned:
                out[name] = warned[name]
        return out

    async def all_answered() -> dict[str, str] | None:
        got = await answers()
        return got if len(got) == len(admitted) else None

    try:
        answered = await eventually(all_answered, timeout=90, interval=1.0, message="answers")
    except AssertionError:
        got = await answers()
        silent = [(n, why) for n, why, _ in mutants if n in admitted and n not in got]
        pytest.fail(f"{len(silent)} admitted mutants got no answer: {silent[:10]}")

    invalid = [n for n, reason in answered.items() if reason in INVALID_REASONS]
    for name in invalid:
        rc = await kclient.get("ray.io/v1", "RayCluster", name, namespace)
        cond = condition(rc, "InvalidSpec")
        assert cond is not None and cond["status"] == "True", name
        assert ": " in cond["message"] and (
            "spec" in cond["message"] or "metadata" in cond["message"]
        )
        pods, _ = await kclient.list_all(
            "v1", "Pod", namespace, label_selector=f"ray.io/cluster={name}"
        )
        assert pods == [], f"{name}: invalid but has pods"

    assert not operator.task.done(), "the operator stopped"
    await kclient.create(raycluster("after-mutants", namespace, replicas=0))

    async def head_of_good_cluster() -> bool:
        pods, _ = await kclient.list_all(
            "v1", "Pod", namespace, label_selector="ray.io/cluster=after-mutants"
        )
        return bool(pods)

    await eventually(head_of_good_cluster, timeout=30, message="head pod after the mutants")
    kinds: dict[str, int] = {}
    for reason in answered.values():
        kinds[reason] = kinds.get(reason, 0) + 1
    print(f"mutants={MUTANTS} rejected={len(rejected)} admitted={len(admitted)} answers={kinds}")
