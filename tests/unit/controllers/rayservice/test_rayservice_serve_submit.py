"""When the Serve config is sent (KubeRay ``checkIfNeedSubmitServeApplications`` through the
poller): once per config and cluster, again when the head lost its applications or the config
returns to an earlier value, never while an abandoned upgrade holds it; an answer to a read
sent before the last PUT was accepted never makes the cluster ready, however late it arrives."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Coroutine, Generator
from typing import Any

from kuberay.controllers.dashboard import DashboardError, ServeDetails
from kuberay.controllers.dashboard.poller import Observed
from kuberay.controllers.rayservice.context import Ctx, RayServiceSettings
from kuberay.controllers.rayservice.serve import ServeReconciler

CONFIG_A = "applications:\n  - name: a\n    import_path: m:a\n"
CONFIG_B = "applications:\n  - name: b\n    import_path: m:b\n"


class _Pause:
    """Suspends a call once (a request sent, its answer not back yet)."""

    def __await__(self) -> Generator[None, None, None]:
        yield


class FakeClient:
    """The dashboard: answers with the applications the poller script has when a request is
    sent; a read can be held in flight (``hold_reads``)."""

    def __init__(self, poller: FakePoller) -> None:
        self.poller = poller

    async def get_serve_details(self) -> ServeDetails:
        apps = dict(self.poller.apps)
        if self.poller.hold_reads:
            await _Pause()
        return ServeDetails.from_json(
            {"applications": {k: {"name": k, "status": v} for k, v in apps.items()}}
        )

    async def update_serve_applications(self, payload: bytes) -> None:
        if self.poller.fail_puts:
            raise DashboardError("503")


def _finish(coro: Coroutine[Any, Any, Any]) -> Any:
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the call is suspended")


class FakePoller:
    """Runs the calls it is given against :class:`FakeClient`, at once: a PUT at its first
    ask; the Serve status at its first ask and then only at :meth:`refresh` (or
    :meth:`start_read` / :meth:`finish_read`: a request sent, its answer back later)."""

    def __init__(self) -> None:
        self.on_result: Callable[..., None] | None = None
        self.clock = itertools.count(1)
        self.apps: dict[str, str] = {}
        self.client = FakeClient(self)
        self.hold_reads = False
        self.details: Observed[Any] | None = None
        self.details_fn: Any = None
        self.in_flight: Coroutine[Any, Any, Any] | None = None
        self.put_names: list[str] = []
        self.put_results: dict[str, Observed[Any]] = {}
        self.fail_puts = False

    def _observed(self, value: Any = None, error: DashboardError | None = None) -> Observed[Any]:
        return Observed(value=value, error=error, finished_at=float(next(self.clock)))

    def call(self, owner: Any, name: str, target: Any, fn: Any, **kw: Any) -> Observed[Any] | None:
        if name.startswith("serve-details/"):
            self.details_fn = fn
            if self.details is None:
                self.refresh()
            return self.details
        if name.startswith("serve-update/"):
            call = f"{name}#{kw.get('key')}"  # a new key is a new submission
            if call not in self.put_results:
                self.put_names.append(call)
                try:
                    _finish(fn(self.client))
                except DashboardError as exc:
                    self.put_results[call] = self._observed(error=exc)
                else:
                    self.put_results[call] = self._observed()
            return self.put_results[call]
        raise AssertionError(name)

    def forget(self, owner: Any, keep: Any = None) -> None:
        pass

    def refresh(self) -> None:
        """A Serve status read sent now, answered at once."""
        self.details = self._observed(_finish(self.details_fn(self.client)))

    def start_read(self) -> None:
        """A Serve status read sent now; its answer is not back yet."""
        self.hold_reads = True
        self.in_flight = self.details_fn(self.client)
        assert self.in_flight is not None
        self.in_flight.send(None)
        self.hold_reads = False

    def finish_read(self) -> None:
        """The answer of :meth:`start_read` arrives now."""
        assert self.in_flight is not None
        self.details = self._observed(_finish(self.in_flight))
        self.in_flight = None


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


def test_a_read_sent_before_the_config_push_does_not_count_however_late_it_arrives() -> None:
    """Issue 26, item 8: a Serve status request that left before Ray accepted the new config
    describes the old one (here: its applications RUNNING) even when its answer arrives
    after the PUT's; the cluster is ready only from a request sent after the PUT."""
    serve, poller, _ = setup()
    serve.reconcile_serve(RS, CLUSTER, None)
    poller.apps = {"a": "RUNNING"}
    poller.refresh()
    assert serve.reconcile_serve(RS, CLUSTER, None).ready
    rs_b = {**RS, "spec": {"serveConfigV2": CONFIG_B}}
    poller.start_read()  # Ray answers from config A ...
    result = serve.reconcile_serve(rs_b, CLUSTER, None)  # ... while B is pushed and accepted
    assert len(poller.put_names) == 2 and not result.ready
    poller.finish_read()  # ... and the answer arrives after the PUT's
    early = serve.reconcile_serve(rs_b, CLUSTER, None)
    assert not early.ready, "ready from an answer that describes the previous config"
    assert len(poller.put_names) == 2
    poller.apps = {"b": "DEPLOYING"}
    poller.refresh()
    assert not serve.reconcile_serve(rs_b, CLUSTER, None).ready
    poller.apps = {"b": "RUNNING"}
    poller.refresh()
    assert serve.reconcile_serve(rs_b, CLUSTER, None).ready
    assert len(poller.put_names) == 2
