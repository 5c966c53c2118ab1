"""The dashboard (``/dashboard/``) in headless Chromium, served by the API server over the
real kube-apiserver: what a person sees.

One Chromium (conftest.py's ``browser``, shared with the other dashboard browser modules)
and two API servers (caller mode and service-account mode) serve the whole module. A person
sees the objects of the namespace in the URL and nothing of another; the namespace selector
keeps the URL in step (and Back returns); a RayJob created through the API while the page is
open appears within 2 s without a reload; in caller mode the page asks for a token first
(kept in session storage, never in a URL), a caller whose Role lacks ``list`` on rayjobs
reads "You may not list rayjobs in namespace ..." and a refused token returns to the login
page; in service-account mode no login page appears.

Screenshots go to ``tests/chromium.artifacts_dir()``, and into ``docs/images/`` when
``KUBERAY_DASHBOARD_SCREENSHOTS=1`` (``make dashboard-screenshots``).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from kuberay.apiserver.app import make_app
from kuberay.apiserver.options import CALLER, SERVICE_ACCOUNT, ApiServerOptions
from kuberay.apiserver.upstream import Upstream
from kuberay.apiserver.wiring import install
from kuberay.diagnosis.rules import diagnose
from kuberay.kube import Client
from kuberay.kube.kubeconfig import load
from kuberay.kubectl_ray.why import take_snapshot
from tests.chromium import Browser, artifacts_dir

from .bodies import raycluster, rayjob
from .conftest import grant, service_account_token

pytestmark = pytest.mark.usefixtures("crds_installed")

SCREENSHOTS_ENV = "KUBERAY_DASHBOARD_SCREENSHOTS"
DOCS_IMAGES = Path(__file__).resolve().parents[3] / "docs" / "images"
READ = ["get", "list", "watch"]
#: A person's "at once": a change made elsewhere shows within this many seconds.
LIVE_WITHIN = 2.0


def _shots() -> list[Path]:
    places = [artifacts_dir()]
    if os.environ.get(SCREENSHOTS_ENV):
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        places.append(DOCS_IMAGES)
    return places


async def _screenshot(browser: Browser, name: str) -> None:
    png = await browser.screenshot()
    for place in _shots():
        (place / name).write_bytes(png)


@pytest.fixture(scope="module")
async def kube(kubeconfig_path: Path) -> AsyncIterator[Client]:
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture(scope="module")
async def namespaces(kube: Client) -> AsyncIterator[tuple[str, str]]:
    """Two fresh namespaces: ``team-a-*`` and ``team-b-*``."""
    if os.environ.get(SCREENSHOTS_ENV):  # a fresh control plane: names as a reader's
        names = ("team-a", "team-b")
    else:
        names = (f"team-a-{uuid.uuid4().hex[:6]}", f"team-b-{uuid.uuid4().hex[:6]}")
    for name in names:
        await kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield names
    finally:
        for name in names:
            await kube.delete("v1", "Namespace", name)


#: What the fake history server's ``/clusters`` lists (a test fills it).
HISTORY: list[dict[str, str]] = []


async def _history_clusters(_request: web.Request) -> web.Response:
    return web.json_response(HISTORY)


@pytest.fixture(scope="module")
async def servers(kubeconfig_path: Path) -> AsyncIterator[dict[str, str]]:
    """Base URLs of an API server in each auth mode, over the test apiserver (the
    service-account one with a fake history server, whose URL is ``history``)."""
    running: list[tuple[web.AppRunner, Upstream]] = []
    urls: dict[str, str] = {}
    history = web.Application()
    history.router.add_get("/clusters", _history_clusters)
    history_runner = web.AppRunner(history, access_log=None)
    await history_runner.setup()
    await web.TCPSite(history_runner, "127.0.0.1", 0).start()
    urls["history"] = f"http://127.0.0.1:{history_runner.addresses[0][1]}"
    try:
        for mode in (CALLER, SERVICE_ACCOUNT):
            history_url = urls["history"] if mode == SERVICE_ACCOUNT else ""
            options = ApiServerOptions(
                http_host="127.0.0.1", http_port=0, auth_mode=mode, history_server_url=history_url
            )
            upstream = Upstream(load(str(kubeconfig_path)))
            rewrite, routes = install()
            app = make_app(options, upstream, rewrite=rewrite, extra_routes=routes)
            # as main.serve: a watch the page left ends with it; a short shutdown
            runner = web.AppRunner(
                app, access_log=None, handler_cancellation=True, shutdown_timeout=1
            )
            await runner.setup()
            running.append((runner, upstream))
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            urls[mode] = f"http://127.0.0.1:{runner.addresses[0][1]}"
        yield urls
    finally:
        for runner, upstream in running:
            await runner.cleanup()
            await upstream.close()
        await history_runner.cleanup()


async def _cluster(kube: Client, name: str, namespace: str, **status: Any) -> None:
    """A RayCluster with ``status`` written as the operator would (none runs here)."""
    await kube.create(raycluster(name, namespace))
    if status:
        await kube.patch_status(
            "ray.io/v1", "RayCluster", name, {"status": status}, namespace, patch_type="merge"
        )


async def _open(browser: Browser, url: str) -> None:
    """Open ``url`` in a fresh state: this origin's session storage (the token) emptied."""
    origin = url.split("/dashboard", 1)[0]
    await browser.goto(url)
    deadline = time.monotonic() + 10
    while await browser.evaluate("location.origin") != origin:
        assert time.monotonic() < deadline, "the page did not open"
        await browser.evaluate("new Promise(r => setTimeout(r, 20))")
    await browser.evaluate("sessionStorage.clear()")
    await browser.goto(url)


