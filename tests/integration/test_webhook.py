"""The validating webhooks called by a real kube-apiserver.

The webhook server runs in-process on 127.0.0.1 with a serving certificate from a throwaway
CA; a ValidatingWebhookConfiguration with a unique name points the apiserver at it by URL.
It is cluster-wide and the apiserver is shared with other tests, so its namespaceSelector
only matches this module's namespace and it is deleted at teardown.
"""

from __future__ import annotations

import contextlib
import copy
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kuberay.api.v1 import validate_raycluster, validate_rayjob, validate_rayservice
from kuberay.kube import ApiError, Client, Invalid
from kuberay.testing.crds import install_crds
from kuberay.testing.pki import TinyCA
from kuberay.webhooks import (
    WEBHOOKS,
    WebhookServer,
    start_webhook_server,
    validating_webhook_configuration,
)
from tests.helpers import eventually

VWC = ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")


@dataclass
class Env:
    client: Client
    server: WebhookServer
    namespace: str
    other_namespace: str
    configuration: str


async def _create_namespace(client: Client, prefix: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


@pytest.fixture(scope="module")
async def env(
    kubeconfig_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Env]:
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)
    cert_dir = tmp_path_factory.mktemp("webhook-certs")
    ca = TinyCA("kuberay-webhook-test-ca")
    pair = ca.issue("127.0.0.1", ips=["127.0.0.1"], server=True)
    (cert_dir / "tls.crt").write_bytes(pair.cert_pem)
    (cert_dir / "tls.key").write_bytes(pair.key_pem)
    server = await start_webhook_server(
        "127.0.0.1", 0, cert_dir / "tls.crt", cert_dir / "tls.key", None
    )
    name = f"kuberay-test-webhooks-{uuid.uuid4().hex[:8]}"
    namespaces: list[str] = []
    registered = False
    try:
        await install_crds(client)
        namespaces.append(await _create_namespace(client, "t-wh"))
        namespaces.append(await _create_namespace(client, "t-wh-other"))
        config = validating_webhook_configuration(
            None,
            None,
            ca.pair.cert_pem,
            name=name,
            url=server.url,
            timeout_seconds=10,
            namespace_selector={"matchLabels": {"kubernetes.io/metadata.name": namespaces[0]}},
        )
        await client.create(config)
        registered = True
        env = Env(client, server, namespaces[0], namespaces[1], name)
        await _wait_active(env)
        yield env
    finally:
        if registered:
            with contextlib.suppress(ApiError):
                await client.delete(*VWC, name)
        await server.stop()
        for ns in namespaces:
            with contextlib.suppress(Exception):
                await client.delete("v1", "Namespace", ns)
        await client.close()


def _container(name: str) -> dict[str, Any]:
    return {"name": name, "image": "rayproject/ray:2.52.0"}


def _cluster_spec() -> dict[str, Any]:
    return {
        "rayVersion": "2.52.0",
        "headGroupSpec": {
            "rayStartParams": {},
            "template": {"spec": {"containers": [_container("ray-head")]}},
        },
        "workerGroupSpecs": [
            {
                "groupName": "workers",
                "replicas": 1,
                "minReplicas": 0,
                "maxReplicas": 3,
                "rayStartParams": {},
                "template": {"spec": {"containers": [_container("ray-worker")]}},
            }
        ],
    }


