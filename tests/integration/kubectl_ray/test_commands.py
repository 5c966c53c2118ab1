"""``kubectl ray`` get/create/delete/scale/version against the real apiserver, with the
operator running where the command's output depends on it."""

from __future__ import annotations

import json
from typing import Any

import yaml

from kuberay.kube import Client, NotFound
from tests.helpers import eventually
from tests.integration.kubectl_ray.conftest import Cli
from tests.integration.raycluster.conftest import Operator
from tests.integration.raycluster.helpers import all_running, get_cluster, pods_of


async def test_create_get_scale_delete(
    operator: Operator, cli: Cli, kclient: Client, namespace: str
) -> None:
    created = await cli(
        "create", "cluster", "demo", "--worker-replicas", "2", "--head-cpu", "1",
        "--labels", "team=ml",
    )  # fmt: skip
    assert created.code == 0, created.err
    assert created.out == "Created Ray cluster: demo\n"
    rc = await get_cluster(kclient, namespace, "demo")
    assert rc["metadata"]["labels"] == {"team": "ml"}
    assert rc["spec"]["workerGroupSpecs"][0]["replicas"] == 2

    again = await cli("create", "cluster", "demo")
    assert again.code == 1
    assert f"the Ray cluster demo in namespace {namespace} already exists" in again.err

    # The operator makes the pods; once they run, get shows the provisioned cluster.
    await eventually(lambda: _count_pods(kclient, namespace, "demo", 3), timeout=30)
    await all_running(kclient, namespace, "demo")

    async def provisioned() -> str | None:
        out = (await cli("get", "cluster")).out
        return out if "RayClusterProvisioned" in out else None

    table = await eventually(provisioned, timeout=30, message="provisioned in get cluster")
    header, row = table.splitlines()[:2]
    assert header.split()[:3] == ["NAME", "NAMESPACE", "DESIRED"]
    assert row.split()[:4] == ["demo", namespace, "2", "2"]
    assert "ready" in row.split()

    as_json = json.loads((await cli("get", "cluster", "demo", "-o", "json")).out)
    assert as_json["metadata"]["name"] == "demo"
    listed = yaml.safe_load((await cli("get", "clusters", "-o", "yaml")).out)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["demo"]

    nodes = (await cli("get", "nodes", "-c", "demo")).out.splitlines()
    assert nodes[0].split()[:2] == ["NAME", "CPUS"]
    assert sorted(line.split()[-3] for line in nodes[1:]) == ["head", "worker", "worker"]

    groups = (await cli("get", "workergroup", "-c", "demo")).out.splitlines()
    assert groups[0].split() == [
        "NAME",
        "MIN",
        "MAX",
        "REPLICAS",
        "CPUS",
        "GPUS",
        "TPUS",
        "MEMORY",
        "CLUSTER",
    ]
    assert groups[1].split()[:5] == ["default-group", "0", "2147483647", "2/2", "4"]
    missing = await cli("get", "workergroup", "nope", "-c", "demo")
    assert missing.code == 1
    assert (
        f"Ray worker group nope not found in namespace {namespace} in Ray cluster demo"
        in missing.err
    )

    scaled = await cli("scale", "cluster", "demo", "-w", "default-group", "-r", "3")
    assert scaled.code == 0, scaled.err
    assert "(Scaled Replicas: 2 to 3)" in scaled.out
    await eventually(lambda: _count_pods(kclient, namespace, "demo", 4), timeout=30)
    same = await cli("scale", "cluster", "demo", "-w", "default-group", "-r", "3")
    assert "already matches the requested configuration. Skipping." in same.out
    # --wait (beyond KubeRay): the third worker has no kubelet yet, so the wait times out
    # naming the progress; once the pods run it returns
    wait = ["scale", "cluster", "demo", "-w", "default-group", "-r", "3", "--wait"]
    stuck = await cli(*wait, "--timeout", "1s")
    assert stuck.code == 1
    assert "timed out waiting for worker group default-group of demo" in stuck.err
    assert "pods ready 2/3" in stuck.err
    await all_running(kclient, namespace, "demo")
    waited = await cli(*wait, "--timeout", "60s")
    assert waited.code == 0, waited.err
    assert waited.out.endswith("Worker group default-group of Ray cluster demo has 3 ready pods\n")
    nogroup = await cli("scale", "cluster", "demo", "-w", "x", "-r", "1")
    assert nogroup.code == 1 and "Available worker groups: default-group" in nogroup.err

    added = await cli("create", "workergroup", "gpu", "-c", "demo", "--worker-replicas", "1")
    assert added.code == 0, added.err
    rc = await get_cluster(kclient, namespace, "demo")
    assert [g["groupName"] for g in rc["spec"]["workerGroupSpecs"]] == ["default-group", "gpu"]

    declined = await cli("delete", "demo", stdin="n\n")
    assert "Canceled deletion." in declined.out
    assert await get_cluster(kclient, namespace, "demo")
    deleted = await cli("delete", "raycluster/demo", "-y")
    assert deleted.code == 0 and deleted.out == "Deleted raycluster demo\n"

    async def gone() -> bool:
        try:
            await kclient.get("ray.io/v1", "RayCluster", "demo", namespace)
        except NotFound:
            return True
        return False

    await eventually(gone, timeout=30)
    nothing = await cli("get", "cluster", "demo")
    assert (
        nothing.code == 1 and f"Ray cluster demo not found in namespace {namespace}" in nothing.err
    )


