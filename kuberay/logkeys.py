"""Log lines shaped as controller-runtime's zap logger writes them (KubeRay's operator).

KubeRay logs through controller-runtime's zap with ``zap.NewProductionEncoderConfig()`` and
ISO8601 time, so a JSON line is ``{"level", "ts", "logger", "msg", <fields...>}`` (zap's order;
``stacktrace`` last), and a reconcile's lines carry the logger ``controllers.<Kind>`` (KubeRay's
``LogConstructor``), ``"<Kind>": {"name", "namespace"}`` (a ``types.NamespacedName``) and
``reconcileID``. :func:`to_zap` turns one structlog event dict (``event``, ``timestamp``,
``reconcile_id``, ``namespace``/``name`` and ``_request`` bound around a reconcile) into that shape;
:func:`zap_json` and :func:`zap_console` render it like zap's JSON and console encoders.
"""

from __future__ import annotations

import json
from typing import Any

#: our controller name -> (KubeRay's logger name, the key of the reconciled object)
RECONCILE_LOGGERS: dict[str, tuple[str, str]] = {
    "raycluster": ("controllers.RayCluster", "RayCluster"),
    "raycluster-mtls": ("controllers.RayClusterMTLS", "RayCluster"),
    "networkpolicy": ("controllers.NetworkPolicy", "RayCluster"),
    "rayjob": ("controllers.RayJob", "RayJob"),
    "rayservice": ("controllers.RayService", "RayService"),
    "raycronjob": ("controllers.RayCronJob", "RayCronJob"),
}
#: structlog level -> zap level
LEVELS = {"warning": "warn", "critical": "fatal", "exception": "error"}
KEY_FORMATS = ("controller-runtime", "structlog")
#: bound around a reconcile (kuberay.reconcile.controller): (namespace, name) of the object
REQUEST_KEY = "_request"


def drop_request(renderer: Any) -> Any:
    """``renderer`` for structlog's keys: the same, without :data:`REQUEST_KEY`."""

    def render(logger: Any, name: str, event_dict: dict[str, Any]) -> Any:
        event_dict.pop(REQUEST_KEY, None)
        return renderer(logger, name, event_dict)

    return render


def zap_time(timestamp: str) -> str:
    """structlog's ISO UTC timestamp (``...T03:22:51.123456Z``) as zap's ISO8601 encoder writes
    it (milliseconds: ``...T03:22:51.123Z``)."""
    if len(timestamp) >= 23 and timestamp.endswith("Z"):
        return timestamp[:23] + "Z"
    return timestamp


def to_zap(event_dict: dict[str, Any]) -> dict[str, Any]:
    """A new dict with controller-runtime's keys, in zap's order."""
    fields = dict(event_dict)
    level = str(fields.pop("level", "info"))
    out: dict[str, Any] = {"level": LEVELS.get(level, level)}
    timestamp = fields.pop("timestamp", None)
    if timestamp is not None:
        out["ts"] = zap_time(str(timestamp))
    logger = fields.pop("logger", None)
    reconcile_id = fields.pop("reconcile_id", None)
    stacktrace = fields.pop("exception", None)
    message = fields.pop("event", "")
    request = fields.pop(REQUEST_KEY, None)
    reconcile = RECONCILE_LOGGERS.get(str(fields.get("controller", "")))
    if reconcile_id is not None and reconcile is not None and request is not None:
        logger, kind = reconcile
        namespace, name = request
        # the bound namespace/name become the object's key; a line's own (another object's)
        # stay fields
        if fields.get("namespace") == namespace:
            fields.pop("namespace")
        if fields.get("name") == name:
            fields.pop("name")
        fields[kind] = {"name": name, "namespace": namespace}
    if logger:
        out["logger"] = logger
    out["msg"] = message if isinstance(message, str) else str(message)
    out.update(fields)
    if reconcile_id is not None:
        out["reconcileID"] = reconcile_id
    if stacktrace:
        out["stacktrace"] = stacktrace
    return out


def zap_json(_logger: Any, _name: str, event_dict: dict[str, Any]) -> str:
    """One JSON line as zap's JSON encoder writes it."""
    return json.dumps(to_zap(event_dict), default=str, separators=(",", ":"))


def zap_console(_logger: Any, _name: str, event_dict: dict[str, Any]) -> str:
    """One line as zap's console encoder writes it: tab-separated ts, level, logger, msg,
    then the other fields as one JSON object (and the stack trace on the next lines)."""
    entry = to_zap(event_dict)
    parts = [str(entry.pop(key)) for key in ("ts", "level", "logger", "msg") if key in entry]
    stacktrace = entry.pop("stacktrace", None)
    if entry:
        parts.append(json.dumps(entry, default=str, separators=(",", ":")))
    line = "\t".join(parts)
    return f"{line}\n{stacktrace}" if stacktrace else line
