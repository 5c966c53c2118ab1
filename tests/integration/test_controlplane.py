"""The local control plane (hack/controlplane.py) behaves like a real apiserver."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import aiohttp
import pytest
from kubernetes_asyncio import client, config, watch
from kubernetes_asyncio.client.exceptions import ApiException

from kuberay.testing.envtest import KUBERNETES_VERSION, ControlPlane, iter_component_pids
from tests.listening import listening_sockets

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def _local(control_plane: object) -> ControlPlane:
    """The session ControlPlane, or skip when reusing a cluster (``ExistingCluster``)."""
    if not isinstance(control_plane, ControlPlane):
        pytest.skip("needs the locally started control plane (KUBERAY_TEST_KUBECONFIG is set)")
    return control_plane


async def _eventually(call: Callable[[], Awaitable[T]], timeout: float = 30.0) -> T:
    """Retry ``call`` through transient connection errors (e.g. right after a restart)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await call()
        except (TimeoutError, aiohttp.ClientError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def _expect_watch_gone(list_fn: Callable[..., object], namespace: str, rv: str) -> None:
    w = watch.Watch()
    with pytest.raises(ApiException) as info:
        async with w:
            async for _ in w.stream(list_fn, namespace, resource_version=rv, timeout_seconds=10):
                pass
    assert info.value.status == 410, info.value


def _configmap(name: str, data: dict[str, str]) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data=data)


async def test_version(api_client: client.ApiClient) -> None:
    info = await client.VersionApi(api_client).get_code()
    assert info.git_version == KUBERNETES_VERSION == "v1.36.3"


def test_etcd_and_apiserver_listen_on_loopback_only(control_plane: object) -> None:
    cp = _local(control_plane)
    listeners = listening_sockets(cp.pids().values())
    assert {(lst.process, lst.port) for lst in listeners} >= {("kube-apiserver", cp.apiserver_port)}
    assert {lst.address for lst in listeners} == {"127.0.0.1"}, [str(x) for x in listeners]


async def test_configmap_roundtrip(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    await core.create_namespaced_config_map(namespace, _configmap("cm", {"k": "v"}))
    got = await core.read_namespaced_config_map("cm", namespace)
    assert got.data == {"k": "v"}
    assert got.metadata.namespace == namespace


async def test_watch_expired_after_compaction(
    control_plane: object, api_client: client.ApiClient, namespace: str
) -> None:
    cp = _local(control_plane)
    core = client.CoreV1Api(api_client)

    def event(name: str) -> client.CoreV1Event:
        return client.CoreV1Event(
            metadata=client.V1ObjectMeta(name=name),
            involved_object=client.V1ObjectReference(
                kind="ConfigMap", name="x", namespace=namespace, api_version="v1"
            ),
            reason="Test",
            message=name,
            type="Normal",
        )

    # events bypass the apiserver's watch cache, so their watches go straight to etcd
    first = await core.create_namespaced_event(namespace, event("e1"))
    old_rv = first.metadata.resource_version
    # a watch from old_rv starts at old_rv + 1, which must be compacted away too
    await core.create_namespaced_event(namespace, event("e2"))
    await core.create_namespaced_event(namespace, event("e3"))
    assert cp.compact_etcd() > int(old_rv) + 1
    await _expect_watch_gone(core.list_namespaced_event, namespace, old_rv)


async def test_restart_apiserver(
    control_plane: object,
    api_client: client.ApiClient,
    kubeconfig_path: Path,
    namespace: str,
) -> None:
    cp = _local(control_plane)
    core = client.CoreV1Api(api_client)
    created = await core.create_namespaced_config_map(namespace, _configmap("before", {"a": "1"}))
    old_rv = created.metadata.resource_version
    await core.create_namespaced_config_map(namespace, _configmap("bump", {}))
    server = cp.server
    kubeconfig_text = kubeconfig_path.read_text()

    cp.compact_etcd()
    seconds = cp.restart_apiserver()
    assert seconds < cp.start_timeout
    assert cp.server == server
    assert kubeconfig_path.read_text() == kubeconfig_text

    # the same client keeps working ...
    got = await _eventually(lambda: core.read_namespaced_config_map("before", namespace))
    assert got.data == {"a": "1"}
    # ... and so does a fresh one from the same kubeconfig
    cfg = client.Configuration()
    await config.load_kube_config(config_file=str(kubeconfig_path), client_configuration=cfg)
    async with client.ApiClient(cfg) as fresh:
        core2 = client.CoreV1Api(fresh)
        name = f"after-{uuid.uuid4().hex[:4]}"
        await core2.create_namespaced_config_map(namespace, _configmap(name, {"b": "2"}))
        names = {c.metadata.name for c in (await core2.list_namespaced_config_map(namespace)).items}
        assert {"before", "bump", name} <= names
    # the restarted watch cache starts after the compaction: pre-restart RVs are gone
    await _expect_watch_gone(core.list_namespaced_config_map, namespace, old_rv)


def test_cli_up_sigterm(tmp_path: Path) -> None:
    workdir = tmp_path / "cp"
    kubeconfig = workdir / "kubeconfig"
    out = (tmp_path / "up.out").open("wb")
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "hack" / "controlplane.py"), "up", "--dir", str(workdir)],
        stdout=out,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 180
        while not kubeconfig.exists():
            assert proc.poll() is None, (tmp_path / "up.out").read_text()
            assert time.monotonic() < deadline, "kubeconfig never appeared"
            time.sleep(0.2)
        # `up` prints the export line right after writing the kubeconfig
        while f"export KUBECONFIG={kubeconfig}" not in (tmp_path / "up.out").read_text():
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert len(list(iter_component_pids(workdir))) >= 2  # etcd + kube-apiserver
        assert (workdir / "controlplane.pid").read_text().strip() == str(proc.pid)

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0, (tmp_path / "up.out").read_text()
        leftovers = list(iter_component_pids(workdir))
        assert leftovers == [], leftovers
        assert not kubeconfig.exists()
        assert not (workdir / "controlplane.pid").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        out.close()
        for pid, _ in iter_component_pids(workdir):
            os.kill(pid, signal.SIGKILL)
