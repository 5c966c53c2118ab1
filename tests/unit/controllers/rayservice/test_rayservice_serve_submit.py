"""When the Serve config is sent (KubeRay ``checkIfNeedSubmitServeApplications`` through the
poller): once per config and cluster, again when the head lost its applications or the config
returns to an earlier value, never while an abandoned upgrade holds it; an answer read before
the last PUT never makes the cluster ready."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from kuberay.controllers.dashboard import DashboardError, ServeDetails
from kuberay.controllers.dashboard.poller import Observed
from kuberay.controllers.rayservice.context import Ctx, RayServiceSettings
from kuberay.controllers.rayservice.serve import ServeReconciler

CONFIG_A = "applications:\n  - name: a\n    import_path: m:a\n"
CONFIG_B = "applications:\n  - name: b\n    import_path: m:b\n"


class FakePoller:
    """Answers ``call`` from a script: details by cluster, PUT outcomes ok unless failing."""

    def __init__(self) -> None:
        self.on_result: Callable[..., None] | None = None
        self.clock = itertools.count(1)
        self.apps: dict[str, str] = {}
        self.details_at = 0.0
        self.put_names: list[str] = []
        self.put_results: dict[str, Observed[Any]] = {}
        self.fail_puts = False

    def call(self, owner: Any, name: str, target: Any, fn: Any, **kw: Any) -> Observed[Any] | None:
        if name.startswith("serve-details/"):
            details = ServeDetails.from_json(
                {"applications": {k: {"name": k, "status": v} for k, v in self.apps.items()}}
            )
            return Observed(value=details, error=None, finished_at=self.details_at)
        if name.startswith("serve-update/"):
            call = f"{name}#{kw.get('key')}"  # a new key is a new submission
            if call not in self.put_results:
                self.put_names.append(call)
                error = DashboardError("503") if self.fail_puts else None
                self.put_results[call] = Observed(
                    value=None, error=error, finished_at=float(next(self.clock))
                )
            return self.put_results[call]
        raise AssertionError(name)

    def forget(self, owner: Any, keep: Any = None) -> None:
        pass

    def refresh(self) -> None:
        """A details answer read after everything sent so far."""
        self.details_at = float(next(self.clock))


class Recorder:
    def __init__(self) -> None:
        self.events: list[str] = []

    def event(self, obj: Any, etype: str, reason: str, message: str, action: str = "") -> None:
        self.events.append(reason)


def setup() -> tuple[ServeReconciler, FakePoller, Recorder]:
    poller = FakePoller()
    recorder = Recorder()
    ctx = Ctx(
        client=None,  # type: ignore[arg-type]
        cache=None,  # type: ignore[arg-type]
        recorder=recorder,  # type: ignore[arg-type]
        settings=RayServiceSettings(features={"RayClusterStatusConditions": True}),
        dashboard=poller,
    )
    return ServeReconciler(ctx), poller, recorder


RS = {"metadata": {"name": "rs", "namespace": "ns"}, "spec": {"serveConfigV2": CONFIG_A}}
CLUSTER = {
    "metadata": {"name": "rs-abcde", "namespace": "ns"},
    "spec": {},
    "status": {"conditions": [{"type": "HeadPodReady", "status": "True"}]},
}


def test_config_sent_once_then_again_only_when_needed() -> None:
    serve, poller, recorder = setup()
    result = serve.reconcile_serve(RS, CLUSTER, None)
    assert len(poller.put_names) == 1 and not result.ready
    poller.apps = {"a": "RUNNING"}
    # The answer predates the PUT: not ready, and not "zero apps" either.
    assert not serve.reconcile_serve(RS, CLUSTER, None).ready
    poller.refresh()
    for _ in range(3):
        assert serve.reconcile_serve(RS, CLUSTER, None).ready
    assert len(poller.put_names) == 1
    assert recorder.events == ["UpdatedServeApplications"]
    # The head lost its applications (no GCS FT): sent again.
    poller.apps = {}
    poller.refresh()
    serve.reconcile_serve(RS, CLUSTER, None)
    assert len(poller.put_names) == 2
    # A new config, then back to the first one: each is sent.
    poller.apps = {"a": "RUNNING"}
    poller.refresh()
    rs_b = {**RS, "spec": {"serveConfigV2": CONFIG_B}}
    serve.reconcile_serve(rs_b, CLUSTER, None)
    poller.refresh()
    serve.reconcile_serve(RS, CLUSTER, None)
    assert len(poller.put_names) == 4
    assert len(set(poller.put_names)) == 4


def test_held_config_is_never_sent() -> None:
    serve, poller, _ = setup()
    result = serve.reconcile_serve(RS, CLUSTER, None, skip_config_update=True)
    assert poller.put_names == [] and not result.ready


def test_failed_put_is_reported_once_and_blocks_readiness() -> None:
    serve, poller, recorder = setup()
    poller.fail_puts = True
    poller.apps = {"a": "RUNNING"}
    for _ in range(3):
        result = serve.reconcile_serve(RS, CLUSTER, None)
        assert not result.ready and result.problem and "503" in result.problem
    assert recorder.events == ["FailedToUpdateServeApplications"]


def test_head_not_ready_asks_nothing() -> None:
    serve, poller, _ = setup()
    cluster = {**CLUSTER, "status": {"conditions": [{"type": "HeadPodReady", "status": "False"}]}}
    assert not serve.reconcile_serve(RS, cluster, None).ready
    assert poller.put_names == []
