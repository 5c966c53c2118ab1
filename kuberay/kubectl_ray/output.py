"""kubectl-style output: tables (upper-case headers, columns padded by three spaces,
nothing at all for zero rows), ``HumanDuration`` ages, and ``-o json|yaml``."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

import yaml

from kuberay.gocompat.gotime import parse_rfc3339_or_none
from kuberay.kube.objects import meta
from kuberay.kubectl_ray.context import Env

OUTPUT_FORMATS = ("json", "yaml")


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """kubectl's table printer: empty string when there are no rows."""
    if not rows:
        return ""
    cells = [[h.upper() for h in headers]] + [
        ["" if c is None else str(c) for c in r] for r in rows
    ]
    widths = [max(len(r[i]) for r in cells) + 3 for i in range(len(headers) - 1)]
    lines = []
    for row in cells:
        line = "".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])) + row[-1]
        lines.append(line)
    return "\n".join(lines) + "\n"


def human_duration(seconds: float) -> str:
    """apimachinery ``duration.HumanDuration``."""
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    s = int(seconds)
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def age(obj: dict[str, Any], now: dt.datetime | None = None) -> str:
    """``HumanDuration`` since ``metadata.creationTimestamp`` (``<unknown>`` without one)."""
    created = parse_rfc3339_or_none(meta(obj).get("creationTimestamp"))
    if created is None:
        return "<unknown>"
    now = now or dt.datetime.now(dt.UTC)
    return human_duration((now - created).total_seconds())


def dump(data: Any, fmt: str) -> str:
    """``data`` as JSON (indented like kubectl) or YAML."""
    if fmt == "json":
        return json.dumps(data, indent=4) + "\n"
    return str(yaml.safe_dump(data, sort_keys=False, default_flow_style=False))


def as_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    """A ``v1 List`` around ``items`` (what ``kubectl get -o json`` prints for many)."""
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {}}


def emit(env: Env, fmt: str | None, data: Any, names: list[str] | None = None) -> bool:
    """Print ``data`` in ``fmt`` (json|yaml), or ``names`` one a line for ``-o name``,
    when one was asked for; True if printed (``wide``: the table, so False)."""
    if not fmt or fmt == "wide":
        return False
    if fmt == "name":
        for name in names or []:
            env.out(name)
        return True
    env.stdout.write(dump(data, fmt))
    env.stdout.flush()
    return True


__all__ = [
    "OUTPUT_FORMATS",
    "age",
    "as_list",
    "dump",
    "emit",
    "format_table",
    "human_duration",
]