async def _press_enter(browser: Browser) -> None:
    """A real key press (DevTools input), on whatever has the focus."""
    key = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}
    await browser.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": "\r", **key})
    await browser.send("Input.dispatchKeyEvent", {"type": "keyUp", **key})


async def _choose_namespace(browser: Browser, value: str) -> None:
    """Choose ``value`` in the selector as a person does: from its list when it is there,
    else through "Other namespace…" and its text box."""
    chosen = await browser.evaluate(
        f"(() => {{ const s = document.getElementById('namespace'); const v = {json.dumps(value)};"
        " const known = [...s.options].some(o => o.value === v);"
        " s.value = known ? v : ''; s.dispatchEvent(new Event('change')); return known; })()"
    )
    if not chosen:
        await browser.evaluate(
            f"(() => {{ document.getElementById('other-namespace').value = {json.dumps(value)};"
            " document.getElementById('namespace-form').requestSubmit(); })()"
        )


async def _sign_in(browser: Browser, token: str) -> None:
    await browser.wait_for_text(["Sign in", "Bearer token"], timeout=10)
    await browser.evaluate(
        f"(() => {{ document.getElementById('token').value = {json.dumps(token)};"
        " document.querySelector('.login form').requestSubmit(); })()"
    )


async def _search(browser: Browser) -> dict[str, str]:
    return dict(
        await browser.evaluate("Object.fromEntries(new URLSearchParams(location.search))") or {}
    )


