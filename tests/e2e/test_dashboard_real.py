"""The dashboard on real Ray: a person signs in with a ServiceAccount token, fills the New
RayJob form, and the RayJob it creates runs to SUCCEEDED on the real node while its page is
open; the page shows it without a reload, the driver log tail holds what the entrypoint
printed, and Why says the job is ready (``kubectl ray why``'s verdict, read as the caller).

The API server runs in this process in caller mode over the real cluster's admin
kubeconfig (which the person's requests never use); the person's Role is what someone who
runs RayJobs in their namespace has. Chromium is the integration tests' shared one
(``tests/integration/apiserver/conftest.py``). The form is used as it is: it names the
image and the Ray version, the head's CPU and memory (requests = limits), and zero worker
replicas make the cluster head-only.

The screenshot goes to ``tests/chromium.artifacts_dir()``, and into ``docs/images/`` when
``KUBERAY_DASHBOARD_SCREENSHOTS=1``.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from kuberay.apiserver.options import CALLER, ApiServerOptions
from kuberay.apiserver.upstream import Upstream
from kuberay.diagnosis.rules import diagnose
from kuberay.kube import Client
from kuberay.kube.kubeconfig import load
from kuberay.kubectl_ray.why import take_snapshot
from tests.apiserver_serving import api_server
from tests.chromium import Browser, BrowserError
from tests.e2e.harness import OperatorProcess, record_timing
from tests.e2e.realcluster import RealCluster, diagnose_namespace, wait_for
from tests.e2e.test_apiserver_real import RAY_IMAGE
from tests.e2e.test_real_node import real_operator  # noqa: F401  (module fixture)
from tests.integration.apiserver.conftest import (  # noqa: F401  (session fixture)
    browser,
    grant,
    service_account_token,
)
from tests.integration.apiserver.test_dashboard_browser import _open, _screenshot, _sign_in
from tests.integration.apiserver.test_dashboard_create import _fill, _submit

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a real node needs root")

NAME = "dashboard-e2e"
ENTRYPOINT = "python -c \"print('dashboard-e2e', sum(range(10)))\""
PRINTED = "dashboard-e2e 45"
#: What a person who runs RayJobs in their namespace may do: what the pages read (the
#: RayJob and its cluster, their Events, Pods, the submitter Job, the head Service for Why)
#: and the driver log through the head Service's proxy.
READ = ["get", "list", "watch"]
USER_RULES = [
    {"apiGroups": ["ray.io"], "resources": ["rayjobs"], "verbs": [*READ, "create"]},
    {"apiGroups": ["ray.io"], "resources": ["rayclusters"], "verbs": READ},
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["list", "watch"]},
    {"apiGroups": [""], "resources": ["events", "pods"], "verbs": ["list"]},
    {"apiGroups": [""], "resources": ["services", "services/proxy"], "verbs": ["get"]},
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get"]},
]
#: The real node pulls nothing: starting the head, submitting and running the job takes
#: about 1-2 minutes on 2 cores.
SUCCEEDED_WITHIN = 300.0
#: The page reads again what follows from a changed status (Why) within this.
FOLLOWS_WITHIN = 30.0
#: The summary's printer columns, by heading.
SUMMARY = (
    "Object.fromEntries([...document.querySelectorAll('dl.summary dt')]"
    ".map(dt => [dt.textContent, dt.nextElementSibling.textContent]))"
)


@pytest.fixture
async def dashboard_url(real_cluster: RealCluster) -> AsyncIterator[str]:
    """An API server in caller mode over the real cluster (its dashboard at /dashboard/)."""
    upstream = Upstream(load(str(real_cluster.kubeconfig)))
    options = ApiServerOptions(http_host="127.0.0.1", http_port=0, auth_mode=CALLER)
    # as main.serve: a watch the page left ends with it; a short shutdown
    runner = {"access_log": None, "handler_cancellation": True, "shutdown_timeout": 1}
    async with api_server(options, upstream, wired=True, **runner) as url:
        yield url


async def _page(page: Browser) -> str:
    """What a failure report shows of the page: its URL, text and console."""
    href = await page.evaluate("location.href")
    return f"page {href}:\n{(await page.text())[:3000]}\nconsole: {page.console[-20:]}"


def _explainer(
    page: Browser, admin: Client, cluster: RealCluster, ns: str
) -> Callable[[], Awaitable[str]]:
    """The page, then the namespace as the other real-node tests show it."""

    async def explain() -> str:
        cluster_side = await diagnose_namespace(admin, cluster, ns, "RayJob", NAME)
        return f"{await _page(page)}\n{cluster_side}"

    return explain


async def _summary(page: Browser) -> dict[str, str]:
    return dict(await page.evaluate(SUMMARY) or {})


async def test_a_rayjob_created_with_the_form_succeeds_and_its_page_shows_it_live(
    real_cluster: RealCluster,
    real_admin: Client,
    real_operator: OperatorProcess,  # noqa: F811
    rns: str,
    browser: Browser,  # noqa: F811
    dashboard_url: str,
) -> None:
    token = await service_account_token(real_admin, rns, "ray-user")
    await grant(real_admin, rns, "ray-user", USER_RULES)
    explain = _explainer(browser, real_admin, real_cluster, rns)
    browser.console.clear()

    await _open(browser, f"{dashboard_url}/dashboard/?namespace={rns}&kind=rayjobs")
    await _sign_in(browser, token)
    await browser.wait_for_text([f"No RayJobs in namespace {rns}", "Live"], timeout=15)
    assert await browser.click_text("New RayJob") == 1
    await browser.wait_for_text(["New RayJob", "Entrypoint", "Worker replicas"], timeout=10)
    await _fill(
        browser,
        {"name": NAME, "entrypoint": ENTRYPOINT, "image": RAY_IMAGE, "rayVersion": "2.52.0",
         "headCpu": "1", "headMemory": "2Gi", "workerReplicas": "0",
         # the cluster stays 10 minutes after the job (its driver log is read from it);
         # the namespace's deletion ends it sooner
         "shutdownAfterJobFinishes": True, "ttlSecondsAfterFinished": "600"},
    )  # fmt: skip
    await browser.evaluate("window.stillTheSamePage = true")
    began = time.monotonic()
    await _submit(browser)
    await browser.wait_for_text([f"RayJob {NAME}", "Conditions", "Driver log"], timeout=15)
    search = await browser.evaluate("Object.fromEntries(new URLSearchParams(location.search))")
    assert search == {"namespace": rns, "kind": "rayjobs", "name": NAME}

    job = await real_admin.get("ray.io/v1", "RayJob", NAME, rns)
    assert job["spec"]["entrypoint"] == ENTRYPOINT
    cluster_spec = job["spec"]["rayClusterSpec"]
    head = cluster_spec["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert head["image"] == RAY_IMAGE and head["resources"]["limits"] == {
        "cpu": "1", "memory": "2Gi",
    }  # fmt: skip
    assert [g["replicas"] for g in cluster_spec["workerGroupSpecs"]] == [0]

    # nothing is clicked: the page follows the RayJob it shows
    async def page_says_succeeded() -> bool:
        return (await _summary(browser)).get("Job status") == "SUCCEEDED"

    await wait_for("the page showing Job status SUCCEEDED", page_says_succeeded,
                   SUCCEEDED_WITHIN, explain)  # fmt: skip
    record_timing("dashboard: form submitted -> page shows SUCCEEDED", time.monotonic() - began)
    job = await real_admin.get("ray.io/v1", "RayJob", NAME, rns)
    assert job["status"]["jobStatus"] == "SUCCEEDED", await explain()

    async def page_says_complete() -> bool:
        return (await _summary(browser)).get("Deployment status") == "Complete"

    await wait_for("the page showing Deployment status Complete", page_says_complete,
                   FOLLOWS_WITHIN, explain)  # fmt: skip
    cluster = (await real_admin.get("ray.io/v1", "RayJob", NAME, rns))["status"]["rayClusterName"]
    assert (await _summary(browser)).get("Ray cluster name") == cluster

    # Why: kubectl ray why's verdict on the finished job, with nothing left unjudged
    verdict = diagnose(await take_snapshot(real_admin, "RayJob", NAME, rns)).summary
    assert verdict == f"RayJob {rns}/{NAME} is ready"

    async def why_says_ready() -> dict[str, Any] | None:
        shown = await browser.evaluate(
            "(() => { const v = document.querySelector('.why-verdict'); return v &&"
            " {text: v.textContent, ready: v.dataset.ready, errors: [...document"
            ".querySelectorAll('.finding .pill[data-tone=bad]')].length}; })()"
        )
        return shown if shown and shown["text"] == verdict else None

    why = await wait_for("Why saying the job is ready", why_says_ready, FOLLOWS_WITHIN, explain)
    assert why == {"text": verdict, "ready": "yes", "errors": 0}, await explain()
    assert "Not judged" not in await browser.text(), await explain()  # the Role sufficed

    # the driver log: read again by the page itself when the RayJob's status changed (no
    # click, no reload)
    async def log_shows_the_line() -> str:
        try:
            await browser.wait_for_text([PRINTED], timeout=5)
        except BrowserError:
            return ""
        return str(await browser.evaluate("document.querySelector('pre.driver-log').textContent"))

    log = await wait_for("the driver log holding the printed line", log_shows_the_line, 60, explain)
    assert PRINTED in log.splitlines(), log
    status = await browser.evaluate(
        "document.querySelector('pre.driver-log').previousElementSibling.textContent"
    )
    assert f"Ray job {job['status']['jobId']} on {cluster}" in status, status

    await _screenshot(browser, "dashboard-rayjob-succeeded.png")
    assert await browser.evaluate("window.stillTheSamePage") is True  # no reload throughout
    exceptions = [c for c in browser.console if c.startswith("exception")]
    assert not exceptions, f"{exceptions}\n{await explain()}"
    print(f"form submitted -> SUCCEEDED on the page: {time.monotonic() - began:.1f}s")
