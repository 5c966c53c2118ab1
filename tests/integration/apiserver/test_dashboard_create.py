"""Creating and deleting a RayJob from the dashboard, in headless Chromium over the real
kube-apiserver (conftest.py's shared ``browser``).

A person fills the New RayJob form: a dry run of the create is sent first, and the
kube-apiserver's refusals (the name's rules, the CRD schema's quantity pattern) appear next
to the fields they name, with nothing created; a pasted manifest is read (JSON, or YAML by
the API server) and the schema's complaint shows in the summary; a correct form creates the
RayJob with the form's values and opens its page; Delete asks for the name before deleting.
A caller without ``create``/``delete`` rights reads a sentence naming the verb.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kuberay.apiserver.options import CALLER, SERVICE_ACCOUNT
from kuberay.kube import Client
from kuberay.kube.errors import NotFound
from tests.chromium import Browser

from .conftest import grant, service_account_token
from .test_dashboard_browser import (
    READ,
    SCREENSHOTS_ENV,
    _open,
    _screenshot,
    _search,
    _sign_in,
    kube,
    servers,
)

pytestmark = pytest.mark.usefixtures("crds_installed")
__all__ = ["kube", "servers"]  # the browser module's fixtures, used here too

TYPE_ERROR_MANIFEST = """\
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: pasted
spec:
  entrypoint: python -c 'print(1)'
  shutdownAfterJobFinishes: maybe