async def test_service_account_mode_lists_the_namespace_in_the_url_and_follows_the_selector(
    browser: Browser, servers: dict[str, str], namespaces: tuple[str, str], kube: Client
) -> None:
    team_a, team_b = namespaces
    await _cluster(
        kube, "alpha", team_a, state="ready", desiredWorkerReplicas=2,
        availableWorkerReplicas=2, desiredCPU="6", desiredMemory="12Gi", desiredGPU="0",
    )  # fmt: skip
    await _cluster(kube, "alpha-gpu", team_a, desiredWorkerReplicas=4, desiredGPU="4")
    await _cluster(kube, "bravo", team_b, state="suspended")

    await browser.goto(f"{servers[SERVICE_ACCOUNT]}/dashboard/?namespace={team_a}")
    text = await browser.wait_for_text(["alpha-gpu", "Live"], timeout=15)
    assert "Sign in" not in text  # service-account mode: no login page
    assert "bravo" not in text  # nothing of another namespace
    for column in ("Name", "Desired workers", "Available workers", "CPUs", "Status", "Age"):
        assert column in text, column
    assert "ready" in text and "12Gi" in text
    assert await _search(browser) == {"namespace": team_a, "kind": "rayclusters"}
    age_title = await browser.evaluate("document.querySelector('tbody time').title")
    assert "(20" in age_title and "Z)" in age_title  # the exact time, local and UTC
    await _screenshot(browser, "dashboard-rayclusters.png")

    await _choose_namespace(browser, team_b)
    text = await browser.wait_for_text(["bravo", "suspended"], timeout=10)
    assert "alpha" not in text
    assert (await _search(browser))["namespace"] == team_b

    await _choose_namespace(browser, "_all")
    text = await browser.wait_for_text(["alpha-gpu", "bravo", "Namespace"], timeout=10)
    assert (await _search(browser))["namespace"] == "_all"

    await browser.evaluate("history.back()")  # the selector pushed each choice
    text = await browser.wait_for_text(["bravo"], timeout=10)
    assert "alpha" not in text
    assert (await _search(browser))["namespace"] == team_b

    # sorting by a header button (keyboard: Enter on it) and filtering, kept in the URL
    await _choose_namespace(browser, team_a)
    await browser.wait_for_text(["alpha-gpu"], timeout=10)
    await browser.evaluate(
        "[...document.querySelectorAll('th button')]"
        ".find(b => b.textContent.startsWith('Desired workers')).focus()"
    )
    await _press_enter(browser)  # ascending
    await _press_enter(browser)  # the focus stayed on the header: descending
    await browser.evaluate("new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))")
    names = await browser.evaluate(
        "[...document.querySelectorAll('tbody th')].map(th => th.textContent)"
    )
    assert names == ["alpha-gpu", "alpha"]  # 4 workers before 2: descending
    sorted_by = await browser.evaluate(
        "document.querySelector('th[aria-sort=descending]').textContent"
    )
    assert sorted_by.startswith("Desired workers")
    assert (await _search(browser))["dir"] == "desc"
    await browser.evaluate(
        "(() => { const f = document.getElementById('filter'); f.value = 'gpu';"
        " f.dispatchEvent(new Event('input')); })()"
    )
    text = await browser.wait_for_text(["1 of 2 RayClusters match"], timeout=5)
    assert (await _search(browser))["filter"] == "gpu"
    assert not [c for c in browser.console if c.startswith("exception")], browser.console


async def test_caller_mode_signs_in_and_a_new_rayjob_appears_live(
    browser: Browser, servers: dict[str, str], namespaces: tuple[str, str], kube: Client
) -> None:
    team_a, _ = namespaces
    url = servers[CALLER]
    viewer = await service_account_token(kube, team_a, "viewer")
    await grant(
        kube, team_a, "viewer",
        [{"apiGroups": ["ray.io"], "resources": ["rayclusters", "rayjobs"],
          "verbs": [*READ, "create"]}],
    )  # fmt: skip

    await _open(browser, f"{url}/dashboard/?namespace={team_a}&kind=rayjobs")
    text = await browser.wait_for_text(["Sign in", "Bearer token"], timeout=10)
    assert "RayJobs in" not in text
    await _screenshot(browser, "dashboard-login.png")

    await _sign_in(browser, viewer)
    await browser.wait_for_text([f"No RayJobs in namespace {team_a}", "Live"], timeout=10)
    assert viewer not in str(await browser.evaluate("location.href"))
    urls = await browser.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    assert urls and not [u for u in urls if viewer in u]  # the token is never in a URL
    assert await browser.evaluate("sessionStorage.length") == 1

    await browser.evaluate("window.stillTheSamePage = true")
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            f"{url}/apis/ray.io/v1/namespaces/{team_a}/rayjobs",
            json=rayjob("nightly-train", team_a),
            headers={"Authorization": f"Bearer {viewer}"},
        ) as resp,
    ):
        assert resp.status == 201, await resp.text()
    created = time.monotonic()
    while "nightly-train" not in await browser.text():
        assert time.monotonic() - created < LIVE_WITHIN, await browser.text()
        await browser.evaluate("new Promise(r => setTimeout(r, 50))")
    print(f"a new RayJob appeared after {time.monotonic() - created:.2f}s")

    # changes and deletions arrive the same way
    await kube.create(rayjob("hourly-eval", team_a))
    await browser.wait_for_text(["hourly-eval", "2 RayJobs"], timeout=LIVE_WITHIN)
    started = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=3)
    await kube.patch_status(
        "ray.io/v1", "RayJob", "nightly-train",
        {"status": {"jobStatus": "RUNNING", "jobDeploymentStatus": "Running",
                    "rayClusterName": "nightly-train-x7k2p",
                    "startTime": started.isoformat().replace("+00:00", "Z")}},
        team_a, patch_type="merge",
    )  # fmt: skip
    await kube.delete("ray.io/v1", "RayJob", "hourly-eval", team_a)
    text = await browser.wait_for_text(["RUNNING", "nightly-train-x7k2p", "1 RayJob"], timeout=5)
    assert "hourly-eval" not in text
    start_cell = await browser.evaluate(
        "[...document.querySelectorAll('tbody time')].map(t => [t.textContent, t.title])"
    )
    # the start time in the viewer's time zone (the test's browser: the machine's), exact
    # time and UTC on hover
    assert any(started.isoformat().replace("+00:00", "Z") in title for _, title in start_cell)
    assert await browser.evaluate("window.stillTheSamePage") is True  # no reload
    await _screenshot(browser, "dashboard-rayjobs.png")
    assert not [c for c in browser.console if c.startswith("exception")], browser.console


