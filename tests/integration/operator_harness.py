"""An in-process operator for integration tests: a Manager scoped to one namespace with the
controllers a suite asks for, run as a task for the length of a ``with`` block
(:func:`start_operator`), and the one polling helper every suite waits with
(:func:`wait_for`)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from kuberay.cmd.config import parse_config, refuse_unimplemented
from kuberay.cmd.operator_run import CACHE_SCOPE
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.dashboard import DashboardPoller, setup_dashboard_poller
from kuberay.controllers.dashboard.factory import DashboardClientFactory
from kuberay.controllers.dashboard.setup import cached_secret_reader
from kuberay.controllers.mtls import MTLSSettings, setup_mtls_controller
from kuberay.controllers.networkpolicy import setup_networkpolicy_controller
from kuberay.controllers.raycluster import RayClusterSettings, setup_raycluster_controller
from kuberay.controllers.raycronjob import RayCronJobSettings, setup_raycronjob_controller
from kuberay.controllers.rayjob import RayJobSettings, setup_rayjob_controller
from kuberay.controllers.rayservice import RayServiceSettings, setup_rayservice_controller
from kuberay.controllers.setup import register_all
from kuberay.featuregates.kuberay_gates import new_feature_gate
from kuberay.kube import Client
from kuberay.reconcile import Controller, Manager, Request
from kuberay.reconcile.options import ControllerOptions, ManagerOptions
from tests.helpers import eventually

KINDS = ("raycluster", "networkpolicy", "mtls", "rayjob", "rayservice", "raycronjob")


def new_manager(
    client: Client, namespace: str, *, workers: int = 2, registry: Any = None
) -> Manager:
    """A Manager watching only ``namespace`` with the operator's cache scope, no metrics or
    probe servers, no signal handlers and ``workers`` concurrent reconciles per controller."""
    options = ManagerOptions(
        namespaces=[namespace],
        by_object=CACHE_SCOPE,
        metrics_bind_address="0",
        health_probe_bind_address="0",
        handle_signals=False,
        controller=ControllerOptions(max_concurrent_reconciles=workers),
    )
    return Manager(client, options, registry=registry)


def feature_gates(gates: str = "") -> dict[str, bool]:
    """KubeRay's feature gates with their defaults, then ``gates`` (``"A=true,B=false"``)."""
    fg = new_feature_gate()
    fg.set_from_string(gates)
    return fg.as_dict()


@contextlib.asynccontextmanager
async def running(mgr: Manager) -> AsyncIterator[asyncio.Task[None]]:
    """Run ``mgr`` as a task; on exit stop it and wait (bounded) until it has shut down."""
    task = asyncio.create_task(mgr.run())
    try:
        yield task
    finally:
        mgr.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)


@attrs.define
class FakeClock:
    """The operator's ``now()``: stands still at ``at`` until the test moves it."""

    at: dt.datetime

    def __call__(self) -> dt.datetime:
        return self.at


@attrs.define
class Operator:
    """A running in-process operator scoped to one namespace: its controllers by kind; the
    last kind asked for is ``controller`` (the one the suite is about)."""

    manager: Manager
    controllers: dict[str, Controller]
    primary: str
    client: Client
    namespace: str
    task: asyncio.Task[None]
    poller: DashboardPoller | None = None
    clock: FakeClock | None = None

    @property
    def controller(self) -> Controller:
        return self.controllers[self.primary]

    @property
    def reconciler(self) -> Any:
        return self.controller.reconciler

    @property
    def raycluster(self) -> Controller | None:
        return self.controllers.get("raycluster")

    @property
    def rayjob(self) -> Controller | None:
        return self.controllers.get("rayjob")

    @property
    def mtls(self) -> Controller | None:
        return self.controllers.get("mtls")

    def poke(self, name: str) -> None:
        """Reconcile ``name`` now: what the controller's timed requeue does when it fires
        (with a fake clock the real-time timer would fire at the wrong moment)."""
        assert self.controller.queue is not None
        self.controller.queue.add(Request(self.namespace, name))

    def at(self, when: dt.datetime, name: str) -> None:
        """Move the fake clock to ``when`` and let ``name``'s timer fire."""
        assert self.clock is not None
        self.clock.at = when
        self.poke(name)