"""


@pytest.fixture(scope="module")
async def namespace(kube: Client) -> AsyncIterator[str]:
    # a fresh control plane for the screenshots: a name as a reader's
    name = "ml-team" if os.environ.get(SCREENSHOTS_ENV) else f"create-{uuid.uuid4().hex[:6]}"
    await kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        await kube.delete("v1", "Namespace", name)


async def _fill(browser: Browser, values: dict[str, Any]) -> None:
    """Type ``values`` (field id -> text, or a checkbox's bool) into the New RayJob form."""
    await browser.evaluate(
        f"(() => {{ for (const [id, v] of Object.entries({json.dumps(values)})) {{"
        " const input = document.getElementById('new-' + id);"
        " if (typeof v === 'boolean') input.checked = v; else input.value = v;"
        " input.dispatchEvent(new Event('input', {bubbles: true})); } })()"
    )


async def _submit(browser: Browser) -> None:
    await browser.evaluate("document.querySelector('form.create').requestSubmit()")


async def _field_error(browser: Browser, field: str) -> dict[str, Any]:
    return dict(
        await browser.evaluate(
            f"(() => {{ const i = document.getElementById('new-{field}');"
            f" const e = document.getElementById('new-{field}-error');"
            " return {invalid: i.getAttribute('aria-invalid'), text: e.hidden ? '' : e.textContent,"
            " describedBy: i.getAttribute('aria-describedby')}; })()"
        )
    )


async def _rayjobs(kube: Client, namespace: str) -> list[str]:
    listed = await kube.list("ray.io/v1", "RayJob", namespace)
    return [item["metadata"]["name"] for item in listed["items"]]


async def test_the_form_is_checked_by_a_dry_run_then_creates_and_delete_asks_for_the_name(
    browser: Browser, servers: dict[str, str], namespace: str, kube: Client
) -> None:
    url = servers[SERVICE_ACCOUNT]
    await _open(browser, f"{url}/dashboard/?namespace={namespace}&kind=rayjobs")
    await browser.wait_for_text([f"No RayJobs in namespace {namespace}"], timeout=10)
    assert await browser.click_text("New RayJob") == 1
    await browser.wait_for_text(["New RayJob", "Entrypoint", "Worker replicas"], timeout=5)
    assert await _search(browser) == {"namespace": namespace, "kind": "rayjobs", "new": "1"}

    await _fill(browser, {"name": "Nightly_Train", "entrypoint": "python -c 'print(42)'",
                          "headCpu": "lots"})  # fmt: skip
    await _submit(browser)
    await browser.wait_for_text(["RFC 1123"], timeout=10)
    name = await _field_error(browser, "name")
    assert name["invalid"] == "true" and "RFC 1123" in name["text"]
    assert "new-name-error" in name["describedBy"]  # read out with the field
    cpu = await _field_error(browser, "headCpu")
    assert cpu["invalid"] == "true" and cpu["text"].count("should match") == 1, cpu
    assert (await _field_error(browser, "entrypoint"))["invalid"] is None
    await _screenshot(browser, "dashboard-create-errors.png")
    sent = await browser.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    assert any("dryRun=All" in u for u in sent)  # the dry run asked, and only it
    assert await _rayjobs(kube, namespace) == []

    await _fill(browser, {"name": "nightly-train", "headCpu": "2", "workerReplicas": "3"})
    await _submit(browser)
    await browser.wait_for_text(["RayJob nightly-train", "Conditions", "Delete"], timeout=10)
    assert await _search(browser) == {
        "namespace": namespace, "kind": "rayjobs", "name": "nightly-train",
    }  # fmt: skip
    job = await kube.get("ray.io/v1", "RayJob", "nightly-train", namespace)
    assert job["spec"]["entrypoint"] == "python -c 'print(42)'"
    assert job["spec"]["shutdownAfterJobFinishes"] is True
    cluster = job["spec"]["rayClusterSpec"]
    head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert head["resources"]["limits"]["cpu"] == "2"
    assert cluster["workerGroupSpecs"][0]["replicas"] == 3

    assert await browser.click_text("Delete") == 1
    await browser.wait_for_text(["Delete RayJob nightly-train?", "to confirm"], timeout=5)
    confirm = "document.querySelector('dialog.delete button.danger').disabled"
    assert await browser.evaluate(confirm) is True  # not before the name is typed
    await browser.evaluate(
        "(() => { const i = document.getElementById('delete-confirm'); i.value = 'nightly-train';"
        " i.dispatchEvent(new Event('input')); })()"
    )
    assert await browser.evaluate(confirm) is False
    await _screenshot(browser, "dashboard-delete.png")
    await browser.evaluate("document.querySelector('form.confirm').requestSubmit()")
    await browser.wait_for_text([f"No RayJobs in namespace {namespace}"], timeout=10)
    assert await _search(browser) == {"namespace": namespace, "kind": "rayjobs"}
    with pytest.raises(NotFound):
        await kube.get("ray.io/v1", "RayJob", "nightly-train", namespace)
    assert not [c for c in browser.console if c.startswith("exception")], browser.console


async def test_a_pasted_manifest_is_read_and_the_schema_s_refusal_shows(
    browser: Browser, servers: dict[str, str], namespace: str, kube: Client
) -> None:
    await _open(browser, f"{servers[SERVICE_ACCOUNT]}/dashboard/?namespace={namespace}"
                         "&kind=rayjobs&new=1")  # fmt: skip
    await browser.wait_for_text(["New RayJob", "YAML"], timeout=10)
    assert await browser.click_text("YAML") == 1
    paste = "(text) => { const t = document.getElementById('new-manifest'); t.value = text; }"
    await browser.evaluate(f"({paste})({json.dumps('a: !!python/object:os.system {}')})")
    await _submit(browser)
    await browser.wait_for_text(["Not a manifest: line 1"], timeout=10)

    await browser.evaluate(f"({paste})({json.dumps(TYPE_ERROR_MANIFEST)})")
    await _submit(browser)
    text = await browser.wait_for_text(["The RayJob was not created"], timeout=10)
    assert "spec.shutdownAfterJobFinishes" in text and "boolean" in text
    misspelt = TYPE_ERROR_MANIFEST.replace("shutdownAfterJobFinishes: maybe", "entrypont: x")
    await browser.evaluate(f"({paste})({json.dumps(misspelt)})")
    await _submit(browser)
    await browser.wait_for_text(['unknown field "spec.entrypont"'], timeout=10)  # strict
    assert await browser.evaluate(
        "document.getElementById('new-manifest').getAttribute('aria-invalid')"
    ) == "true"  # fmt: skip
    assert "pasted" not in await _rayjobs(kube, namespace)


async def test_a_caller_without_rights_reads_what_they_may_not_do(
    browser: Browser, servers: dict[str, str], namespace: str, kube: Client
) -> None:
    viewer = await service_account_token(kube, namespace, "viewer")
    await grant(
        kube, namespace, "viewer",
        [{"apiGroups": ["ray.io"], "resources": ["rayjobs", "rayclusters"], "verbs": READ},
         {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["list"]}],
    )  # fmt: skip
    url = servers[CALLER]
    await _open(browser, f"{url}/dashboard/?namespace={namespace}&kind=rayjobs&new=1")
    await _sign_in(browser, viewer)
    await browser.wait_for_text(["New RayJob", "YAML"], timeout=10)
    await browser.click_text("YAML")  # YAML: read by the API server with the caller's token
    manifest = TYPE_ERROR_MANIFEST.replace("maybe", "true")
    await browser.evaluate(
        f"document.getElementById('new-manifest').value = {json.dumps(manifest)}"
    )
    await _submit(browser)
    await browser.wait_for_text(
        [f"You may not create rayjobs in namespace {namespace}."], timeout=10
    )
    assert "pasted" not in await _rayjobs(kube, namespace)

    await kube.create(
        {"apiVersion": "ray.io/v1", "kind": "RayJob",
         "metadata": {"name": "kept", "namespace": namespace},
         "spec": {"entrypoint": "true", "suspend": True}}
    )  # fmt: skip
    await browser.goto(f"{url}/dashboard/?namespace={namespace}&kind=rayjobs&name=kept")
    await browser.wait_for_text(["RayJob kept", "Conditions"], timeout=10)
    assert await browser.click_text("Delete") == 1
    await browser.evaluate(
        "(() => { const i = document.getElementById('delete-confirm'); i.value = 'kept';"
        " i.dispatchEvent(new Event('input'));"
        " document.querySelector('form.confirm').requestSubmit(); })()"
    )
    await browser.wait_for_text(
        [f"You may not delete rayjobs in namespace {namespace}."], timeout=10
    )
    assert "kept" in await _rayjobs(kube, namespace)
    assert not [c for c in browser.console if c.startswith("exception")], browser.console


async def test_the_form_s_own_rules(browser: Browser, servers: dict[str, str]) -> None:
    """The create and delete pages' pure functions, run in the page: which field a cause
    belongs to, the RayJob a form stands for, a pasted manifest made ready, the name typed
    to confirm, and a webhook's denial told apart from a missing right."""
    await browser.goto(f"{servers[SERVICE_ACCOUNT]}/dashboard/?namespace=default")
    await browser.wait_for_text(["RayClusters in namespace default"], timeout=10)
    checks = await browser.evaluate(
        """Promise.all(['rayjob-form.js', 'create-view.js', 'delete.js', 'api.js'].map(
             f => import(new URL(f, location.href)))).then(([form, create, del, api]) => {
          const cpu = 'spec.rayClusterSpec.headGroupSpec.template.spec.containers[0].resources';
          const placed = form.placeCauses([
            {field: 'metadata.name', message: 'bad name'},
            {field: cpu + '.limits.cpu', message: cpu + '.limits.cpu in body should match x'},
            {field: cpu + '.requests.cpu', message: cpu + '.requests.cpu in body should match x'},
            {field: 'spec.entrypointX', message: 'other'},
            {message: 'no field'},
          ]);
          const job = form.manifestOf({namespace: ' ns ', name: 'j', entrypoint: 'run',
            workerReplicas: '3', headCpu: '2', headMemory: '', workerCpu: '', workerMemory: '',
            image: 'img', rayVersion: '', ttlSecondsAfterFinished: '', runtimeEnvYAML: '',
            shutdownAfterJobFinishes: false});
          const webhook = new api.ApiError(403, {reason: 'Forbidden',
            message: 'admission webhook "vrayjob.kb.io" denied the request: no'}, 'm');
          const rbac = new api.ApiError(403, {reason: 'Forbidden', message: 'm',
            details: {group: 'ray.io', kind: 'rayjobs'}}, 'm');
          return {
            byField: Object.fromEntries(placed.byField), rest: placed.rest,
            pasteOnly: form.placeCauses([{field: 'metadata.name', message: 'bad'}], []).rest,
            replicas: job.spec.rayClusterSpec.workerGroupSpecs[0].replicas,
            bounds: [job.spec.rayClusterSpec.workerGroupSpecs[0].minReplicas,
                     job.spec.rayClusterSpec.workerGroupSpecs[0].maxReplicas],
            head: job.spec.rayClusterSpec.headGroupSpec.template.spec.containers[0],
            omitted: ['ttlSecondsAfterFinished', 'runtimeEnvYAML'].filter(k => k in job.spec),
            version: 'rayVersion' in job.spec.rayClusterSpec,
            meta: job.metadata,
            typed: form.manifestOf({workerReplicas: 'many'}).spec.rayClusterSpec
              .workerGroupSpecs[0].replicas,
            pasted: [form.pastedManifest({metadata: {name: 'p'}}, 'ns'),
                     form.pastedManifest([1], 'ns'),
                     form.pastedManifest({metadata: {namespace: 'x'}}, 'ns').metadata.namespace],
            confirms: [del.confirms(' j ', 'j'), del.confirms('J', 'j'), del.confirms('', 'j')],
            webhook: create.refusalSummary(webhook, 'ns', []),
            rbac: create.refusalSummary(rbac, 'ns', []).title,
          };
        })"""
    )
    assert checks["byField"] == {"name": ["bad name"], "headCpu": ["should match x"]}
    assert checks["rest"] == ["spec.entrypointX: other", "no field"]
    assert checks["pasteOnly"] == ["metadata.name: bad"]  # the paste box has no fields
    assert checks["replicas"] == 3 and checks["bounds"] == [0, 3]
    assert checks["head"] == {
        "name": "ray-head", "image": "img",
        "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}},
    }  # fmt: skip
    assert checks["omitted"] == [] and checks["version"] is False
    assert checks["meta"] == {"name": "j", "namespace": "ns"}
    assert checks["typed"] == "many"  # left for the schema to refuse, next to its field
    assert checks["pasted"] == [
        {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "p", "namespace": "ns"}},
        None,
        "x",
    ]
    assert checks["confirms"] == [True, False, False]
    assert checks["webhook"]["title"] == "The RayJob was not created: the API server refused it."
    assert "denied the request: no" in checks["webhook"]["lines"][0]
    assert checks["rbac"] == "You may not create rayjobs in namespace ns."
