"""Platform events (``/api/v0/platform_events``) from Ray's ``PLATFORM_EVENT`` events.

Ray's head (2.60, ``RAY_DASHBOARD_INGEST_PLATFORM_EVENTS=true`` on Kubernetes) watches the
platform's events about its cluster (Pods, the RayCluster, ...) and exports each one as a
``PLATFORM_EVENT`` RayEvent (``platformEvent{source{platform, component, metadata},
objectKind, objectName, message, reason, timestampNs, customFields}``). Its dashboard answers
``/api/v0/platform_events`` with ``rest_response(events=[...])``: the RayEvents themselves
as protobuf JSON (camelCase, enums by name), newest first, a delivery of the same ``eventId``
replacing the earlier one. We serve the stored events the same way, without the live head's
1,000-event cache bound (a stored session is read whole). A session without any has none
(``build`` gives ``None``) and the route falls back to a stored snapshot, else no events.
"""

from __future__ import annotations

from typing import Any

from kuberay.historyserver.server.convert import as_str, event_order

PLATFORM_EVENT = "PLATFORM_EVENT"


class PlatformEventBuilder:
    """Collects ``PLATFORM_EVENT`` events."""

    def __init__(self) -> None:
        self._events: dict[str, dict[str, Any]] = {}
        self._unnamed: list[dict[str, Any]] = []

    def add(self, event: dict[str, Any]) -> bool:
        """Keep ``event`` if it is a platform event; returns whether it was."""
        if as_str(event.get("eventType")) != PLATFORM_EVENT:
            return False
        uid = as_str(event.get("eventId"))
        if not uid:
            self._unnamed.append(event)
            return True
        kept = self._events.get(uid)
        if kept is None or event_order(event) >= event_order(kept):
            self._events[uid] = event
        return True

    def build(self) -> list[dict[str, Any]] | None:
        """The events, newest first; ``None`` when none was seen."""
        if not self._events and not self._unnamed:
            return None
        events = [*self._events.values(), *self._unnamed]
        return sorted(events, key=event_order, reverse=True)
