"""The ValidatingWebhookConfiguration we register (shape of KubeRay's generated manifest)."""

from __future__ import annotations

import base64

import pytest

from kuberay.webhooks import (
    RAYJOB_WEBHOOK,
    encode_ca_bundle,
    validating_webhook_configuration,
)

PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def test_service_backed_configuration_matches_kuberay() -> None:
    cfg = validating_webhook_configuration("kuberay-operator-webhook", "ray-system", PEM)
    assert cfg["apiVersion"] == "admissionregistration.k8s.io/v1"
    assert cfg["kind"] == "ValidatingWebhookConfiguration"
    assert cfg["metadata"] == {"name": "kuberay-validating-webhook-configuration"}
    names = [w["name"] for w in cfg["webhooks"]]
    assert names == ["vraycluster.kb.io", "vrayjob.kb.io", "vrayservice.kb.io"]
    plurals = ["rayclusters", "rayjobs", "rayservices"]
    for webhook, plural in zip(cfg["webhooks"], plurals, strict=True):
        assert webhook["admissionReviewVersions"] == ["v1"]
        assert webhook["failurePolicy"] == "Fail"
        assert webhook["sideEffects"] == "None"
        assert webhook["rules"] == [
            {
                "apiGroups": ["ray.io"],
                "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": [plural],
                "scope": "*",
            }
        ]
        service = webhook["clientConfig"]["service"]
        assert service == {
            "name": "kuberay-operator-webhook",
            "namespace": "ray-system",
            "path": f"/validate-ray-io-v1-{plural[:-1]}",
            "port": 443,
        }
        assert base64.b64decode(webhook["clientConfig"]["caBundle"]) == PEM
        assert "namespaceSelector" not in webhook
        assert "objectSelector" not in webhook


def test_url_backed_configuration_with_selectors() -> None:
    selector = {"matchLabels": {"kubernetes.io/metadata.name": "t-1"}}
    cfg = validating_webhook_configuration(
        None,
        None,
        base64.b64encode(PEM).decode(),
        name="test-hooks",
        url="https://127.0.0.1:9443/",
        webhooks=[RAYJOB_WEBHOOK],
        namespace_selector=selector,
        object_selector={},
        timeout_seconds=5,
        labels={"app": "x"},
    )
    assert cfg["metadata"] == {"name": "test-hooks", "labels": {"app": "x"}}
    [webhook] = cfg["webhooks"]
    assert webhook["clientConfig"] == {
        "url": "https://127.0.0.1:9443/validate-ray-io-v1-rayjob",
        "caBundle": base64.b64encode(PEM).decode(),
    }
    assert webhook["namespaceSelector"] == selector
    assert webhook["objectSelector"] == {}
    assert webhook["timeoutSeconds"] == 5


def test_ca_bundle_can_be_left_for_an_injector() -> None:
    cfg = validating_webhook_configuration("svc", "ns", None)
    assert all("caBundle" not in w["clientConfig"] for w in cfg["webhooks"])


def test_an_endpoint_is_required() -> None:
    with pytest.raises(ValueError):
        validating_webhook_configuration(None, "ns", PEM)


def test_encode_ca_bundle() -> None:
    encoded = base64.b64encode(PEM).decode()
    assert encode_ca_bundle(PEM) == encoded
    assert encode_ca_bundle(PEM.decode()) == encoded
    assert encode_ca_bundle(encoded) == encoded
