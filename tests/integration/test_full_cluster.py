"""The full local cluster (``ControlPlane(full=True)``): controllers, scheduler, kwok nodes.

Pods get scheduled onto kwok's fake nodes and become Running + Ready, Jobs complete, the
garbage collector and the namespace controller work, and ``up --full`` stops cleanly.
Timings (start-up, pod create -> Ready, a burst of pods) are printed (``pytest -s``) and
recorded as junit properties.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

import aiohttp
import pytest
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

from kuberay.testing.envtest import (
    FAKE_NODE_CAPACITY,
    FAKE_POD_CIDR,
    BuildError,
    ControlPlane,
    ControlPlaneError,
    fake_node_ip,
    iter_component_pids,
)
from tests.listening import listening_sockets

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 60.0  # generous: CI machines are shared and busy
BURST_PODS = 200

T = TypeVar("T")
RecordProperty = Callable[[str, object], None]


async def _until(
    check: Callable[[], Awaitable[T | None]],
    *,
    timeout: float = READY_TIMEOUT,
    interval: float = 0.05,
    what: str,
) -> T:
    """Await ``check`` until it returns something other than None (returned)."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        try:
            result = await check()
            if result is not None:
                return result
        except (ApiException, OSError, aiohttp.ClientError, TimeoutError) as exc:
            last = exc
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout}s (last error: {last!r})")
        await asyncio.sleep(interval)


def _report(record_property: RecordProperty, name: str, value: float | int) -> None:
    record_property(name, value)
    shown = f"{value:.3f}" if isinstance(value, float) else str(value)
    print(f"\n[full-cluster] {name} = {shown}")


@pytest.fixture(scope="module")
def full_cp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    cp = ControlPlane(tmp_path_factory.mktemp("full-controlplane"), full=True)
    try:
        cp.start()
    except BuildError as exc:
        pytest.fail(f"cannot build control-plane binaries: {exc}", pytrace=False)
    except ControlPlaneError as exc:
        pytest.fail(f"full control plane failed to start: {exc}", pytrace=False)
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture
async def api(full_cp: ControlPlane) -> AsyncIterator[client.ApiClient]:
    cfg = client.Configuration()
    await config.load_kube_config(config_file=str(full_cp.kubeconfig), client_configuration=cfg)
    cfg.connection_pool_maxsize = 64
    async with client.ApiClient(cfg) as api_client:
        yield api_client


async def _create_namespace(core: client.CoreV1Api) -> str:
    name = f"full-{uuid.uuid4().hex[:8]}"
    await core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    return name


@pytest.fixture
async def ns(api: client.ApiClient) -> AsyncIterator[str]:
    core = client.CoreV1Api(api)
    name = await _create_namespace(core)
    try:
        yield name
    finally:
        try:
            await core.delete_namespace(name)  # completes: kcm's namespace controller runs
        except ApiException as exc:
            if exc.status != 404:
                raise
        except (OSError, aiohttp.ClientError, TimeoutError):  # apiserver gone: nothing to do
            pass


def _pod(name: str, *, owner: client.V1OwnerReference | None = None) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(
            name=name, labels={"app": "kwok-test"}, owner_references=[owner] if owner else None
        ),
        spec=client.V1PodSpec(
            containers=[
                client.V1Container(
                    name="main",
                    image="registry.invalid/never-pulled:1",
                    resources=client.V1ResourceRequirements(requests={"cpu": "1", "memory": "1Gi"}),
                )
            ],
            termination_grace_period_seconds=30,
        ),
    )


def _conditions(pod: client.V1Pod) -> dict[str, str]:
    return {c.type: c.status for c in pod.status.conditions or ()}


def _running_ready(pod: client.V1Pod) -> bool:
    return pod.status.phase == "Running" and _conditions(pod).get("Ready") == "True"


async def _wait_pod(
    core: client.CoreV1Api,
    namespace: str,
    name: str,
    check: Callable[[client.V1Pod], bool],
    timeout: float = READY_TIMEOUT,
) -> client.V1Pod:
    async def poll() -> client.V1Pod | None:
        pod = await core.read_namespaced_pod(name, namespace)
        return pod if check(pod) else None

    return await _until(poll, timeout=timeout, what=f"pod {namespace}/{name}")


async def _gone(read: Callable[[], Awaitable[Any]]) -> Literal[True] | None:
    """True once ``read`` answers 404."""
    try:
        await read()
    except ApiException as exc:
        if exc.status == 404:
            return True
        raise
    return None


# --------------------------------------------------------------------------- tests