async def test_caller_mode_names_what_a_caller_may_not_list_and_a_refused_token_signs_out(
    browser: Browser, servers: dict[str, str], namespaces: tuple[str, str], kube: Client
) -> None:
    team_a, _ = namespaces
    url = servers[CALLER]
    clusters_only = await service_account_token(kube, team_a, "clusters-only")
    await grant(
        kube, team_a, "clusters-only",
        [{"apiGroups": ["ray.io"], "resources": ["rayclusters"], "verbs": READ}],
    )  # fmt: skip
    await kube.create(raycluster("charlie", team_a))

    await _open(browser, f"{url}/dashboard/?namespace={team_a}&kind=rayjobs")
    await _sign_in(browser, clusters_only)
    await browser.wait_for_text([f"You may not list rayjobs in namespace {team_a}."], timeout=10)
    assert await browser.evaluate("document.querySelector('.table-wrap').hidden") is True
    await _screenshot(browser, "dashboard-forbidden.png")

    assert await browser.click_text("RayClusters") == 1  # the same token may list these
    await browser.wait_for_text(["charlie", "Live"], timeout=10)
    assert (await _search(browser))["kind"] == "rayclusters"

    await _open(browser, f"{url}/dashboard/?namespace={team_a}")
    await _sign_in(browser, "expired.or.made.up")  # well formed: the kube-apiserver says 401
    await browser.wait_for_text(["refused the token (401", "Bearer token"], timeout=10)
    assert await browser.evaluate("sessionStorage.length") == 0
    assert not [c for c in browser.console if c.startswith("exception")], browser.console


def _event(name: str, regarding: dict[str, Any], reason: str, note: str) -> dict[str, Any]:
    """An events.k8s.io/v1 Event about ``regarding`` (a created object), as the operator
    records one."""
    meta = regarding["metadata"]
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": meta["namespace"]},
        "eventTime": now,
        "reportingController": "ray.io/raycluster-controller",
        "reportingInstance": "kuberay-operator-0",
        "action": "Reconcile",
        "reason": reason,
        "note": note,
        "type": "Normal",
        "regarding": {
            "apiVersion": "ray.io/v1", "kind": regarding["kind"], "name": meta["name"],
            "namespace": meta["namespace"], "uid": meta["uid"],
        },
    }  # fmt: skip


def _ray_pod(name: str, namespace: str, cluster: str, node_type: str) -> dict[str, Any]:
    """A Pod labelled as ``cluster``'s Ray pod (no node runs it: it stays Pending)."""
    labels = {"ray.io/cluster": cluster, "ray.io/node-type": node_type, "ray.io/group": "g"}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": [{"name": "ray", "image": "ray:x"}]},
    }  # fmt: skip


