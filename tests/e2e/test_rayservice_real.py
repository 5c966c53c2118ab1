"""RayService on real Ray: KubeRay's ``ray-service.sample.yaml`` on the real node.

The operator runs on the host (its ServiceAccount, shipped RBAC) and may dial the real
node's pod network, so Serve config submission, Serve status and the proxy health checks go
to the real Ray dashboards and proxies of the head pods.

* the sample reaches ``Ready`` and both of its Serve applications answer real HTTP requests
  through the serve Service's endpoints;
* changing the image tag (the other Ray image ``make images`` builds) starts a NewCluster
  upgrade; while it runs a bounded request loop (20 req/s) sends requests the way a
  kube-proxy client would, to a ready endpoint of the serve Service's EndpointSlices,
  resolved again for every request; the new cluster is promoted, the old one deleted, the
  new one serves, and no request failed.

The sample is changed only where this machine needs it:

* container resource *requests* shrunk so two clusters fit on the real node at once (the
  limits, from which Ray takes its CPU count, stay the sample's);
* pods cannot fetch the applications' ``working_dir`` from GitHub (no packet leaves the
  machine), so the two modules it names (``fruit``, ``conditional_dag``) are written here
  with the sample's deployment names and user configs, mounted from a ConfigMap and put on
  ``PYTHONPATH``; ``working_dir`` is dropped from the runtime environments;
* ``rayClusterDeletionDelaySeconds: 15`` (instead of the default 60) keeps the test short.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml

from kuberay.kube import Client, Conflict, NotFound
from tests.e2e.harness import TIMINGS, OperatorProcess, record_timing
from tests.e2e.realcluster import (
    RealCluster,
    RealIdentity,
    diagnose_namespace,
    host_operator,
    wait_for,
)
from tests.kuberay_samples import requires_kuberay_samples, sample

SAMPLE = sample("ray-service.sample.yaml")  # KubeRay's, unchanged
pytestmark = requires_kuberay_samples
OLD_IMAGE = "rayproject/ray:2.52.0"
NEW_VERSION = "2.60.0"  # hack/images.RAY_NEW_VERSION (checked below)
APPS_DIR = "/home/ray/serve_apps"
APPS_CONFIG_MAP = "serve-apps"
REQUESTS_PER_SECOND = 20

FRUIT_PY = '''\
"""The sample's fruit_app: three priced stands behind a market (prices from user_config)."""
from ray import serve
from starlette.requests import Request


class _Stand:
    def __init__(self) -> None:
        self.price = 0

    def reconfigure(self, config: dict) -> None:
        self.price = int(config["price"])

    def check_price(self, amount: int) -> int:
        return self.price * amount


@serve.deployment
class MangoStand(_Stand):
    pass


@serve.deployment
class OrangeStand(_Stand):
    pass


@serve.deployment
class PearStand(_Stand):
    pass


@serve.deployment
class FruitMarket:
    def __init__(self, mango, orange, pear) -> None:
        self.stands = {"MANGO": mango, "ORANGE": orange, "PEAR": pear}

    async def __call__(self, request: Request) -> int:
        fruit, amount = await request.json()
        return await self.stands[fruit].check_price.remote(int(amount))


deployment_graph = FruitMarket.bind(MangoStand.bind(), OrangeStand.bind(), PearStand.bind())
'''

CONDITIONAL_DAG_PY = '''\
"""The sample's math_app: a router sending ADD to the Adder and MUL to the Multiplier."""
from ray import serve
from starlette.requests import Request


@serve.deployment
class Adder:
    def __init__(self) -> None:
        self.increment = 0

    def reconfigure(self, config: dict) -> None:
        self.increment = int(config["increment"])

    def apply(self, value: int) -> int:
        return value + self.increment


@serve.deployment
class Multiplier:
    def __init__(self) -> None:
        self.factor = 1

    def reconfigure(self, config: dict) -> None:
        self.factor = int(config["factor"])

    def apply(self, value: int) -> int:
        return value * self.factor


@serve.deployment
class Router:
    def __init__(self, adder, multiplier) -> None:
        self.ops = {"ADD": adder, "MUL": multiplier}

    async def __call__(self, request: Request) -> int:
        op, value = await request.json()
        return await self.ops[op].apply.remote(int(value))