def test_no_component_listens_on_a_wildcard_address(full_cp: ControlPlane) -> None:
    # On a laptop on a shared network a wildcard listener would expose the dev cluster's
    # admin API (and the rest) to every other machine there: loopback only.
    listeners = listening_sockets(full_cp.pids().values())
    assert {lst.process for lst in listeners} >= {"etcd", "kube-apiserver", "kwok"}
    assert [
        str(lst) for lst in listeners if not ipaddress.ip_address(lst.address).is_loopback
    ] == []


async def test_fake_nodes_ready(
    full_cp: ControlPlane, api: client.ApiClient, record_property: RecordProperty
) -> None:
    _report(record_property, "start_seconds", full_cp.start_seconds)
    for name, seconds in full_cp.startup_seconds.items():
        _report(record_property, f"startup_seconds.{name}", seconds)
    assert full_cp.full
    assert full_cp.node_names == [f"kwok-node-{i}" for i in range(4)]
    assert set(full_cp.pids()) == {
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "kwok",
    }
    nodes = {n.metadata.name: n for n in (await client.CoreV1Api(api).list_node()).items}
    assert set(full_cp.node_names) <= set(nodes)
    for i, name in enumerate(full_cp.node_names):
        node = nodes[name]
        assert {c.type: c.status for c in node.status.conditions}["Ready"] == "True"
        assert not node.spec.taints
        assert node.status.allocatable["nvidia.com/gpu"] == FAKE_NODE_CAPACITY["nvidia.com/gpu"]
        assert node.status.allocatable["google.com/tpu"] == FAKE_NODE_CAPACITY["google.com/tpu"]
        assert node.status.capacity["memory"] == "4Ti"
        ips = [a.address for a in node.status.addresses if a.type == "InternalIP"]
        assert ips == [fake_node_ip(i)]


async def test_pod_runs_and_becomes_ready(
    full_cp: ControlPlane, api: client.ApiClient, ns: str, record_property: RecordProperty
) -> None:
    core = client.CoreV1Api(api)
    started = time.monotonic()
    await core.create_namespaced_pod(ns, _pod("plain"))
    pod = await _wait_pod(core, ns, "plain", _running_ready)
    latency = time.monotonic() - started
    _report(record_property, "pod_create_to_ready_seconds", latency)
    assert latency < READY_TIMEOUT

    assert pod.spec.node_name in full_cp.node_names
    conditions = _conditions(pod)
    for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready"):
        assert conditions.get(kind) == "True", conditions
    assert pod.status.pod_ip
    assert ipaddress.ip_address(pod.status.pod_ip) in ipaddress.ip_network(FAKE_POD_CIDR)
    assert pod.status.host_ip == fake_node_ip(full_cp.node_names.index(pod.spec.node_name))
    assert pod.status.start_time is not None
    [status] = pod.status.container_statuses
    assert status.name == "main"
    assert status.ready
    assert status.state.running is not None

    # graceful deletion is finished by kwok (a kubelet's job)
    await core.delete_namespaced_pod("plain", ns)
    await _until(
        lambda: _gone(lambda: core.read_namespaced_pod("plain", ns)),
        timeout=READY_TIMEOUT,
        what="pod deletion",
    )


async def test_job_completes(api: client.ApiClient, ns: str) -> None:
    batch = client.BatchV1Api(api)
    core = client.CoreV1Api(api)
    template = _pod("unused")
    template.spec.restart_policy = "Never"
    job = client.V1Job(
        metadata=client.V1ObjectMeta(name="once"),
        spec=client.V1JobSpec(
            backoff_limit=0,
            template=client.V1PodTemplateSpec(spec=template.spec),
        ),
    )
    await batch.create_namespaced_job(ns, job)

    async def complete() -> client.V1Job | None:
        got = await batch.read_namespaced_job_status("once", ns)
        done = any(c.type == "Complete" and c.status == "True" for c in got.status.conditions or ())
        return got if done else None

    finished = await _until(complete, timeout=60, what="job completion")
    assert finished.status.succeeded == 1
    assert finished.status.completion_time is not None
    pods = (await core.list_namespaced_pod(ns, label_selector="job-name=once")).items
    assert [p.status.phase for p in pods] == ["Succeeded"]
    assert pods[0].status.container_statuses[0].state.terminated.exit_code == 0


async def test_garbage_collector_deletes_dependents(api: client.ApiClient, ns: str) -> None:
    core = client.CoreV1Api(api)
    owner = await core.create_namespaced_config_map(
        ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="owner"))
    )
    ref = client.V1OwnerReference(
        api_version="v1",
        kind="ConfigMap",
        name="owner",
        uid=owner.metadata.uid,
        block_owner_deletion=False,
    )
    await core.create_namespaced_pod(ns, _pod("dependent", owner=ref))
    await _wait_pod(core, ns, "dependent", _running_ready)

    await core.delete_namespaced_config_map("owner", ns)
    await _until(
        lambda: _gone(lambda: core.read_namespaced_pod("dependent", ns)),
        timeout=60,
        what="garbage collection of the dependent pod",
    )


