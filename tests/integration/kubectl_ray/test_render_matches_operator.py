"""``kubectl ray render`` equals what the operator creates, for every RayCluster sample.

Each sample is applied once through the apiserver with the operator running; every
create the operator sends is recorded. The rendered objects (from the same file,
rendered offline by the CLI) must be exactly those bodies, modulo what only the
apiserver can know (the cluster's uid, the random token, multi-host replica names).
"""

from __future__ import annotations

import contextlib
import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kuberay.kube import ApiError, Client
from tests.helpers import eventually
from tests.integration.kubectl_ray.conftest import Cli
from tests.integration.raycluster.conftest import start_operator
from tests.kuberay_samples import KUBERAY_SAMPLES as SAMPLES
from tests.kuberay_samples import requires_kuberay_samples

pytestmark = requires_kuberay_samples
REPLICA_NAME_LABEL = "ray.io/worker-group-replica-name"


def cluster_samples() -> list[Path]:
    found = []
    for path in sorted(SAMPLES.glob("*.yaml")):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        if sum(1 for d in docs if d.get("kind") == "RayCluster") == 1:
            found.append(path)
    return found


def normalize(obj: dict[str, Any], uid: str) -> str:
    """Comparable JSON: tokens and multi-host replica names blanked."""
    o = copy.deepcopy(obj)
    meta = o.setdefault("metadata", {})
    if o.get("kind") == "Secret":
        o.pop("data", None)
        o.pop("stringData", None)
    labels = meta.get("labels") or {}
    if REPLICA_NAME_LABEL in labels:
        labels[REPLICA_NAME_LABEL] = "<replica>"
    text = json.dumps(o, sort_keys=True)
    return text


async def _apply_dependencies(client: Client, docs: list[dict[str, Any]], ns: str) -> None:
    """The sample's other objects (ConfigMaps, Secrets, ServiceAccounts...), best effort."""
    for doc in docs:
        if doc.get("kind") == "RayCluster":
            continue
        body = copy.deepcopy(doc)
        body.setdefault("metadata", {})["namespace"] = ns
        # a kind this apiserver does not serve, or cluster-scoped and present: skipped
        with contextlib.suppress(ApiError):
            await client.create(body)


@pytest.mark.parametrize("sample", cluster_samples(), ids=lambda p: p.stem)
async def test_render_equals_operator_creates(
    sample: Path,
    cli: Cli,
    kclient: Client,
    namespace: str,
    kubeconfig_path: Path,
    tmp_path: Path,
) -> None:
    docs = [d for d in yaml.safe_load_all(sample.read_text()) if d]
    cluster_doc = next(d for d in docs if d.get("kind") == "RayCluster")

    recorder = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)
    created: list[dict[str, Any]] = []
    original = recorder.create

    async def record(obj: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        created.append(copy.deepcopy(obj))
        return await original(obj, **kwargs)

    recorder.create = record  # type: ignore[method-assign]
    try:
        await _apply_dependencies(kclient, docs, namespace)
        async with start_operator(recorder, namespace):
            body = copy.deepcopy(cluster_doc)
            body["metadata"]["namespace"] = namespace
            live = await kclient.create(body)
            # The same file, plus the uid only the apiserver knows (owner references and
            # the GCS-FT storage namespace derive from it).
            with_uid = tmp_path / sample.name
            stamped = copy.deepcopy(cluster_doc)
            stamped["metadata"]["uid"] = live["metadata"]["uid"]
            with_uid.write_text(yaml.safe_dump(stamped))
            rendered = await cli("render", "-f", str(with_uid), "-o", "json")
            if rendered.code != 0:
                # Render refused (invalid spec): the operator must create nothing either.
                assert "Error:" in rendered.err
                await eventually(
                    lambda: _invalid_condition(kclient, namespace, body["metadata"]["name"]),
                    message="InvalidSpec condition",
                )
                assert [c for c in created if c.get("kind") != "Event"] == []
                return
            expected = json.loads(rendered.out)["items"]
            uid = live["metadata"]["uid"]

            def children() -> list[dict[str, Any]]:
                return [c for c in created if c.get("kind") not in ("Event",)]

            await eventually(
                lambda: len(children()) >= len(expected),
                timeout=30,
                message=f"operator created {len(expected)} children",
            )
            want = sorted(
                normalize({**e, "metadata": {**e["metadata"], "namespace": namespace}}, uid)
                for e in expected
            )
            got = sorted(normalize(c, uid) for c in children())
            assert got == want
    finally:
        await recorder.close()


async def _invalid_condition(client: Client, ns: str, name: str) -> bool:
    obj = await client.get("ray.io/v1", "RayCluster", name, ns)
    return any(
        c.get("type") == "InvalidSpec" and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or []
    )