serve_dag = Router.bind(Adder.bind(), Multiplier.bind())
'''


@pytest.fixture(scope="module")
async def rayservice_operator(
    real_cluster: RealCluster, real_identity: RealIdentity
) -> AsyncIterator[OperatorProcess]:
    """kuberay-operator on the host, allowed to dial the real node's pod network. Leader
    election off: with two Ray clusters starting on 2 shared cores, a lease renewal can miss
    its 10 s deadline and the operator would exit mid-upgrade (seen here: load 12)."""
    async with host_operator(
        "rayservice-real-operator", real_cluster, real_identity, leader_election=False
    ) as op:
        yield op


# --------------------------------------------------------------------------- the sample


def rayservice_sample(name: str, ns: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """KubeRay's ray-service.sample.yaml as (RayService ``name`` in ``ns``, the ConfigMap
    holding its applications' code), changed as the module docstring says."""
    (rs,) = [d for d in yaml.safe_load_all(SAMPLE.read_text()) if d]
    rs["metadata"] = {"name": name, "namespace": ns}
    serve = yaml.safe_load(rs["spec"]["serveConfigV2"])
    for app in serve["applications"]:
        app["runtime_env"].pop("working_dir")
        if not app["runtime_env"]:
            app.pop("runtime_env")
    rs["spec"]["serveConfigV2"] = yaml.safe_dump(serve, sort_keys=False)
    rs["spec"]["rayClusterDeletionDelaySeconds"] = 15
    cluster = rs["spec"]["rayClusterConfig"]
    templates = [cluster["headGroupSpec"]["template"]] + [
        g["template"] for g in cluster["workerGroupSpecs"]
    ]
    for template in templates:
        pod = template["spec"]
        pod.setdefault("volumes", []).append(
            {"name": "serve-apps", "configMap": {"name": APPS_CONFIG_MAP}}
        )
        for container in pod["containers"]:
            container["resources"]["requests"] = {"cpu": "100m", "memory": "256Mi"}
            container.setdefault("env", []).append({"name": "PYTHONPATH", "value": APPS_DIR})
            container.setdefault("volumeMounts", []).append(
                {"name": "serve-apps", "mountPath": APPS_DIR}
            )
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": APPS_CONFIG_MAP, "namespace": ns},
        "data": {"fruit.py": FRUIT_PY, "conditional_dag.py": CONDITIONAL_DAG_PY},
    }
    return rs, config_map


def with_image(rs: dict[str, Any], version: str) -> dict[str, Any]:
    """``rs`` with every container on ``rayproject/ray:<version>`` and ``rayVersion`` set."""
    changed = copy.deepcopy(rs)
    cluster = changed["spec"]["rayClusterConfig"]
    cluster["rayVersion"] = version
    templates = [cluster["headGroupSpec"]["template"]] + [
        g["template"] for g in cluster["workerGroupSpecs"]
    ]
    for template in templates:
        for container in template["spec"]["containers"]:
            container["image"] = f"rayproject/ray:{version}"
    return changed


def test_sample_changes_are_the_ones_described() -> None:
    """Structure unchanged: same applications, deployments and groups; the new image is one
    ``make images`` builds."""
    from hack.release import images

    assert NEW_VERSION == images.RAY_NEW_VERSION
    assert OLD_IMAGE.split(":")[1] == images.RAY_VERSION
    (original,) = [d for d in yaml.safe_load_all(SAMPLE.read_text()) if d]
    rs, config_map = rayservice_sample("s", "ns")
    before = yaml.safe_load(original["spec"]["serveConfigV2"])["applications"]
    after = yaml.safe_load(rs["spec"]["serveConfigV2"])["applications"]
    for old, new in zip(before, after, strict=True):
        old.pop("runtime_env")
        assert old == new
    cluster = rs["spec"]["rayClusterConfig"]
    assert cluster["headGroupSpec"]["template"]["spec"]["containers"][0]["image"] == OLD_IMAGE
    assert [g["groupName"] for g in cluster["workerGroupSpecs"]] == ["small-group"]
    assert set(config_map["data"]) == {"fruit.py", "conditional_dag.py"}
    upgraded = with_image(rs, NEW_VERSION)["spec"]["rayClusterConfig"]
    assert upgraded["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["image"] == (
        f"rayproject/ray:{NEW_VERSION}"
    )


# --------------------------------------------------------------------------- fixtures


# --------------------------------------------------------------------------- helpers


async def diagnose(admin: Client, cluster: RealCluster, ns: str, name: str) -> str:
    """The RayService's status, the namespace's Events, pods, EndpointSlices, log tails."""
    return await diagnose_namespace(admin, cluster, ns, "RayService", name, endpoint_slices=True)


def _ready(rs: dict[str, Any]) -> bool:
    conditions = (rs.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _cluster(rs: dict[str, Any], which: str) -> str:
    return str(((rs.get("status") or {}).get(which) or {}).get("rayClusterName") or "")


async def upgrade_image(
    admin: Client,
    rs: dict[str, Any],
    old_cluster: str,
    *,
    label: str,
    promote_timeout: float,
    explain: Callable[[], Awaitable[str]],
) -> dict[str, Any]:
    """Change the RayService ``rs``'s image to ``NEW_VERSION``, wait until a new cluster is
    promoted (Ready, nothing pending) and ``old_cluster`` is deleted, recording both times
    under ``label``; then let 3 s of requests reach the new cluster alone. The promoted
    RayService."""
    meta = rs["metadata"]
    began = time.monotonic()
    for attempt in range(5):  # client-go's RetryOnConflict: the operator writes status too
        current = await admin.get("ray.io/v1", "RayService", meta["name"], meta["namespace"])
        current["spec"] = with_image(rs, NEW_VERSION)["spec"]
        try:
            await admin.update(current)
            break
        except Conflict:
            if attempt == 4:
                raise

    async def promoted() -> dict[str, Any] | None:
        now = await admin.get("ray.io/v1", "RayService", meta["name"], meta["namespace"])
        active = _cluster(now, "activeServiceStatus")
        pending = _cluster(now, "pendingServiceStatus")
        ok = active and active != old_cluster and not pending and _ready(now)
        return now if ok else None

    after: dict[str, Any] = await wait_for(
        "the new cluster promoted", promoted, promote_timeout, explain
    )
    record_timing(f"{label}: image changed -> promoted", time.monotonic() - began)

    async def old_gone() -> bool:
        try:
            await admin.get("ray.io/v1", "RayCluster", old_cluster, meta["namespace"])
        except NotFound:
            return True
        return False

    await wait_for("the old RayCluster deleted", old_gone, 90, explain)
    record_timing(f"{label}: image changed -> old cluster deleted", time.monotonic() - began)
    await asyncio.sleep(3)  # a few more requests against the new cluster alone
    return after


async def serve_endpoints(admin: Client, ns: str, service: str) -> list[tuple[str, int]]:
    """Ready (address, serve port) pairs of ``service``'s EndpointSlices, as kube-proxy
    would program them (ready endpoints; serving-but-terminating ones only if none is)."""
    slices, _ = await admin.list_all(
        "discovery.k8s.io/v1",
        "EndpointSlice",
        ns,
        label_selector=f"kubernetes.io/service-name={service}",
    )
    ready: list[tuple[str, int]] = []
    serving: list[tuple[str, int]] = []
    for item in slices:
        ports = [p["port"] for p in item.get("ports") or [] if p.get("name") == "serve"]
        if not ports:
            continue
        for endpoint in item.get("endpoints") or []:
            conditions = endpoint.get("conditions") or {}
            for address in endpoint.get("addresses") or []:
                if conditions.get("ready", True):
                    ready.append((address, ports[0]))
                elif conditions.get("serving") and conditions.get("terminating"):
                    serving.append((address, ports[0]))
    return ready or serving


def _post(address: str, port: int, path: str, body: Any) -> tuple[int, str]:
    """POST ``body`` as JSON to ``http://address:port/path``; (status, text)."""
    request = urllib.request.Request(
        f"http://{address}:{port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


async def ask(admin: Client, ns: str, service: str, path: str, body: Any) -> tuple[str, int, str]:
    """One request through the service: a ready endpoint, then POST; (address, status, text).
    Raises when there is no endpoint or the connection fails."""
    endpoints = await serve_endpoints(admin, ns, service)
    if not endpoints:
        raise LookupError(f"{service}: no ready endpoint")
    address, port = endpoints[int(time.monotonic() * 1000) % len(endpoints)]
    status, text = await asyncio.to_thread(_post, address, port, path, body)
    return address, status, text


@dataclass
class LoadResult:
    """What the request loop saw: counts, failures (time, what) and the addresses used."""

    sent: int = 0
    ok: int = 0
    failures: list[tuple[float, str]] = field(default_factory=list)
    addresses: dict[str, int] = field(default_factory=dict)


async def request_loop(
    admin: Client, ns: str, service: str, stop: asyncio.Event, result: LoadResult
) -> None:
    """``REQUESTS_PER_SECOND`` fruit requests (``["MANGO", 2]`` -> ``6``) until ``stop``;
    each resolves the endpoints again. Requests overlap if one is slow."""
    began = time.monotonic()
    pending: set[asyncio.Task[None]] = set()

    async def one() -> None:
        at = time.monotonic() - began
        try:
            address, status, text = await ask(admin, ns, service, "/fruit/", ["MANGO", 2])
        except Exception as exc:
            result.failures.append((at, f"{type(exc).__name__}: {exc}"))
            return
        result.addresses[address] = result.addresses.get(address, 0) + 1
        if status == 200 and text.strip() == "6":
            result.ok += 1
        else:
            result.failures.append((at, f"{address}: HTTP {status} {text[:200]!r}"))

    while not stop.is_set():
        result.sent += 1
        task = asyncio.create_task(one())
        pending.add(task)
        task.add_done_callback(pending.discard)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1 / REQUESTS_PER_SECOND)
    if pending:
        await asyncio.wait(pending, timeout=10)


# --------------------------------------------------------------------------- test


async def test_sample_serves_then_upgrades_image_without_failed_requests(
    real_cluster: RealCluster,
    real_admin: Client,
    rayservice_operator: OperatorProcess,
    rns: str,
) -> None:
    name = "rayservice-sample"
    service = f"{name}-serve-svc"
    rs, config_map = rayservice_sample(name, rns)
    await real_admin.create(config_map)
    began = time.monotonic()
    await real_admin.create(rs)

    async def explain() -> str:
        return await diagnose(real_admin, real_cluster, rns, name)

    async def get() -> dict[str, Any]:
        return await real_admin.get("ray.io/v1", "RayService", name, rns)

    async def ready() -> dict[str, Any] | None:
        current = await get()
        return current if _ready(current) else None

    first = await wait_for("RayService Ready", ready, 300, explain)
    record_timing("real RayService: created -> Ready", time.monotonic() - began)
    old_cluster = _cluster(first, "activeServiceStatus")
    assert old_cluster, first["status"]

    # both applications answer through the serve Service's endpoints
    async def answers() -> list[str] | None:
        try:
            got = [
                await ask(real_admin, rns, service, "/fruit/", ["MANGO", 2]),
                await ask(real_admin, rns, service, "/fruit/", ["PEAR", 3]),
                await ask(real_admin, rns, service, "/calc/", ["ADD", 1]),
                await ask(real_admin, rns, service, "/calc/", ["MUL", 2]),
            ]
        except (LookupError, OSError):
            return None
        texts = [text.strip() for _, status, text in got if status == 200]
        return texts if len(texts) == 4 else None

    texts = await wait_for("the Serve applications answer", answers, 60, explain)
    assert texts == ["6", "3", "4", "10"], texts  # prices 3, 1; increment 3; factor 5
    old_addresses = {a for a, _ in await serve_endpoints(real_admin, rns, service)}

    # the image change: a NewCluster upgrade under load
    stop = asyncio.Event()
    load = LoadResult()
    loop = asyncio.create_task(request_loop(real_admin, rns, service, stop, load))
    try:
        after = await upgrade_image(
            real_admin,
            rs,
            old_cluster,
            label="real RayService",
            promote_timeout=360,
            explain=explain,
        )
    finally:
        stop.set()
        await loop
    new_cluster = _cluster(after, "activeServiceStatus")
    new = await real_admin.get("ray.io/v1", "RayCluster", new_cluster, rns)
    head = new["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert head["image"] == f"rayproject/ray:{NEW_VERSION}"
    TIMINGS.setdefault("real RayService upgrade: requests sent / ok / failed", []).extend(
        [load.sent, load.ok, len(load.failures)]
    )
    new_addresses = {a for a, _ in await serve_endpoints(real_admin, rns, service)}
    assert new_addresses and not old_addresses & new_addresses, (old_addresses, new_addresses)
    # the loop reached both clusters, and every request got the right answer
    assert old_addresses & set(load.addresses), (old_addresses, load.addresses)
    assert new_addresses & set(load.addresses), (new_addresses, load.addresses)
    assert not load.failures, (
        f"{len(load.failures)} of {load.sent} requests failed during the upgrade: "
        f"{load.failures[:20]}"
    )
    assert load.ok == load.sent
    texts = await wait_for("the new cluster's applications answer", answers, 30, explain)
    assert texts == ["6", "3", "4", "10"], texts
