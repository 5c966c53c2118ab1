"""``kubectl ray why``'s plain-text report made concise: one line per finding, the same
message reported by several sources (the status message, a condition, an Event) shown
once, long texts (tracebacks) cut to their last meaningful line. ``-v`` shows every
finding with its whole text."""

from __future__ import annotations

import re

from kuberay.diagnosis.findings import Diagnosis, Finding

MARK = {"error": "x", "warning": "!", "info": "-"}
#: Longest one-line message before it is cut.
MAX_LINE = 240
_NOISE = re.compile(r"^(\s*File \".*\", line \d+|\s*[\^~]+\s*$|-{3,}|\s*\.\.\.\s*$)")
_COUNT = re.compile(r" \(x\d+\)$")


def meaningful_line(text: str) -> str:
    """The last line of ``text`` that says something (a traceback's exception line)."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    for line in reversed(lines):
        if not _NOISE.match(line):
            return line.strip()
    return lines[-1].strip() if lines else ""


def short_message(text: str) -> str:
    """One line: the text itself, or its lead-in plus its last meaningful line."""
    text = _COUNT.sub("", text.strip())
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) <= 1:
        one = text
    else:
        head = lines[0]
        cut = head.find("Traceback")
        head = (head[:cut] if cut >= 0 else head).rstrip().rstrip(":").rstrip()
        last = meaningful_line(text)
        one = f"{head}: {last}" if head and head != last else last
        one += f" ({len(lines)} lines; -v for all)"
    return one if len(one) <= MAX_LINE else one[: MAX_LINE - 3] + "..."


def dedup_key(finding: Finding) -> str:
    """What makes two findings the same message: the last meaningful line."""
    return meaningful_line(_COUNT.sub("", finding.message.strip())).lower()


def concise(findings: list[Finding]) -> list[tuple[Finding, list[Finding]]]:
    """Each distinct finding (first one kept) with the others that repeat its message."""
    groups: dict[str, tuple[Finding, list[Finding]]] = {}
    for f in findings:
        key = dedup_key(f)
        if key and key in groups:
            groups[key][1].append(f)
        else:
            groups[key or f"#{len(groups)}"] = (f, [])
    return list(groups.values())


def format_report(d: Diagnosis, verbose: bool = False) -> str:
    """The plain-text report: the verdict, then one line per distinct finding."""
    head = f"{d.kind} {d.namespace}/{d.name}"
    if d.ready:
        lines = [f"{head} is ready."]
    else:
        lines = [f"{head} is NOT ready: {short_message(d.summary)}"]
    if verbose:
        for f in d.findings:
            text = f.message.strip().replace("\n", "\n      ")
            lines.append(f"  {MARK.get(f.severity, '-')} [{f.reason}] {f.object}: {text}")
            if f.hint:
                lines.append(f"      hint: {f.hint}")
        return "\n".join(lines) + "\n"
    for f, repeats in concise(d.findings):
        line = f"  {MARK.get(f.severity, '-')} [{f.reason}] {f.object}: {short_message(f.message)}"
        if repeats:
            seen = sorted({f"{r.object} [{r.reason}]" for r in repeats})
            line += f" (also reported by {', '.join(seen)})"
        if f.hint:
            line += f"; hint: {f.hint}"
        lines.append(line)
    return "\n".join(lines) + "\n"


__all__ = ["concise", "dedup_key", "format_report", "meaningful_line", "short_message"]
