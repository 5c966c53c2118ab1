"""What every RayCronJob reconcile step shares: the client, the cache, the Event
recorder, the gates and the clock."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

import attrs

from kuberay.kube import Client
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import Cache, EventRecorder
from kuberay.reconcile.clock import Clock, utc_now


@attrs.define
class RayCronJobSettings:
    """Operator-level inputs of the RayCronJob controller.

    ``features``: the gate values (RayJob template validation depends on some).
    ``now``: the clock ticks are compared with (aware datetimes; default the real
    time). Tests inject a fake one to drive ticks without waiting for them.
    """

    features: Mapping[str, bool] = attrs.field(factory=dict)
    now: Clock = utc_now


@attrs.define
class Ctx:
    """Per-controller dependencies (not per reconcile)."""

    client: Client
    cache: Cache
    recorder: EventRecorder
    settings: RayCronJobSettings

    def now(self) -> dt.datetime:
        """The injected clock's current time."""
        return self.settings.now()

    def event(self, cronjob: Obj, etype: str, reason: str, message: str, action: str) -> None:
        """An Event regarding ``cronjob``."""
        self.recorder.event(cronjob, etype, reason, message, action)
