"""An object's page in headless Chromium kept live by watches, on the real kube-apiserver.

With a RayCluster's page open, what an admin does elsewhere shows without a reload and within
``LIVE_WITHIN``: a status patch (a new condition, another state) redraws the status and the
conditions and reads its Pods again; an Event created for it appears; its deletion reads as
"deleted" with nothing stale left on the page, and a new one of the name is shown afresh.
Leaving the page ends its watches, in the browser and on the server (its /metrics). A caller
who may list Events but not watch them sees a new Event once the object next changes. Ages
move on with the clock alone.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kuberay.apiserver.options import CALLER, SERVICE_ACCOUNT
from kuberay.kube import Client
from tests.chromium import Browser

from .bodies import raycluster
from .conftest import grant, service_account_token
from .test_dashboard_browser import (
    LIVE_WITHIN,
    READ,
    _event,
    _open,
    _ray_pod,
    _sign_in,
    kube,
    servers,
)

pytestmark = pytest.mark.usefixtures("crds_installed")
__all__ = ["kube", "servers"]  # the browser module's fixtures, used here too

#: Records every watch the page opens (its URL and its fetch's signal), installed in a
#: page that is open already: the detail page is then reached without a reload.
WATCH_SPY = """(() => {
  window.watches = [];
  const real = window.fetch;
  window.fetch = (url, init) => {
    const href = String(url);
    if (href.includes('watch=true')) window.watches.push({url: href, signal: init?.signal});
    return real(url, init);
  };
})()"""


@pytest.fixture(scope="module")
async def namespace(kube: Client) -> AsyncIterator[str]:
    name = f"live-{uuid.uuid4().hex[:6]}"
    await kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        await kube.delete("v1", "Namespace", name)


async def _shows_within(browser: Browser, wanted: list[str], since: float) -> float:
    """Wait (polling every 50 ms) until the page's text holds every string of ``wanted``,
    at most LIVE_WITHIN seconds after ``since``; the seconds it took."""
    while True:
        text = await browser.text()
        if all(w in text for w in wanted):
            return time.monotonic() - since
        missing = [w for w in wanted if w not in text]
        assert time.monotonic() - since < LIVE_WITHIN, f"{missing} not shown: {text[:1500]}"
        await browser.evaluate("new Promise(r => setTimeout(r, 50))")


async def _patch_status(kube: Client, name: str, namespace: str, status: dict[str, Any]) -> float:
    await kube.patch_status(
        "ray.io/v1", "RayCluster", name, {"status": status}, namespace, patch_type="merge"
    )
    return time.monotonic()


async def _watches_streaming(server: str) -> float:
    """The watches the API server at ``server`` is streaming now (its /metrics)."""
    async with aiohttp.ClientSession() as http, http.get(f"{server}/metrics") as resp:
        text = await resp.text()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            name, labels = sample.name, sample.labels
            if name == "kuberay_apiserver_requests_in_flight" and labels.get("watch") == "true":
                return sample.value
    return 0.0


async def _streaming_within(browser: Browser, server: str, wanted: int) -> None:
    """Wait at most LIVE_WITHIN seconds for ``server`` to be streaming ``wanted`` watches."""
    deadline = time.monotonic() + LIVE_WITHIN
    while (streaming := await _watches_streaming(server)) != wanted:
        assert time.monotonic() < deadline, f"{streaming} watches streaming, not {wanted}"
        await browser.evaluate("new Promise(r => setTimeout(r, 50))")


def _condition(kind: str, status: str, reason: str, message: str) -> dict[str, str]:
    return {
        "type": kind, "status": status, "reason": reason, "message": message,
        "lastTransitionTime": "2026-03-04T05:06:07Z",
    }  # fmt: skip


async def test_a_detail_page_follows_its_object_s_status_events_and_deletion(
    browser: Browser, servers: dict[str, str], namespace: str, kube: Client
) -> None:
    golf = await kube.create(raycluster("golf", namespace))
    first = _condition("HeadPodReady", "True", "HeadPodRunningAndReady", "")
    await _patch_status(kube, "golf", namespace, {"state": "ready", "conditions": [first]})
    await kube.create(_ray_pod("golf-head-a1", namespace, "golf", "head"))
    url = servers[SERVICE_ACCOUNT]

    await _open(browser, f"{url}/dashboard/?namespace={namespace}")
    await browser.wait_for_text(["golf", "Live"], timeout=10)
    await browser.evaluate(WATCH_SPY)
    await browser.evaluate("window.stillTheSamePage = true")
    await browser.evaluate(
        "[...document.querySelectorAll('tbody th a')].find(a => a.textContent === 'golf').click()"
    )
    await browser.wait_for_text(
        ["RayCluster golf", "HeadPodRunningAndReady", "golf-head-a1"], timeout=10
    )
    await browser.wait_for_text(["Live"], timeout=10)  # the object's watch, not "Read at"

    # a Pod appears: no timer re-reads the Pods; the cluster's next status change does
    await kube.create(_ray_pod("golf-worker-b2", namespace, "golf", "worker"))
    await browser.evaluate("new Promise(r => setTimeout(r, 1000))")
    assert "golf-worker-b2" not in await browser.text()
    second = _condition(
        "RayClusterProvisioned", "False", "RayClusterPodsProvisioning", "1 of 2 workers not ready"
    )
    patched = await _patch_status(
        kube, "golf", namespace, {"state": "suspended", "conditions": [first, second]}
    )
    took = await _shows_within(
        browser, ["1 of 2 workers not ready", "suspended", "golf-worker-b2"], patched
    )
    print(f"a status patch showed after {took:.2f}s")

    created = time.monotonic()
    await kube.create(_event("golf.1", golf, "CreatedWorkerPod", "Created worker Pod golf-w-9"))
    shown = ["Created worker Pod golf-w-9", "CreatedWorkerPod"]
    took = await _shows_within(browser, shown, created)
    print(f"an Event showed after {took:.2f}s")

    deleted = time.monotonic()
    await kube.delete("ray.io/v1", "RayCluster", "golf", namespace)
    await _shows_within(browser, ["RayCluster golf was deleted"], deleted)
    text = await browser.text()
    for stale in ("1 of 2 workers not ready", "golf-worker-b2", "Created worker Pod golf-w-9"):
        assert stale not in text, stale  # nothing of what it was
    assert await browser.evaluate("document.querySelector('[data-ref=delete]').hidden") is True

    recreated = time.monotonic()
    await kube.create(raycluster("golf", namespace))
    await _shows_within(browser, ["RayCluster golf", "No conditions reported."], recreated)
    assert "was deleted" not in await browser.text()
    assert await browser.evaluate("window.stillTheSamePage") is True  # never reloaded

    # leaving the page ends its watches: the object's and its Events'
    await _streaming_within(browser, url, 2)  # the page's two (the list's ended with it)
    await browser.evaluate("history.back()")
    await browser.wait_for_text(["RayClusters in", "Live"], timeout=10)
    opened = await browser.evaluate(
        "window.watches.filter(w => w.url.includes('metadata.name') ||"
        " w.url.includes('events.k8s.io')).map(w => [w.url, w.signal.aborted])"
    )
    assert any("fieldSelector=metadata.name%3Dgolf" in u for u, _ in opened), opened
    assert any("/apis/events.k8s.io/v1/" in u for u, _ in opened), opened
    assert [u for u, aborted in opened if not aborted] == []
    await _streaming_within(browser, url, 1)  # on the server: the list's own watch alone
    assert not [c for c in browser.console if c.startswith("exception")], browser.console


async def test_events_a_caller_may_not_watch_are_read_again_when_the_object_changes(
    browser: Browser, servers: dict[str, str], namespace: str, kube: Client
) -> None:
    hotel = await kube.create(raycluster("hotel", namespace))
    lister = await service_account_token(kube, namespace, "event-lister")
    await grant(
        kube, namespace, "event-lister",
        [{"apiGroups": ["ray.io"], "resources": ["rayclusters"], "verbs": READ},
         {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["list"]}],
    )  # fmt: skip
    query = f"namespace={namespace}&kind=rayclusters&name=hotel"
    await _open(browser, f"{servers[CALLER]}/dashboard/?{query}")
    await _sign_in(browser, lister)
    await browser.wait_for_text(["RayCluster hotel", "No Events", "Live"], timeout=10)

    await kube.create(_event("hotel.1", hotel, "HeadPodCreated", "Created head Pod hotel-h"))
    patched = await _patch_status(kube, "hotel", namespace, {"state": "ready"})
    await _shows_within(browser, ["Created head Pod hotel-h"], patched)
    assert not [c for c in browser.console if c.startswith("exception")], browser.console


async def test_the_detail_page_s_own_rules(browser: Browser, servers: dict[str, str]) -> None:
    """detail-follow.js's pure decisions, run in the page."""
    await browser.goto(f"{servers[SERVICE_ACCOUNT]}/dashboard/?namespace=default")
    await browser.wait_for_text(["RayClusters in namespace default"], timeout=10)
    checks = await browser.evaluate(
        """import(new URL('detail-follow.js', location.href)).then(f => {
          const o = (uid, rv, status) => ({metadata: {uid, resourceVersion: rv}, status});
          const shown = o('u1', '5', {state: 'ready'});
          return {
            selector: f.nameSelector('golf'),
            changes: [f.objectChange(null, null), f.objectChange(shown, null),
                      f.objectChange(null, shown), f.objectChange(shown, o('u2', '9', {})),
                      f.objectChange(shown, o('u1', '5', {state: 'ready'})),
                      f.objectChange(shown, o('u1', '6', {state: 'suspended'})),
                      f.objectChange(shown, o('u1', '7', {state: 'ready'}))],
            live: f.liveMark('live', null, '10:00:00', 'rayclusters', 'ns').text,
            loading: f.liveMark('loading', null, '10:00:00', 'rayclusters', 'ns'),
            retrying: f.liveMark('retrying', {delay: 1500, error: new Error('x')}, '10:00:00',
                                 'rayclusters', 'ns').text,
            refused: f.liveMark('stopped', Object.assign(new Error('no'), {status: 403,
                                during: 'watch'}), '10:00:00', 'rayclusters', 'ns'),
          };
        })"""
    )
    assert checks["selector"] == "metadata.name=golf"
    assert checks["changes"] == [
        "none", "deleted", "appeared", "replaced", "none", "status", "changed",
    ]  # fmt: skip
    assert checks["live"] == "Live" and checks["loading"] is None
    assert checks["retrying"] == "Reconnecting in 2 s"
    assert checks["refused"] == {
        "text": "Not live (read at 10:00:00)",
        "title": "You may not watch rayclusters in namespace ns; use Refresh.",
    }


