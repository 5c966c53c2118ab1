"""Every Event our controllers emit with a fixed reason says what KubeRay's says: the
same type and the same message format as one of KubeRay's ``Recorder.Eventf`` calls
for that reason (catalogue in tests/kuberay_events.py, taken from KubeRay's Go source).

Our side is read from the source: every ``.event(obj, TYPE, "Reason", message, ...)``
and ``._event(TYPE, "Reason", message, ...)`` call under kuberay/controllers, so a new
Event or a reworded one is checked without a scenario for it. Formats are compared
after normalising verbs: Go's ``%s %v %d %.1f`` and our ``{expr}`` are each one
placeholder; Go's ``%q`` is a double-quoted one; a ``%s/%s`` pair is the same
placeholder as one ``{namespace/name}`` value. A placeholder may stand for plain text
of the other side (see :func:`same_text`). Messages passed in from elsewhere are not
checked here; the integration test reads the Events of samples off the apiserver.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.kuberay_events import HOLE, KUBERAY_EVENTS, fills, kuberay_formats

ROOT = Path(__file__).resolve().parents[3] / "kuberay" / "controllers"
TYPES = {"NORMAL": "Normal", "WARNING": "Warning"}


def _template(node: ast.expr) -> str | None:
    """The message of an f-string / literal / concatenation as a template; None when it
    is not written out at the call (a variable, a call)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue) and value.conversion == ord("r"):
                parts.append(f"'{HOLE}'")  # Python's repr quotes, not Go's %q
            elif isinstance(value, ast.FormattedValue) and "json.dumps(" in ast.unparse(value):
                parts.append(f'"{HOLE}"')  # a JSON string: Go's %q for plain text
            else:
                parts.append(HOLE)
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _template(node.left), _template(node.right)
        return None if left is None or right is None else left + right
    return None


def our_events() -> list[tuple[str, str, str, str]]:
    """(where, reason, type, template) of every event call with a literal reason."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            # ``x.event(obj, type, reason, message, ...)``; ``self._event(type, reason,
            # message, ...)`` (a controller's own shorthand for its object).
            skip = {"event": 1, "_event": 0}.get(node.func.attr)
            if skip is None or len(node.args) < skip + 3:
                continue
            etype, reason, message = node.args[skip : skip + 3]
            if not (isinstance(reason, ast.Constant) and isinstance(reason.value, str)):
                continue
            assert isinstance(etype, ast.Name) and etype.id in TYPES, ast.unparse(node)
            template = _template(message)
            if template is None or not re.search(r"[A-Za-z]", template.replace(HOLE, "")):
                continue  # built elsewhere (passed in): not checkable here
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            found.append(
                (where, reason.value, TYPES[etype.id], template.replace(f"{HOLE}/{HOLE}", HOLE))
            )
    return found


OURS = our_events()

#: Reasons KubeRay has no Event for: behaviour we add on purpose (see their modules).
OUR_OWN_REASONS = {
    # rayservice/reconciler.py: a pending cluster that never became ready is abandoned
    # after the upgrade timeout; KubeRay keeps waiting and says nothing.
    "RayServiceUpgradeTimeout",
    # rayservice/children.py: a serve Service of that name owned by someone else is not
    # taken over; KubeRay overwrites it silently.
    "ServiceNameConflict",
    # raycluster/removed_groups.py: the pods of a worker group removed from the spec are
    # deleted; KubeRay leaves them running (its #1739).
    "WorkerGroupRemoved",
    # rayservice/traffic.py: traffic moved after our bounded wait for Serve to settle (a
    # wait KubeRay does not have), naming the deployments that had not settled.
    "TrafficMovedBeforeServeSettled",
}


def literal_reasons() -> list[tuple[str, str]]:
    """(where, reason) of every event call whose reason is a literal, whatever the
    message (also ``_report``/``_announce``, which pass theirs through)."""
    found = []
    positions = {"event": 2, "_event": 1, "_report": 4, "_announce": 2}
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            at = positions.get(node.func.attr)
            if at is None or len(node.args) <= at:
                continue
            reason = node.args[at]
            if isinstance(reason, ast.Constant) and isinstance(reason.value, str):
                found.append((f"{path.relative_to(ROOT)}:{node.lineno}", reason.value))
    return found


def test_every_reason_is_one_kuberay_uses() -> None:
    known = {r for _, r, _, _ in KUBERAY_EVENTS}
    reasons = literal_reasons()
    assert len(reasons) >= len(OURS)
    strange = [(w, r) for w, r in reasons if r not in known and r not in OUR_OWN_REASONS]
    assert not strange, f"Event reasons KubeRay never uses: {strange}"
    assert {r for _, r in reasons} >= OUR_OWN_REASONS, "an extension is gone: drop it here"


def test_the_catalogue_and_our_source_are_read() -> None:
    assert len(KUBERAY_EVENTS) > 100
    assert len(OURS) > 40


@pytest.mark.parametrize(("where", "reason", "etype", "template"), OURS, ids=[o[0] for o in OURS])
def test_event_text_is_kuberays(where: str, reason: str, etype: str, template: str) -> None:
    theirs = kuberay_formats(reason)
    assert theirs, f"{where}: KubeRay emits no {reason!r} Event"
    show = template.replace(HOLE, "%v")
    expected = sorted(f"{t}: {tmpl.replace(HOLE, '%v')}" for t, tmpl in theirs)
    assert any(t == etype and same_text(template, tmpl) for t, tmpl in theirs), (
        f"{where}: {etype}: {show!r} not in {expected}"
    )


def same_text(ours: str, theirs: str) -> bool:
    """Equal, or one side's placeholder is a fixed text on the other: KubeRay writes a
    literal where we pass it in ("head"/"worker", a fixed error) or the reverse. A
    placeholder never stands for text holding placeholders of the other side."""
    return ours == theirs or fills(ours, theirs) or fills(theirs, ours)


def test_deleted_pod_details_read_like_kuberays() -> None:
    """The Ray container's terminated state prints as Go's %v of the pointer does."""
    from kuberay.controllers.common.pod_health import pod_state

    pod = {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "ray-head"}]},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": "sidecar", "state": {"running": {}}},
                {
                    "name": "ray-head",
                    "state": {
                        "terminated": {
                            "exitCode": 137,
                            "reason": "OOMKilled",
                            "startedAt": "2026-01-02T03:04:05Z",
                            "finishedAt": "2026-01-02T04:05:06Z",
                            "containerID": "containerd://abc",
                        }
                    },
                },
            ],
        },
    }
    assert pod_state(pod) == (
        "Running",
        "Never",
        "&ContainerStateTerminated{ExitCode:137,Signal:0,Reason:OOMKilled,Message:,"
        "StartedAt:2026-01-02 03:04:05 +0000 UTC,FinishedAt:2026-01-02 04:05:06 +0000 UTC,"
        "ContainerID:containerd://abc,}",
    )
    pod["status"] = {"phase": "Failed"}
    assert pod_state(pod) == ("Failed", "Never", "nil")
