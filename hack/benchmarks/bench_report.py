"""Pure parts of the scale bench: audit-log counting, request-budget math, the table.

No I/O beyond reading what callers hand in, so ``tests/unit/hack`` can test them and
``hack/bench.py --compare`` can use them without a cluster.

* :func:`count_requests` - requests of some users by ``"<verb> <resource>[/<sub>]"``
  from kube-apiserver audit-log lines (JSON, one event per line);
* :func:`budget_seconds` - the least time ``n`` requests need through a client-go
  style token bucket (``qps``, ``burst``) that starts full;
* :func:`in_budget_requests` - the counted requests that share the reconcile client's
  token bucket (everything but Events, which client-go sends through its own client);
* :func:`render_table` - the comparison table (markdown) of bench reports.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
# Sent by client-go's event broadcaster through its own client and rate limiter.
OUT_OF_BUDGET_RESOURCES = frozenset({"events"})


def request_key(event: Mapping[str, Any]) -> str:
    """``"<verb> <resource>[/<subresource>]"`` of one audit event (non-resource: the path)."""
    verb = str(event.get("verb", ""))
    ref = event.get("objectRef")
    if not isinstance(ref, Mapping) or not ref.get("resource"):
        return f"{verb} {event.get('requestURI', '').split('?', 1)[0]}"
    resource = str(ref["resource"])
    if ref.get("subresource"):
        resource += f"/{ref['subresource']}"
    return f"{verb} {resource}"


def count_requests(lines: Iterable[str | bytes], users: Iterable[str]) -> dict[str, int]:
    """Count the requests of ``users`` in audit-log ``lines`` by :func:`request_key`.

    One request is one ``auditID`` (a watch logs ResponseStarted and ResponseComplete:
    it counts once); lines that are not JSON audit events are skipped. Sorted by key.
    """
    wanted = set(users)
    seen: set[str] = set()
    counts: dict[str, int] = {}
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        user = event.get("user")
        if not isinstance(user, dict) or user.get("username") not in wanted:
            continue
        audit_id = str(event.get("auditID", ""))
        if audit_id in seen:
            continue
        seen.add(audit_id)
        key = request_key(event)
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def writes(requests: Mapping[str, int]) -> int:
    """How many of ``requests`` (by :func:`request_key`) are writes."""
    return sum(n for key, n in requests.items() if key.split(" ", 1)[0] in WRITE_VERBS)


def in_budget_requests(requests: Mapping[str, int]) -> int:
    """Requests that go through the reconcile client's token bucket (all but Events)."""
    total = 0
    for key, n in requests.items():
        resource = key.split(" ", 1)[-1].split("/", 1)[0]
        if resource not in OUT_OF_BUDGET_RESOURCES:
            total += n
    return total


def budget_seconds(n: int, qps: float, burst: int) -> float:
    """Least seconds ``n`` requests need through a full token bucket of ``burst``
    tokens refilled at ``qps`` per second (``qps <= 0``: unthrottled, 0)."""
    if qps <= 0 or n <= 0:
        return 0.0
    return max(0, n - max(1, burst)) / qps


def per_cluster_summary(requests: Mapping[str, int], clusters: int) -> str:
    """Writes per cluster by verb, e.g. ``"7 create + 2 update + 1 patch"`` (rounded
    to one decimal; whole numbers without one)."""
    by_verb: dict[str, int] = {}
    for key, n in requests.items():
        verb = key.split(" ", 1)[0]
        if verb in WRITE_VERBS:
            by_verb[verb] = by_verb.get(verb, 0) + n
    parts = []
    for verb in WRITE_VERBS:
        if verb in by_verb:
            parts.append(f"{_num(by_verb[verb] / max(1, clusters))} {verb}")
    return " + ".join(parts) or "-"


def _num(x: float) -> str:
    r = round(x, 1)
    return str(int(r)) if r == int(r) else str(r)


def _fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        text = f"{value:.3f}" if abs(value) < 1 else f"{value:.1f}"
    else:
        text = str(value)
    return f"{text} {unit}".rstrip()


def label(report: Mapping[str, Any]) -> str:
    """Column heading of a report: its ``label``, else ``<operator> N=<clusters>`` with
    ``ours`` for this repo's operator and the program's file name for any other."""
    if report.get("label"):
        return str(report["label"])
    operator = str(report.get("operator") or "?")
    if "kuberay.cmd.operator" in operator:
        operator = "ours"
    else:
        operator = operator.split()[0].rsplit("/", 1)[-1]
    return f"{operator} N={report.get('clusters', '?')}"


ROWS: Sequence[tuple[str, str, str]] = (
    ("seconds to all pods", "seconds_to_all_pods", ""),
    ("seconds to all ready", "seconds_to_all_ready", ""),
    ("request budget (lower bound)", "request_budget_seconds", "s"),
    ("idle RSS (no clusters, 30 s)", "operator_idle_rss_mib", "MiB"),
    ("peak RSS", "operator_peak_rss_mib", "MiB"),
    ("RSS per managed pod", "rss_mib_per_managed_pod", "MiB"),
    ("CPU seconds, create → ready", "operator_cpu_seconds", ""),
    ("quiet resync writes", "quiet_resync_writes", ""),
    ("apiserver CPU seconds", "apiserver_cpu_seconds", ""),
    ("apiserver peak RSS", "apiserver_peak_rss_mib", "MiB"),
    ("load average (1 min) at start", "load_average_start", ""),
)


def render_table(reports: Sequence[Mapping[str, Any]]) -> str:
    """The comparison table (markdown) of bench reports, one column per report.

    A raw run (``--raw``) fills ``seconds to all pods`` from ``raw_seconds_to_all_pods``;
    the per-cluster request row lists writes by verb from ``requests_by_verb_resource``.
    """
    header = "| | " + " | ".join(label(r) for r in reports) + " |"
    lines = [header, "|---" * (len(reports) + 1) + "|"]
    for title, key, unit in ROWS:
        cells = []
        for r in reports:
            value = r.get(key)
            if value is None and key == "seconds_to_all_pods":
                value = r.get("raw_seconds_to_all_pods")
            cells.append(_fmt(value, unit))
        if all(c == "-" for c in cells):
            continue
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    cells = [
        per_cluster_summary(r.get("requests_by_verb_resource") or {}, int(r.get("clusters") or 1))
        for r in reports
    ]
    lines.append("| writes per cluster (audit log) | " + " | ".join(cells) + " |")
    return "\n".join(lines)