async def _count_pods(client: Client, ns: str, cluster: str, n: int) -> bool:
    return len(await pods_of(client, ns, cluster)) == n


async def test_create_wait_times_out_with_progress(operator: Operator, cli: Cli) -> None:
    result = await cli("create", "cluster", "slow", "--wait", "--timeout", "3s")
    assert result.code == 1
    assert "Waiting for Ray cluster slow" in result.err
    assert "timed out waiting for Ray cluster slow" in result.err
    assert "kubectl ray why raycluster/slow" in result.err


async def test_get_token(cli: Cli, kclient: Client, namespace: str) -> None:
    body: dict[str, Any] = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "secure", "namespace": namespace},
        "spec": {
            "rayVersion": "2.52.0",
            "authOptions": {"mode": "token"},
            "headGroupSpec": {
                "template": {
                    "spec": {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}
                }
            },
        },
    }
    await kclient.create(body)
    await kclient.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "secure", "namespace": namespace},
            "stringData": {"auth_token": "tok-123"},
        }
    )
    assert (await cli("get", "token", "secure")).out == "tok-123"
    assert json.loads((await cli("get", "token", "secure", "-o", "json")).out)["token"] == "tok-123"


async def test_version_without_operator_deployment(cli: Cli) -> None:
    result = await cli("version")
    assert result.code == 0
    assert result.out.startswith("kubectl ray plugin version: ")
    assert "warning: KubeRay operator installation cannot be found" in result.out


async def test_unreachable_apiserver_is_one_line(tmp_path: Any, namespace: str) -> None:
    from tests.integration.kubectl_ray.conftest import Cli as _Cli

    config = tmp_path / "kc"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "x",
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
            }
        )
    )
    result = await _Cli(config, namespace)("get", "cluster")
    assert result.code == 1
    assert result.err.startswith("Error: cannot reach the Kubernetes API server")
    assert "Traceback" not in result.err


async def test_all_namespaces_lists_every_namespace(
    cli: Cli, kclient: Client, namespace: str
) -> None:
    from tests.integration.raycluster.helpers import raycluster

    other = f"{namespace}-b"
    await kclient.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}})
    try:
        await kclient.create(raycluster("one", namespace, replicas=1))
        await kclient.create(raycluster("two", other, replicas=1))
        mine = (await cli("get", "workergroups")).out.splitlines()
        assert mine[0].split()[0] == "NAME" and len(mine) == 2
        everywhere = (await cli("get", "workergroups", "-A")).out.splitlines()
        assert everywhere[0].split()[:2] == ["NAMESPACE", "NAME"]
        rows = {(line.split()[0], line.split()[-1]) for line in everywhere[1:]}
        assert {(namespace, "one"), (other, "two")} <= rows
        # -n wins over the kubeconfig context's namespace; --context must exist
        bad = await cli("get", "cluster", "--context", "nope", namespace=False)
        assert bad.code == 1 and 'context was not found for specified context: "nope"' in bad.err
    finally:
        await kclient.delete("v1", "Namespace", other)