async def test_a_detail_page_shows_one_object_s_conditions_events_and_ray_dashboard(
    browser: Browser, servers: dict[str, str], namespaces: tuple[str, str], kube: Client
) -> None:
    _, team_b = namespaces
    delta = await kube.create(raycluster("delta", team_b))
    echo = await kube.create(raycluster("echo", team_b))
    changed = "2026-03-04T05:06:07Z"
    conditions = [
        {"type": "HeadPodReady", "status": "True", "reason": "HeadPodRunningAndReady",
         "message": "", "lastTransitionTime": changed},
        {"type": "RayClusterProvisioned", "status": "False",
         "reason": "RayClusterPodsProvisioning", "message": "2 of 3 workers are not ready",
         "lastTransitionTime": changed},
    ]  # fmt: skip
    status = {"state": "ready", "desiredWorkerReplicas": 3, "desiredCPU": "7",
              "head": {"serviceName": "delta-head-svc"}, "conditions": conditions}  # fmt: skip
    await kube.patch_status(
        "ray.io/v1", "RayCluster", "delta", {"status": status}, team_b, patch_type="merge"
    )
    await kube.create(_event("delta.1", delta, "CreatedWorkerPod", "Created worker Pod delta-w-1"))
    await kube.create(_event("echo.1", echo, "DeletedHeadPod", "Deleted head Pod echo-head"))
    for pod, cluster, node_type in (
        ("delta-head-x1", "delta", "head"), ("delta-w-x2", "delta", "worker"),
        ("echo-head-x3", "echo", "head"),
    ):  # fmt: skip
        await kube.create(_ray_pod(pod, team_b, cluster, node_type))
    url = servers[SERVICE_ACCOUNT]
    session = "session_2026-03-04_05-06-07_000001_1"
    HISTORY[:] = [
        {"name": name, "namespace": team_b, "sessionName": session, "ownerKind": "",
         "ownerName": "", "createTime": changed}
        for name in ("delta", "nobody")
    ]  # fmt: skip

    await _open(browser, f"{url}/dashboard/?namespace={team_b}")
    await browser.wait_for_text(["delta", "echo", "Live"], timeout=10)
    await browser.evaluate(  # the keyboard's way in: Enter on the row's name
        "[...document.querySelectorAll('tbody th a')].find(a => a.textContent === 'delta').focus()"
    )
    await _press_enter(browser)
    wanted = [
        "RayCluster delta", "HeadPodRunningAndReady", "2 of 3 workers are not ready",
        "Created worker Pod delta-w-1", "CreatedWorkerPod", "Ray dashboard of delta",
        "Pods of delta", "delta-head-x1", "delta-w-x2", "Pending",
    ]  # fmt: skip
    text = await browser.wait_for_text(wanted, timeout=10)
    assert "echo" not in text  # nothing of another object: neither its name nor its Event
    assert await _search(browser) == {"namespace": team_b, "kind": "rayclusters", "name": "delta"}
    assert "Desired workers" in text and "ready" in text  # the list's columns, as a summary
    titles = await browser.evaluate(
        "[...document.querySelectorAll('section tbody time')].map(t => t.title)"
    )
    assert any("(2026-03-04T05:06:07Z)" in t for t in titles), titles  # exact time on hover
    link = await browser.evaluate("document.querySelector('.links a').href")
    assert link == (
        f"{url}/api/v1/namespaces/{team_b}/services/http:delta-head-svc:dashboard/proxy/"
    )
    # Why: the verdict kubectl ray why prints for the same cluster (one implementation)
    verdict = diagnose(await take_snapshot(kube, "RayCluster", "delta", team_b)).summary
    await browser.wait_for_text(["Why", verdict], timeout=10)
    shown = await browser.evaluate("document.querySelector('.why-verdict').textContent")
    assert shown == verdict
    await browser.wait_for_text(["History", f"delta / {session}"], timeout=10)
    await _screenshot(browser, "dashboard-raycluster-detail.png")

    await browser.evaluate("history.back()")  # Back returns to the list
    await browser.wait_for_text(["RayClusters in", "echo", "delta"], timeout=10)
    assert "name" not in await _search(browser)

    await browser.goto(f"{url}/dashboard/?namespace={team_b}&kind=rayclusters&name=delta")
    text = await browser.wait_for_text(wanted, timeout=10)  # the link opens the same page
    assert "echo" not in text

    await browser.goto(f"{url}/dashboard/?namespace={team_b}&kind=rayclusters&name=nobody")
    await browser.wait_for_text(  # a deleted cluster: its history stays reachable
        [f"There is no RayCluster nobody in namespace {team_b}", f"nobody / {session}"],
        timeout=10,
    )
    link = await browser.evaluate("document.querySelector('.history-sessions a').href")
    assert link == f"{servers['history']}/enter_cluster/{team_b}/raycluster/nobody/{session}"

    # a RayJob's driver log: none before the job is submitted; then asked of its cluster's
    # head Service through the Service proxy (absent here: the kube-apiserver's 404 shown)
    await kube.create(rayjob("fox", team_b))
    await browser.goto(f"{url}/dashboard/?namespace={team_b}&kind=rayjobs&name=fox")
    await browser.wait_for_text(["RayJob fox", "Driver log", "No Ray job yet"], timeout=10)
    await kube.patch_status(
        "ray.io/v1", "RayJob", "fox", {"status": {"jobId": "fox-1", "rayClusterName": "delta"}},
        team_b, patch_type="merge",
    )  # fmt: skip
    await browser.evaluate(
        "[...document.querySelectorAll('button')].find(b => b.textContent === 'Refresh log')"
        ".click()"
    )
    await browser.wait_for_text(["The log cannot be read", "delta-head-svc"], timeout=10)

    # caller mode: a link cannot carry the token, so the page names the commands instead
    reader = await service_account_token(kube, team_b, "reader")
    await grant(
        kube, team_b, "reader",
        [{"apiGroups": ["ray.io"], "resources": ["rayclusters"], "verbs": READ},
         {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["list"]}],
    )  # fmt: skip
    await _open(browser, f"{servers[CALLER]}/dashboard/?namespace={team_b}&name=delta")
    await _sign_in(browser, reader)
    text = await browser.wait_for_text(  # Pods too, though the reader may not list them
        ["Created worker Pod delta-w-1", f"kubectl ray session delta -n {team_b}", "delta-w-x2"],
        timeout=10,
    )
    assert await browser.evaluate("document.querySelectorAll('.links a').length") == 0
    # the reader may not list core Events: Why says what it could not judge
    await browser.wait_for_text(["Not judged: Events of RayCluster/delta not read"], timeout=10)
    assert not [c for c in browser.console if c.startswith("exception")], browser.console