@contextlib.asynccontextmanager
async def start_operator(
    client: Client | Path,
    namespace: str,
    *,
    kinds: Sequence[str] = ("raycluster",),
    gates: str = "",
    env: Mapping[str, str] | None = None,
    registry: Any = None,
    raycluster: Mapping[str, Any] | None = None,
    rayjob: Mapping[str, Any] | None = None,
    rayservice: Mapping[str, Any] | None = None,
    raycronjob: Mapping[str, Any] | None = None,
    mtls: Mapping[str, Any] | None = None,
    dashboard_timeout: float | None = None,
    poller: Mapping[str, Any] | None = None,
    workers: int = 2,
    flags: Sequence[str] | None = None,
) -> AsyncIterator[Operator]:
    """The controllers of ``kinds`` (set up in the order of :data:`KINDS`) in one Manager
    scoped to ``namespace``, with feature gates ``gates`` over KubeRay's defaults and the
    operator environment ``env``; ``raycluster`` ... ``mtls``: more settings of that kind.

    ``client``: a Client, or a kubeconfig path for a client of the operator's own
    (``qps=0, burst=1``, so its writes can be counted; closed on exit). RayJob dials Ray
    dashboards through a poller without the apiserver-proxy fallback (the fake pod IPs the
    tests refuse must stay refused; ``dashboard_timeout``: None is the operator's 2 s;
    ``poller``: more DashboardPoller settings, e.g. ``call_timeout``); RayService uses the
    operator's own poller. A RayCronJob's ``now`` (a :class:`FakeClock`) is the operator's
    ``clock``. ``workers``: concurrent reconciles per controller.

    ``flags``: instead of ``kinds``, ``gates`` and the settings, the controllers
    ``kuberay-operator <flags>`` registers (``register_all``), in the order it registers
    them."""
    unknown = set(kinds) - set(KINDS)
    assert not unknown and kinds, f"unknown kinds {sorted(unknown)}"
    own_client = not isinstance(client, Client)
    kube = await Client.from_kubeconfig(client, qps=0, burst=1) if own_client else client
    assert isinstance(kube, Client)
    features = feature_gates(gates)
    environ = dict(env or {})
    options = BuildOptions.from_env(environ)
    mgr = new_manager(kube, namespace, workers=workers, registry=registry)
    controllers: dict[str, Controller] = {}
    dashboards: DashboardPoller | None = None
    factory: DashboardClientFactory | None = None
    clock: FakeClock | None = None
    try:
        if flags is not None:
            operator_gates = new_feature_gate()
            cfg, _ = parse_config(list(flags), operator_gates)
            refuse_unimplemented(cfg, operator_gates)
            names = register_all(mgr, cfg.controller_config(), operator_gates, env=environ)
            by_name = {c.name: c for c in mgr.controllers}
            controllers = {name: by_name[name] for name in names}
            kinds = ()
        if "raycluster" in kinds:
            controllers["raycluster"] = setup_raycluster_controller(
                mgr, RayClusterSettings(options=options, features=features, **(raycluster or {}))
            )
        if "networkpolicy" in kinds:
            controllers["networkpolicy"] = setup_networkpolicy_controller(mgr)
        if "mtls" in kinds:
            controllers["mtls"] = setup_mtls_controller(
                mgr, MTLSSettings(features=features, **(mtls or {}))
            )
        if "rayjob" in kinds:
            factory = DashboardClientFactory(
                kube, environ={}, timeout=dashboard_timeout, cached_secret=cached_secret_reader(mgr)
            )
            dashboards = DashboardPoller(factory, **(poller or {}))
            controllers["rayjob"] = setup_rayjob_controller(
                mgr,
                RayJobSettings.from_env(
                    environ, options=options, features=features, **(rayjob or {})
                ),
                dashboards,
            )
        if "rayservice" in kinds:
            dashboards = setup_dashboard_poller(mgr, env=environ)
            controllers["rayservice"] = setup_rayservice_controller(
                mgr,
                RayServiceSettings(
                    options=options, features=features, env=environ, **(rayservice or {})
                ),
                dashboards,
            )
        if "raycronjob" in kinds:
            settings = dict(raycronjob or {})
            clock = settings.get("now")
            controllers["raycronjob"] = setup_raycronjob_controller(
                mgr, RayCronJobSettings(features=features, **settings)
            )
        primary = list(controllers)[-1]  # kinds are set up in the order of KINDS
        async with running(mgr) as task:
            yield Operator(mgr, controllers, primary, kube, namespace, task, dashboards, clock)
    finally:
        if factory is not None:
            assert dashboards is not None
            await dashboards.close()
            await factory.close()
        if own_client:
            await kube.close()


async def wait_for(
    getter: Callable[[], Any | Awaitable[Any]],
    check: Callable[[Any], Any] | None = None,
    *,
    timeout: float = 60.0,
    interval: float = 0.2,
    message: str = "condition",
) -> Any:
    """Poll ``getter()`` (plain or async) until ``check(value)`` holds (without ``check``:
    until the value is truthy); returns that value. An exception from either (an assert
    saying what is missing, a NotFound) counts as "not yet"; after ``timeout`` seconds the
    test fails with ``message`` and the last exception or value."""

    async def poll() -> tuple[Any] | None:
        value = getter()
        if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
            value = await value
        ok = check(value) if check is not None else value
        return (value,) if ok else None

    found: tuple[Any] = await eventually(poll, timeout=timeout, interval=interval, message=message)
    return found[0]