def _obj(kind: str, name: str, namespace: str) -> dict[str, Any]:
    spec: dict[str, Any]
    if kind == "RayCluster":
        spec = _cluster_spec()
    elif kind == "RayJob":
        spec = {"entrypoint": "python -c 'print(1)'", "rayClusterSpec": _cluster_spec()}
    else:
        spec = {"rayClusterConfig": _cluster_spec()}
    return {
        "apiVersion": "ray.io/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _invalid(kind: str, namespace: str) -> dict[str, Any]:
    """An object the CRD schema accepts but our rules reject for several reasons."""
    # a valid DNS subdomain (so the apiserver takes the name) but no DNS-1035 label
    obj = _obj(kind, f"9-{kind.lower()}-{uuid.uuid4().hex[:4]}", namespace)
    spec = obj["spec"]
    cluster = {"RayCluster": spec, "RayJob": spec.get("rayClusterSpec")}.get(kind)
    if cluster is None:
        cluster = spec["rayClusterConfig"]
    groups = cluster["workerGroupSpecs"]
    groups[0]["minReplicas"] = 5  # greater than maxReplicas 3
    if kind == "RayCluster":
        groups.append(copy.deepcopy(groups[0]))  # duplicate group name
        groups[1]["maxReplicas"] = 4
    elif kind == "RayJob":
        spec["activeDeadlineSeconds"] = 0
        spec["suspend"] = True  # without shutdownAfterJobFinishes
    else:
        obj["metadata"]["annotations"] = {"ray.io/initializing-timeout": "soon"}
        spec["upgradeStrategy"] = {"type": "Sideways"}
    return obj


VALIDATORS = {
    "RayCluster": validate_raycluster,
    "RayJob": validate_rayjob,
    "RayService": validate_rayservice,
}
WEBHOOK_NAMES = {w.kind: w.name for w in WEBHOOKS}


async def _wait_active(env: Env) -> None:
    """The apiserver picks up a new webhook configuration asynchronously: wait until a
    dry-run create of an invalid object is denied by it."""

    async def denied() -> bool:
        obj = _invalid("RayCluster", env.namespace)
        info = await env.client.resource("ray.io/v1", "RayCluster")
        try:
            await env.client.request(
                "POST",
                info.path(env.namespace),
                verb="create",
                params={"dryRun": "All"},
                body=obj,
            )
        except Invalid as exc:
            return "denied the request" in exc.message
        return False

    await eventually(denied, timeout=60, message="webhook configuration not active")


@pytest.mark.parametrize("kind", ["RayCluster", "RayJob", "RayService"])
async def test_invalid_object_is_denied_with_every_error(env: Env, kind: str) -> None:
    obj = _invalid(kind, env.namespace)
    expected = [e for e in VALIDATORS[kind](obj) if e.source != "status"]
    assert len(expected) >= 3, expected
    with pytest.raises(Invalid) as info:
        await env.client.create(obj)
    err = info.value
    assert err.status == 422
    name = obj["metadata"]["name"]
    prefix = (
        f'admission webhook "{WEBHOOK_NAMES[kind]}" denied the request: '
        f'{kind}.ray.io "{name}" is invalid: ['
    )
    assert err.message.startswith(prefix), err.message
    assert [c["field"] for c in err.causes] == [e.path for e in expected]
    assert all(c["reason"] == "FieldValueInvalid" for c in err.causes)
    for cause, error in zip(err.causes, expected, strict=True):
        assert cause["message"].endswith(error.message)
        assert f"{error.path}: {cause['message']}" in err.message
    assert err.details["kind"] == kind
    assert err.details["group"] == "ray.io"
    # nothing was stored
    info_ = await env.client.resource("ray.io/v1", kind)
    listed = await env.client.request("GET", info_.path(env.namespace), verb="list")
    assert name not in {item["metadata"]["name"] for item in listed["items"]}


@pytest.mark.parametrize("kind", ["RayCluster", "RayJob", "RayService"])
async def test_valid_object_is_accepted(env: Env, kind: str) -> None:
    obj = _obj(kind, f"ok-{kind.lower()}-{uuid.uuid4().hex[:4]}", env.namespace)
    created = await env.client.create(obj)
    assert created["metadata"]["uid"]


async def test_update_is_validated(env: Env) -> None:
    obj = _obj("RayCluster", f"upd-{uuid.uuid4().hex[:6]}", env.namespace)
    created = await env.client.create(obj)
    bad = copy.deepcopy(created)
    bad["spec"]["workerGroupSpecs"][0]["minReplicas"] = 9
    with pytest.raises(Invalid) as info:
        await env.client.update(bad)
    assert [c["field"] for c in info.value.causes] == ["spec.workerGroupSpecs[0].minReplicas"]
    good = copy.deepcopy(created)
    good["spec"]["workerGroupSpecs"][0]["maxReplicas"] = 5
    updated = await env.client.update(good)
    assert updated["spec"]["workerGroupSpecs"][0]["maxReplicas"] == 5


async def test_other_namespaces_are_not_affected(env: Env) -> None:
    obj = _invalid("RayCluster", env.other_namespace)
    created = await env.client.create(obj)
    assert created["metadata"]["name"] == obj["metadata"]["name"]


SMUGGLE = (
    "x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /api/v1/namespaces/other/configmaps/c HTTP/1.1\r\nX-Pad: y"
)


@pytest.mark.parametrize(
    ("kind", "field"),
    [
        ("RayCluster", "spec.authOptions.secretName"),
        ("RayCluster", "spec.headGroupSpec.headService.metadata.name"),
        ("RayJob", "spec.rayClusterSpec.authOptions.secretName"),
        ("RayService", "spec.serveService.metadata.name"),
    ],
)
async def test_a_hostile_name_is_denied_naming_its_field(env: Env, kind: str, field: str) -> None:
    """Trust boundaries part 1, item 2: the CRD admits any string in these name fields; the
    webhook refuses a name that cannot name its object, naming the field."""
    obj = _obj(kind, f"hostile-{uuid.uuid4().hex[:6]}", env.namespace)
    spec = obj["spec"]
    cluster = spec.get("rayClusterSpec") or spec.get("rayClusterConfig") or spec
    if field.endswith("authOptions.secretName"):
        cluster["authOptions"] = {"mode": "token", "secretName": SMUGGLE}
    elif kind == "RayService":
        spec["serveService"] = {"metadata": {"name": SMUGGLE}}
    else:
        cluster["headGroupSpec"]["headService"] = {"metadata": {"name": SMUGGLE}}
    with pytest.raises(Invalid) as info:
        await env.client.create(obj)
    assert [c["field"] for c in info.value.causes] == [field]
    assert "denied the request" in info.value.message
    assert "\r" not in info.value.message