async def test_namespace_deletion_completes(
    api: client.ApiClient, record_property: RecordProperty
) -> None:
    core = client.CoreV1Api(api)
    name = await _create_namespace(core)
    await core.create_namespaced_config_map(
        name, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm"), data={"k": "v"})
    )
    await core.create_namespaced_pod(name, _pod("p"))
    await _wait_pod(core, name, "p", _running_ready)

    started = time.monotonic()
    await core.delete_namespace(name)
    await _until(
        lambda: _gone(lambda: core.read_namespace(name)),
        timeout=60,
        interval=0.2,
        what=f"deletion of namespace {name}",
    )
    _report(record_property, "namespace_delete_seconds", time.monotonic() - started)


async def test_burst_of_pods_becomes_ready(
    full_cp: ControlPlane, api: client.ApiClient, ns: str, record_property: RecordProperty
) -> None:
    core = client.CoreV1Api(api)
    limit = asyncio.Semaphore(32)

    async def create(i: int) -> None:
        async with limit:
            await core.create_namespaced_pod(ns, _pod(f"burst-{i:03d}"))

    started = time.monotonic()
    await asyncio.gather(*(create(i) for i in range(BURST_PODS)))
    created = time.monotonic() - started

    async def all_ready() -> list[client.V1Pod] | None:
        pods = (await core.list_namespaced_pod(ns)).items
        ready = [p for p in pods if _running_ready(p)]
        return pods if len(ready) == BURST_PODS else None

    pods = await _until(all_ready, timeout=180, interval=0.25, what=f"{BURST_PODS} pods Ready")
    elapsed = time.monotonic() - started
    _report(record_property, "burst_pods", BURST_PODS)
    _report(record_property, "burst_create_seconds", created)
    _report(record_property, "burst_all_ready_seconds", elapsed)
    assert len({p.status.pod_ip for p in pods}) == BURST_PODS  # no pod IP handed out twice
    assert {p.spec.node_name for p in pods} <= set(full_cp.node_names)


async def test_restart_apiserver_components_reconnect(
    full_cp: ControlPlane, api: client.ApiClient, ns: str
) -> None:
    core = client.CoreV1Api(api)
    seconds = full_cp.restart_apiserver()
    assert seconds < full_cp.start_timeout

    async def create() -> client.V1Pod:
        pod: client.V1Pod = await core.create_namespaced_pod(ns, _pod("after-restart"))
        return pod

    deadline = time.monotonic() + 30
    while True:  # the same client reconnects; retry through the first refused connections
        try:
            await create()
            break
        except (OSError, aiohttp.ClientError, TimeoutError):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.2)
    # scheduler and kwok picked up their watches again
    await _wait_pod(core, ns, "after-restart", _running_ready, timeout=60)
    assert set(full_cp.pids()) == {
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "kwok",
    }
    assert full_cp.unready_nodes() == []


def test_cli_up_full_sigterm(tmp_path: Path, record_property: RecordProperty) -> None:
    workdir = tmp_path / "cp"
    kubeconfig = workdir / "kubeconfig"
    out_path = tmp_path / "up.out"
    with out_path.open("wb") as out:
        started = time.monotonic()
        proc = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "hack" / "controlplane.py"),
                "up",
                "--full",
                "--dir",
                str(workdir),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
        try:
            deadline = time.monotonic() + 180
            while f"export KUBECONFIG={kubeconfig}" not in out_path.read_text():
                assert proc.poll() is None, out_path.read_text()
                assert time.monotonic() < deadline, "never became ready"
                time.sleep(0.1)
            _report(record_property, "cli_up_full_seconds", time.monotonic() - started)
            assert kubeconfig.exists()
            commands = " ".join(cmd for _, cmd in iter_component_pids(workdir))
            for binary in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"):
                assert f"/{binary} " in commands, commands
            assert "/kwok " in commands, commands

            stopping = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0, out_path.read_text()
            _report(record_property, "cli_stop_seconds", time.monotonic() - stopping)
            leftovers = list(iter_component_pids(workdir))
            assert leftovers == [], leftovers
            assert not kubeconfig.exists()
            assert not (workdir / "controlplane.pid").exists()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for pid, _ in iter_component_pids(workdir):
                os.kill(pid, signal.SIGKILL)