async def test_the_page_s_own_rules(browser: Browser, servers: dict[str, str]) -> None:
    """The browser side's pure functions, run in the page: ages as kubectl prints them (the
    plugin's implementation gives the same), the URL's state, watch events, sort order."""
    from kuberay.kubectl_ray.output import human_duration

    await browser.goto(f"{servers[SERVICE_ACCOUNT]}/dashboard/?namespace=default")
    await browser.wait_for_text(["RayClusters in namespace default"], timeout=10)
    seconds = [-5, -0.5, 0, 59, 119, 120, 125, 600, 601, 3 * 3600, 3 * 3600 + 300,
               10 * 3600, 3 * 86400, 3 * 86400 + 4 * 3600, 30 * 86400, 800 * 86400,
               3 * 365 * 86400, 9 * 365 * 86400]  # fmt: skip
    ages = await browser.evaluate(
        "import(new URL('cells.js', location.href)).then(m =>"
        f" {json.dumps(seconds)}.map(s => m.humanDuration(s * 1000)))"
    )
    assert ages == [human_duration(s) for s in seconds]

    checks = await browser.evaluate(
        """Promise.all(['state.js', 'cells.js', 'watch.js', 'api.js'].map(
             f => import(new URL(f, location.href)))).then(([state, cells, watch, api]) => {
          const plurals = ['rayclusters', 'rayjobs'];
          const items = new Map();
          const obj = (name, rv) => ({metadata: {namespace: 'n', name, resourceVersion: rv}});
          return {
            empty: state.readState('', plurals),
            bad: state.readState('?kind=pods&dir=sideways', plurals),
            written: state.writeState({namespace: '_all', kind: 'rayjobs', sort: 'name',
                                       dir: 'asc', filter: ''}),
            sorted: state.writeState({namespace: 'a', kind: 'rayjobs', sort: 'age',
                                      dir: 'desc', filter: 'x y'}),
            names: ['ok-1', '-no', 'No', 'a'.repeat(64), '_all'].map(state.isNamespaceName),
            events: [watch.applyEvent(items, {type: 'ADDED', object: obj('a', '5')}),
                     watch.applyEvent(items, {type: 'BOOKMARK', object: obj('', '7')}),
                     watch.applyEvent(items, {type: 'DELETED', object: obj('a', '8')}),
                     watch.applyEvent(items, {type: 'ERROR', object: {code: 410}})],
            left: items.size,
            order: ['w10', null, 'w2', 'W1'].sort(cells.compareKeys),
            match: [cells.rowMatches(['alpha', 'RUNNING'], cells.filterWords(' run  ALP ')),
                    cells.rowMatches(['alpha'], cells.filterWords('beta'))],
            refusal: api.describeError(
              new api.ApiError(403, {reason: 'Forbidden', message: 'm',
                                     details: {group: 'ray.io', kind: 'rayjobs'}}, 'm'),
              'list', 'rayjobs', '_all').title,
          };
        })"""
    )
    assert checks["empty"] == {
        "namespace": "default", "kind": "rayclusters", "sort": "name", "dir": "asc", "filter": "",
        "name": "", "create": False,
    }  # fmt: skip
    assert checks["bad"]["kind"] == "rayclusters" and checks["bad"]["dir"] == "asc"
    assert checks["written"] == "?namespace=_all&kind=rayjobs"
    assert checks["sorted"] == "?namespace=a&kind=rayjobs&sort=age&dir=desc&filter=x+y"
    assert checks["names"] == [True, False, False, False, False]
    assert checks["events"] == ["5", "7", "8", "gone"] and checks["left"] == 0
    assert checks["order"] == ["W1", "w2", "w10", None]
    assert checks["match"] == [True, False]
    assert checks["refusal"] == "You may not list rayjobs in all namespaces."

    links = await browser.evaluate(
        """Promise.all(['links.js', 'detail-view.js', 'state.js'].map(
             f => import(new URL(f, location.href)))).then(([links, detail, state]) => {
          const ev = (uid, at, note) => ({note, eventTime: at, regarding: {uid}});
          return {
            url: links.rayDashboardUrl(new URL('http://h/p/'), 'ns', 'c-head-svc').href,
            clusters: [links.clusterNameOf('RayJob', {status: {rayClusterName: 'j-abc'}}),
                       links.clusterNameOf('RayService',
                         {status: {activeServiceStatus: {rayClusterName: 's-1'}}}),
                       links.clusterNameOf('RayCronJob', {metadata: {name: 'x'}})],
            service: [links.headServiceOf({status: {}}),
                      links.headServiceOf({status: {head: {serviceName: 'c-head-svc'}}})],
            notes: detail.eventRows([ev('u1', '2026-01-01T00:00:00Z', 'old'),
                                     ev('u0', '2026-01-03T00:00:00Z', 'older object'),
                                     ev(undefined, '2026-01-02T00:00:00Z', 'no uid')],
                                    'u1', Date.now()).map(r => r[5].text),
            detail: state.writeState({...state.readState('?namespace=a', ['rayclusters']),
                                      name: 'c'}),
            pods: detail.podRows([{name: 'c-head', nodeType: 'head', group: 'headgroup',
                                   phase: 'Running', ready: true, restarts: 2,
                                   creationTimestamp: '2026-01-01T00:00:00Z'}],
                                 Date.parse('2026-01-01T00:05:00Z')).map(r => r.map(c => c.text)),
          };
        })"""
    )
    assert links == {
        "url": "http://h/p/api/v1/namespaces/ns/services/http:c-head-svc:dashboard/proxy/",
        "clusters": ["j-abc", "s-1", ""],
        "service": ["", "c-head-svc"],
        "notes": ["no uid", "old"],  # newest first; an Event of an older namesake left out
        "detail": "?namespace=a&kind=rayclusters&name=c",
        "pods": [["c-head", "head", "headgroup", "Running", "yes", "2", "5m"]],
    }
