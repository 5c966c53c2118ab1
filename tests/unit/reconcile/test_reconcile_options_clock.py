"""ManagerOptions / ControllerOptions defaults and how a Manager uses them; the runtime clock."""

from __future__ import annotations

import datetime as dt

import attrs
import prometheus_client
import pytest

from kuberay.kube import Client
from kuberay.kube.kubeconfig import RestConfig
from kuberay.reconcile import ControllerOptions, Manager, ManagerOptions
from kuberay.reconcile.clock import format_time, parse_time, utc_now


def test_manager_options_defaults_are_controller_runtimes() -> None:
    options = ManagerOptions()
    assert options.namespaces is None
    assert options.by_object is None
    assert options.leader_election is False
    assert options.leader_election_id == ""
    assert options.leader_election_namespace is None
    assert (options.lease_duration, options.renew_deadline, options.retry_period) == (
        15.0,
        10.0,
        2.0,
    )
    assert options.metrics_bind_address == ":8080"
    assert options.health_probe_bind_address == ":8081"
    assert options.graceful_shutdown_timeout == 30.0
    assert options.resync_period == 0.0
    assert options.handle_signals is True
    assert options.controller == ControllerOptions()


def test_controller_options_defaults() -> None:
    options = ControllerOptions()
    assert options.max_concurrent_reconciles == 1
    assert options.cache_sync_timeout == 120.0
    assert options.rate_limiter is None


def test_options_are_frozen_and_keyword_only() -> None:
    options = ManagerOptions(namespaces=["a", "b"])
    assert options.namespaces == ("a", "b")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        options.handle_signals = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        ControllerOptions(4)  # type: ignore[misc]
    assert attrs.evolve(options, handle_signals=False).namespaces == ("a", "b")


class _Reconciler:
    async def reconcile(self, req: object) -> object:
        raise AssertionError("never run")


def _manager(options: ManagerOptions) -> Manager:
    return Manager(
        Client(RestConfig("http://127.0.0.1:1")),
        options,
        registry=prometheus_client.CollectorRegistry(),
    )


def test_controllers_take_the_managers_controller_options_unless_they_set_their_own() -> None:
    mgr = _manager(
        ManagerOptions(
            handle_signals=False,
            controller=ControllerOptions(max_concurrent_reconciles=3, cache_sync_timeout=9.0),
        )
    )
    default = mgr.controller("a").for_("v1", "ConfigMap").complete(_Reconciler())  # type: ignore[arg-type]
    assert (default.max_concurrent_reconciles, default.cache_sync_timeout) == (3, 9.0)
    own = (
        mgr.controller("b")
        .for_("v1", "Secret")
        .with_options(ControllerOptions(max_concurrent_reconciles=5))
        .complete(_Reconciler())  # type: ignore[arg-type]
    )
    assert (own.max_concurrent_reconciles, own.cache_sync_timeout) == (5, 120.0)
    one = (
        mgr.controller("c")
        .for_("v1", "Pod")
        .with_options(cache_sync_timeout=1.0)
        .complete(_Reconciler())  # type: ignore[arg-type]
    )
    assert (one.max_concurrent_reconciles, one.cache_sync_timeout) == (3, 1.0)


def test_leader_election_needs_an_id() -> None:
    with pytest.raises(ValueError, match="leader_election_id"):
        _manager(ManagerOptions(leader_election=True, leader_election_namespace="ns"))


def test_real_clock_is_aware_utc_now() -> None:
    now = utc_now()
    assert now.tzinfo is not None and now.utcoffset() == dt.timedelta(0)


def test_metav1_time_round_trip_and_lenient_parse() -> None:
    when = dt.datetime(2024, 1, 2, 3, 4, 5, 678, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert format_time(when) == "2024-01-02T01:04:05Z"
    assert parse_time("2024-01-02T01:04:05Z") == dt.datetime(2024, 1, 2, 1, 4, 5, tzinfo=dt.UTC)
    assert parse_time("2024-01-02T01:04:05") == dt.datetime(2024, 1, 2, 1, 4, 5, tzinfo=dt.UTC)
    for bad in (None, "", "yesterday", 5):
        assert parse_time(bad) is None
