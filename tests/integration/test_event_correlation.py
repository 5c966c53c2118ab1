"""Event correlation on a real apiserver: repeats become one Event with a count, and
many similar messages about one object are combined (client-go's correlator)."""

from __future__ import annotations

from typing import Any

from kuberay.kube import Client
from kuberay.reconcile import CORE_V1, EVENTS_V1, EventRecorder


def cm(name: str, ns: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}}


async def test_repeats_are_one_event_with_a_count_on_both_apis(
    kclient: Client, namespace: str
) -> None:
    target = await kclient.create(cm("evt", namespace))
    for api in (EVENTS_V1, CORE_V1):
        recorder = EventRecorder(kclient, f"ctl-{api.replace('/', '-')}", api=api)
        for _ in range(5):
            recorder.event(target, "Warning", "Unhealthy", "head is not ready")
        await recorder.flush()
        await recorder.close()
    events, _ = await kclient.list_all("v1", "Event", namespace)
    assert len(events) == 2
    by_component = {e["reportingComponent"]: e for e in events}
    core = by_component["ctl-v1"]
    assert (core["count"], core["message"]) == (5, "head is not ready")
    new, _ = await kclient.list_all("events.k8s.io/v1", "Event", namespace)
    series = {e["reportingController"]: e.get("series") for e in new}
    assert series["ctl-events.k8s.io-v1"]["count"] == 5


async def test_many_similar_messages_are_combined(kclient: Client, namespace: str) -> None:
    target = await kclient.create(cm("evt", namespace))
    recorder = EventRecorder(kclient, "ctl", api=CORE_V1)
    for i in range(15):
        recorder.event(target, "Warning", "FailedCreate", f"could not create pod w-{i}")
    await recorder.flush()
    await recorder.close()
    events, _ = await kclient.list_all("v1", "Event", namespace)
    combined = [e for e in events if e["message"].startswith("(combined from similar events)")]
    assert len(events) == 10  # nine distinct ones and the combined one
    assert len(combined) == 1
    assert combined[0]["count"] == 6
    assert combined[0]["message"].endswith("could not create pod w-14")
