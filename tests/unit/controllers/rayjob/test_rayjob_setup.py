"""Wiring: head pods map to the RayJob owning their cluster; a finished dashboard call
enqueues the RayJob that asked."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

from kuberay.controllers.rayjob import RayJobSettings, setup_rayjob_controller
from kuberay.controllers.rayjob.setup import head_pod_owner
from kuberay.kube import Client
from kuberay.reconcile import Manager, Request
from kuberay.reconcile.options import ManagerOptions


class _Cfg:
    host = "https://127.0.0.1:1"
    api_key: dict[str, str] = {}
    api_key_prefix: dict[str, str] = {}
    cert_file = None
    key_file = None
    ssl_ca_cert = None
    verify_ssl = False


class _Dashboard:
    on_result: Any = None

    def job_info(self, *a: Any, **k: Any) -> None:
        return None

    def submit_job(self, *a: Any, **k: Any) -> None:
        return None

    def stop_job(self, *a: Any, **k: Any) -> None:
        return None

    def forget(self, *a: Any, **k: Any) -> None:
        return None


def _manager() -> Manager:
    return Manager(
        Client(_Cfg(), qps=0),
        ManagerOptions(
            metrics_bind_address="0",
            health_probe_bind_address="0",
            handle_signals=False,
        ),
        registry=CollectorRegistry(),
    )


class _Cache:
    def __init__(self, cluster: dict[str, Any] | None) -> None:
        self.cluster = cluster

    def get(self, *a: Any) -> dict[str, Any] | None:
        return self.cluster


def _pod(node_type: str = "head") -> dict[str, Any]:
    return {
        "metadata": {
            "name": "p",
            "namespace": "ns",
            "labels": {"ray.io/cluster": "c", "ray.io/node-type": node_type},
        }
    }


def test_head_pod_maps_to_the_rayjob_owning_its_cluster() -> None:
    mgr = _manager()
    owned = {
        "metadata": {
            "ownerReferences": [{"kind": "RayJob", "name": "job", "controller": True}],
        }
    }
    mgr.cache = _Cache(owned)  # type: ignore[assignment]
    map_pod = head_pod_owner(mgr)
    assert list(map_pod(_pod())) == [Request("ns", "job")]
    assert list(map_pod(_pod("worker"))) == []
    mgr.cache = _Cache({"metadata": {}})  # type: ignore[assignment]
    assert list(map_pod(_pod())) == []  # a cluster of nobody's RayJob


async def test_a_finished_dashboard_call_enqueues_its_rayjob() -> None:
    dashboard = _Dashboard()
    controller = setup_rayjob_controller(_manager(), RayJobSettings(), dashboard)
    controller.queue = controller._make_queue()
    dashboard.on_result(("ns", "job"))
    item, _ = await controller.queue.get()
    assert item == Request("ns", "job")
    controller.queue.shutdown()