async def test_an_event_s_last_seen_age_moves_on_with_the_clock_alone(
    browser: Browser, servers: dict[str, str], namespace: str, kube: Client
) -> None:
    india = await kube.create(raycluster("india", namespace))
    await kube.create(_event("india.1", india, "CreatedHeadPod", "Created head Pod india-h"))
    query = f"namespace={namespace}&kind=rayclusters&name=india"
    await _open(browser, f"{servers[SERVICE_ACCOUNT]}/dashboard/?{query}")
    await browser.wait_for_text(
        ["RayCluster india", "Created head Pod india-h", "Live"], timeout=10
    )
    await browser.evaluate(
        "window.asked = 0; { const real = window.fetch;"
        " window.fetch = (u, i) => { window.asked += 1; return real(u, i); }; }"
    )
    last_seen = "document.querySelector('[data-ref=events] tr').children[2].textContent"
    first = await browser.evaluate(last_seen)
    assert first in {f"{s}s" for s in range(5)}, first
    # the page redraws ages every 10 s from what it read: "Last seen" reaches 10s or more
    deadline = time.monotonic() + 15
    while (now := await browser.evaluate(last_seen)) in {f"{s}s" for s in range(10)}:
        assert time.monotonic() < deadline, f"still {now!r} after 15 s"
        await browser.evaluate("new Promise(r => setTimeout(r, 250))")
    assert now.endswith("s") and int(now[:-1]) >= 10, now
    assert await browser.evaluate("window.asked") == 0  # the clock alone, nothing asked
