"""The ``ValidatingWebhookConfiguration`` and ``MutatingWebhookConfiguration`` that point the
apiserver at our webhooks.

Matches what KubeRay's kubebuilder markers generate (``config/webhook/manifests.yaml``): one
webhook per kind named ``vraycluster.kb.io`` / ``vrayjob.kb.io`` / ``vrayservice.kb.io``,
rules ``ray.io/v1`` CREATE and UPDATE of the kind's resource, ``failurePolicy: Fail``,
``sideEffects: None``, ``admissionReviewVersions: [v1]``. The endpoint is either a Service
(in-cluster, the usual case) or a URL (out-of-cluster, as tests do).

The mutating configuration holds KubeRay v1.8's two node label delivery webhooks:
``mpod.kb.io`` (pods CREATE, ``failurePolicy: Fail``, ``sideEffects: None``; only worker
pods, ``ray.io/node-type: worker``, are sent) and ``mpodbinding.kb.io`` (pods/binding CREATE,
``failurePolicy: Ignore``, ``sideEffects: NoneOnDryRun``, ``timeoutSeconds: 5``).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from kuberay.api.v1.constants import GROUP, RAY_NODE_TYPE_LABEL_KEY, VERSION, WORKER_NODE
from kuberay.webhooks.admission import WEBHOOKS, KindWebhook
from kuberay.webhooks.pods import (
    POD_BINDING_WEBHOOK_NAME,
    POD_BINDING_WEBHOOK_PATH,
    POD_WEBHOOK_NAME,
    POD_WEBHOOK_PATH,
)

__all__ = [
    "DEFAULT_CONFIGURATION_NAME",
    "DEFAULT_MUTATING_CONFIGURATION_NAME",
    "encode_ca_bundle",
    "mutating_webhook_configuration",
    "validating_webhook_configuration",
]

DEFAULT_CONFIGURATION_NAME: Final = "kuberay-validating-webhook-configuration"
DEFAULT_MUTATING_CONFIGURATION_NAME: Final = "kuberay-mutating-webhook-configuration"


def encode_ca_bundle(ca_bundle: bytes | str) -> str:
    """``caBundle`` is base64 of PEM: PEM bytes or text are encoded, anything else is taken
    as already encoded."""
    if isinstance(ca_bundle, bytes):
        return base64.b64encode(ca_bundle).decode("ascii")
    if ca_bundle.lstrip().startswith("-----BEGIN"):
        return base64.b64encode(ca_bundle.encode("ascii")).decode("ascii")
    return ca_bundle


def validating_webhook_configuration(
    service_name: str | None,
    namespace: str | None,
    ca_bundle: bytes | str | None,
    *,
    name: str = DEFAULT_CONFIGURATION_NAME,
    port: int = 443,
    url: str | None = None,
    webhooks: Sequence[KindWebhook] = WEBHOOKS,
    failure_policy: Literal["Fail", "Ignore"] = "Fail",
    timeout_seconds: int | None = None,
    namespace_selector: Mapping[str, Any] | None = None,
    object_selector: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The configuration registering ``webhooks`` (default: all three).

    ``service_name``/``namespace``/``port`` address the operator's webhook Service; with
    ``url`` (e.g. ``https://127.0.0.1:9443``) the webhooks are called at ``url + path``
    instead. ``ca_bundle`` is the CA that signed the serving certificate (PEM bytes/text or
    base64; ``None`` leaves it out, e.g. for cert-manager's CA injector to fill in).
    ``namespace_selector``/``object_selector`` limit which objects are sent.
    """
    if url is None and not (service_name and namespace):
        raise ValueError("either url or service_name and namespace are required")
    entries: list[dict[str, Any]] = []
    for webhook in webhooks:
        client_config: dict[str, Any]
        if url is not None:
            client_config = {"url": url.rstrip("/") + webhook.path}
        else:
            client_config = {
                "service": {
                    "name": service_name,
                    "namespace": namespace,
                    "path": webhook.path,
                    "port": port,
                }
            }
        if ca_bundle is not None:
            client_config["caBundle"] = encode_ca_bundle(ca_bundle)
        entry: dict[str, Any] = {
            "name": webhook.name,
            "admissionReviewVersions": ["v1"],
            "clientConfig": client_config,
            "failurePolicy": failure_policy,
            "matchPolicy": "Equivalent",
            "rules": [
                {
                    "apiGroups": [GROUP],
                    "apiVersions": [VERSION],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": [webhook.plural],
                    "scope": "*",
                }
            ],
            "sideEffects": "None",
        }
        if timeout_seconds is not None:
            entry["timeoutSeconds"] = timeout_seconds
        if namespace_selector is not None:
            entry["namespaceSelector"] = dict(namespace_selector)
        if object_selector is not None:
            entry["objectSelector"] = dict(object_selector)
        entries.append(entry)
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": metadata,
        "webhooks": entries,
    }


def _client_config(
    path: str,
    service_name: str | None,
    namespace: str | None,
    port: int,
    url: str | None,
    ca_bundle: bytes | str | None,
) -> dict[str, Any]:
    config: dict[str, Any]
    if url is not None:
        config = {"url": url.rstrip("/") + path}
    else:
        config = {
            "service": {"name": service_name, "namespace": namespace, "path": path, "port": port}
        }
    if ca_bundle is not None:
        config["caBundle"] = encode_ca_bundle(ca_bundle)
    return config


def mutating_webhook_configuration(
    service_name: str | None,
    namespace: str | None,
    ca_bundle: bytes | str | None,
    *,
    name: str = DEFAULT_MUTATING_CONFIGURATION_NAME,
    port: int = 443,
    url: str | None = None,
    namespace_selector: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The configuration registering ``mpod.kb.io`` and ``mpodbinding.kb.io`` (module doc);
    the endpoint and ``ca_bundle`` as for :func:`validating_webhook_configuration`."""
    if url is None and not (service_name and namespace):
        raise ValueError("either url or service_name and namespace are required")

    def entry(
        webhook: str, path: str, resource: str, policy: str, side_effects: str
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "name": webhook,
            "admissionReviewVersions": ["v1"],
            "clientConfig": _client_config(path, service_name, namespace, port, url, ca_bundle),
            "failurePolicy": policy,
            "matchPolicy": "Equivalent",
            "rules": [
                {
                    "apiGroups": [""],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE"],
                    "resources": [resource],
                    "scope": "*",
                }
            ],
            "sideEffects": side_effects,
        }
        if namespace_selector is not None:
            body["namespaceSelector"] = dict(namespace_selector)
        return body

    pods = entry(POD_WEBHOOK_NAME, POD_WEBHOOK_PATH, "pods", "Fail", "None")
    pods["objectSelector"] = {"matchLabels": {RAY_NODE_TYPE_LABEL_KEY: WORKER_NODE}}
    binding = entry(
        POD_BINDING_WEBHOOK_NAME, POD_BINDING_WEBHOOK_PATH, "pods/binding", "Ignore", "NoneOnDryRun"
    )
    binding["timeoutSeconds"] = 5
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": metadata,
        "webhooks": [pods, binding],
    }
