"""RayCluster feature rules (kuberay/api/v1/validation/raycluster_features.py): GCS fault
tolerance (Redis, RocksDB), history server collector, auth, network policy and TLS; each
with a failing example (path + message asserted) and a passing near-miss."""

from __future__ import annotations

from typing import Any

import pytest

from kuberay.api.v1 import validate_raycluster
from tests.unit.api.kuberay_api_testutil import container, raycluster
from tests.unit.api.validation.validation_testlib import (
    GATES_ALL,
    HEAD,
    HEAD_C,
    ROCKSDB,
    W0,
    W0_C,
    Case,
    Mutation,
    all_of,
    check_case,
    drop,
    env,
    put,
)


def _history(collector: dict[str, Any]) -> Mutation:
    return put("spec", "historyServerOptions", {"collectorOptions": collector})


def _collector(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"image": "collector:1", "env": env(*pairs)}


RAYCLUSTER_FEATURE_CASES = [
    Case(
        "ft-annotation-and-options",
        all_of(
            put("metadata", "annotations", {"ray.io/ft-enabled": "true"}),
            put("spec", "gcsFaultToleranceOptions", {"redisAddress": "redis:6379"}),
        ),
        "metadata.annotations[ray.io/ft-enabled]",
        "ray.io/ft-enabled annotation and GcsFaultToleranceOptions are both set. Please use only",
        put("spec", "gcsFaultToleranceOptions", {"redisAddress": "redis:6379"}),
    ),
    Case(
        "redis-address-without-ft",
        put(*HEAD_C, "env", env(("RAY_REDIS_ADDRESS", "redis:6379"))),
        "spec.headGroupSpec.template.spec.containers[0].env[0]",
        "RAY_REDIS_ADDRESS is set which implicitly enables GCS fault tolerance, but "
        "GcsFaultToleranceOptions is not set",
        all_of(
            put(*HEAD_C, "env", env(("RAY_REDIS_ADDRESS", "redis:6379"))),
            put("metadata", "annotations", {"ray.io/ft-enabled": "true"}),
        ),
    ),
    Case(
        "ft-options-redis-password-param",
        all_of(
            put("spec", "gcsFaultToleranceOptions", {"redisAddress": "r:1"}),
            put(*HEAD, "rayStartParams", {"redis-password": "x"}),
        ),
        "spec.headGroupSpec.rayStartParams[redis-password]",
        "cannot set `redis-password` in rayStartParams when GcsFaultToleranceOptions is enabled",
        put("spec", "gcsFaultToleranceOptions", {"redisPassword": {"value": "x"}}),
    ),
    Case(
        "ft-options-redis-password-env",
        all_of(
            put("spec", "gcsFaultToleranceOptions", {"redisAddress": "r:1"}),
            put(*HEAD_C, "env", env(("X", "1"), ("REDIS_PASSWORD", "x"))),
        ),
        "spec.headGroupSpec.template.spec.containers[0].env[1]",
        "cannot set `REDIS_PASSWORD` env var in head Pod when GcsFaultToleranceOptions is enabled",
        put(*HEAD_C, "env", env(("REDIS_PASSWORD", "x"))),
    ),
    Case(
        "ft-options-redis-address-env",
        all_of(
            put("spec", "gcsFaultToleranceOptions", {}),
            put(*HEAD_C, "env", env(("RAY_REDIS_ADDRESS", "r:1"))),
        ),
        "spec.headGroupSpec.template.spec.containers[0].env[0]",
        "cannot set `RAY_REDIS_ADDRESS` env var in head Pod when GcsFaultToleranceOptions is "
        "enabled - use GcsFaultToleranceOptions.RedisAddress instead",
        put("spec", "gcsFaultToleranceOptions", {"redisAddress": "r:1"}),
    ),
    Case(
        "ft-options-external-storage-annotation",
        all_of(
            put("spec", "gcsFaultToleranceOptions", {"redisAddress": "r:1"}),
            put("metadata", "annotations", {"ray.io/external-storage-namespace": "ns"}),
        ),
        "metadata.annotations[ray.io/external-storage-namespace]",
        "cannot set `ray.io/external-storage-namespace` annotation when GcsFaultToleranceOptions",
        put("spec", "gcsFaultToleranceOptions", {"externalStorageNamespace": "ns"}),
    ),
    Case(
        "rocksdb-needs-gate",
        put("spec", "gcsFaultToleranceOptions", ROCKSDB),
        "spec.gcsFaultToleranceOptions.backend",
        "requires the GCSFaultToleranceEmbeddedStorage feature gate to be enabled",
        put("spec", "gcsFaultToleranceOptions", ROCKSDB),
        good_gates=GATES_ALL,
    ),
    *[
        Case(
            f"rocksdb-forbids-{json_name}",
            put("spec", "gcsFaultToleranceOptions", {**ROCKSDB, json_name: value}),
            f"spec.gcsFaultToleranceOptions.{json_name}",
            f"cannot set GcsFaultToleranceOptions.{go_name} when backend is 'rocksdb'",
            put("spec", "gcsFaultToleranceOptions", {"backend": "redis", json_name: value}),
            gates=GATES_ALL,
            good_gates=GATES_ALL,
        )
        for json_name, go_name, value in (
            ("redisAddress", "RedisAddress", "r:1"),
            ("redisUsername", "RedisUsername", {"value": "u"}),
            ("redisPassword", "RedisPassword", {"value": "p"}),
            ("externalStorageNamespace", "ExternalStorageNamespace", "ns"),
        )
    ],
    Case(
        "rocksdb-claim-exclusive",
        put(
            "spec",
            "gcsFaultToleranceOptions",
            {**ROCKSDB, "storage": {"claimName": "c", "size": "1Gi"}},
        ),
        "spec.gcsFaultToleranceOptions.storage.claimName",
        "GcsFaultToleranceOptions.Storage.ClaimName is mutually exclusive with size, "
        "storageClassName, and accessModes",
        put("spec", "gcsFaultToleranceOptions", {**ROCKSDB, "storage": {"claimName": "c"}}),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "rocksdb-storage-env",
        all_of(
            put("spec", "gcsFaultToleranceOptions", ROCKSDB),
            put(*HEAD_C, "env", env(("RAY_gcs_storage_path", "/x"))),
        ),
        "spec.headGroupSpec.template.spec.containers[0].env[0]",
        "cannot set `RAY_gcs_storage` or `RAY_gcs_storage_path` env var in head Pod when the "
        "embedded GCS FT backend is used",
        put(*HEAD_C, "env", env(("RAY_gcs_storage_path", "/x"))),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "rocksdb-storage-mount",
        all_of(
            put("spec", "gcsFaultToleranceOptions", ROCKSDB),
            put(*HEAD_C, "volumeMounts", [{"name": "data", "mountPath": "/data/gcs"}]),
        ),
        "spec.headGroupSpec.template.spec.containers[0].volumeMounts[0]",
        'cannot set a volume mount named "gcs-storage" or mounted at /data/gcs in the head',
        all_of(
            put("spec", "gcsFaultToleranceOptions", ROCKSDB),
            put(*HEAD_C, "volumeMounts", [{"name": "data", "mountPath": "/data/other"}]),
        ),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "rocksdb-storage-volume",
        all_of(
            put("spec", "gcsFaultToleranceOptions", ROCKSDB),
            put(*HEAD, "template", "spec", "volumes", [{"name": "gcs-storage", "emptyDir": {}}]),
        ),
        "spec.headGroupSpec.template.spec.volumes[0]",
        'cannot set a volume named "gcs-storage" in the head Pod when the embedded GCS FT',
        put(*HEAD, "template", "spec", "volumes", [{"name": "gcs-storage", "emptyDir": {}}]),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "redis-backend-forbids-storage",
        put("spec", "gcsFaultToleranceOptions", {"backend": "redis", "storage": {"size": "1Gi"}}),
        "spec.gcsFaultToleranceOptions.storage",
        "cannot set GcsFaultToleranceOptions.Storage when backend is 'redis' - it only applies",
        put("spec", "gcsFaultToleranceOptions", {**ROCKSDB, "storage": {"size": "1Gi"}}),
        good_gates=GATES_ALL,
    ),
    Case(
        "redis-username-param",
        put(*HEAD, "rayStartParams", {"redis-username": "u"}),
        "spec.headGroupSpec.rayStartParams[redis-username]",
        "cannot set redis username in rayStartParams or environment variables - use "
        "GcsFaultToleranceOptions.RedisUsername instead",
        put("spec", "gcsFaultToleranceOptions", {"redisUsername": {"value": "u"}}),
    ),
    Case(
        "redis-username-env",
        put(*HEAD_C, "env", env(("REDIS_USERNAME", "u"))),
        "spec.headGroupSpec.template.spec.containers[0].env[0]",
        "cannot set redis username in rayStartParams or environment variables",
    ),
    Case(
        "history-needs-gate",
        _history(_collector(("STORAGE_BACKEND", "S3"), ("S3_REGION", "r"))),
        "spec.historyServerOptions",
        "RayClusterHistoryServer feature gate is not enabled",
        _history(_collector(("STORAGE_BACKEND", "S3"), ("S3_REGION", "r"))),
        good_gates=GATES_ALL,
    ),
    Case(
        "history-collector-required",
        put("spec", "historyServerOptions", {}),
        "spec.historyServerOptions.collectorOptions",
        "historyServerOptions.collectorOptions must be set",
        gates=GATES_ALL,
    ),
    Case(
        "history-image-required",
        _history({"env": env(("STORAGE_BACKEND", "S3"), ("S3_REGION", "r"))}),
        "spec.historyServerOptions.collectorOptions.image",
        "historyServerOptions.collectorOptions.image must be set",
        gates=GATES_ALL,
    ),
    Case(
        "history-forbidden-env",
        _history(_collector(("STORAGE_BACKEND", "S3"), ("S3_REGION", "r"), ("POD_IP", "x"))),
        "spec.historyServerOptions.collectorOptions.env",
        "historyServerOptions.collectorOptions.env must not contain POD_IP: it is managed by",
        _history(_collector(("STORAGE_BACKEND", "S3"), ("S3_REGION", "r"), ("POD_IPX", "x"))),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "history-storage-backend",
        _history(_collector(("STORAGE_BACKEND", ""))),
        "spec.historyServerOptions.collectorOptions.env",
        "STORAGE_BACKEND environment variable must be set with a literal string value",
        gates=GATES_ALL,
    ),
    Case(
        "history-gcs-bucket",
        _history(_collector(("STORAGE_BACKEND", "gcs"))),
        "spec.historyServerOptions.collectorOptions.env",
        "GCS_BUCKET environment variable must be set when STORAGE_BACKEND is GCS",
        _history(_collector(("STORAGE_BACKEND", "gcs"), ("GCS_BUCKET", "b"))),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "history-s3-region",
        _history(_collector(("STORAGE_BACKEND", "S3"))),
        "spec.historyServerOptions.collectorOptions.env",
        "S3_REGION environment variable must be set when STORAGE_BACKEND is S3",
        gates=GATES_ALL,
    ),
    Case(
        "history-azure-connection-string",
        _history(
            _collector(
                ("STORAGE_BACKEND", "AZUREBLOB"), ("AZURE_STORAGE_AUTH_MODE", "connection_string")
            )
        ),
        "spec.historyServerOptions.collectorOptions.env",
        "AZURE_STORAGE_CONNECTION_STRING environment variable must be set when STORAGE_BACKEND is "
        "AZUREBLOB and AZURE_STORAGE_AUTH_MODE is connection_string",
        _history(
            {
                "image": "c",
                "env": [
                    {"name": "STORAGE_BACKEND", "value": "AZUREBLOB"},
                    {"name": "AZURE_STORAGE_AUTH_MODE", "value": " Connection_String "},
                    {
                        "name": "AZURE_STORAGE_CONNECTION_STRING",
                        "valueFrom": {"secretKeyRef": {"name": "azure", "key": "conn"}},
                    },
                ],
            }
        ),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "history-azure-account-url",
        _history(
            _collector(("STORAGE_BACKEND", "AZUREBLOB"), ("AZURE_STORAGE_AUTH_MODE", "default"))
        ),
        "spec.historyServerOptions.collectorOptions.env",
        "AZURE_STORAGE_ACCOUNT_URL environment variable must be set when STORAGE_BACKEND is "
        "AZUREBLOB and AZURE_STORAGE_AUTH_MODE is default",
        gates=GATES_ALL,
    ),
    Case(
        "history-azure-either",
        _history(_collector(("STORAGE_BACKEND", "AZUREBLOB"))),
        "spec.historyServerOptions.collectorOptions.env",
        "either AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT_URL environment variable",
        _history(_collector(("STORAGE_BACKEND", "AZUREBLOB"), ("AZURE_STORAGE_ACCOUNT_URL", "u"))),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "history-aliyun",
        _history(_collector(("STORAGE_BACKEND", "ALIYUNOSS"), ("OSS_BUCKET", "b"))),
        "spec.historyServerOptions.collectorOptions.env",
        "OSS_ENDPOINT environment variable must be set when STORAGE_BACKEND is ALIYUNOSS",
        _history(
            _collector(
                ("STORAGE_BACKEND", "ALIYUNOSS"),
                ("OSS_BUCKET", "b"),
                ("OSS_ENDPOINT", "e"),
                ("OSS_REGION", "r"),
            )
        ),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "history-head-collector-name",
        all_of(
            _history(_collector(("STORAGE_BACKEND", "S3"), ("S3_REGION", "r"))),
            put(
                *HEAD,
                "template",
                "spec",
                "containers",
                [container(), container("ray-history-collector")],
            ),
        ),
        "spec.headGroupSpec.template.spec.containers[1].name",
        "head pod template must not define a container with name 'ray-history-collector' when",
        put(
            *HEAD,
            "template",
            "spec",
            "containers",
            [container(), container("ray-history-collector")],
        ),
        gates=GATES_ALL,
    ),
    Case(
        "history-worker-collector-name",
        all_of(
            _history(_collector(("STORAGE_BACKEND", "S3"), ("S3_REGION", "r"))),
            put(*W0, "template", "spec", "containers", [container("ray-history-collector")]),
        ),
        "spec.workerGroupSpecs[0].template.spec.containers[0].name",
        "worker group workers pod template must not define a container with name "
        "'ray-history-collector'",
        gates=GATES_ALL,
    ),
    Case(
        "auth-token-needs-version",
        all_of(put("spec", "authOptions", {"mode": "token"}), drop("spec", "rayVersion")),
        "spec.rayVersion",
        "authOptions.mode is 'token' but RayVersion was not specified. Ray version 2.52.0 or later",
        all_of(put("spec", "authOptions", {"mode": "disabled"}), drop("spec", "rayVersion")),
    ),
    Case(
        "auth-token-bad-version",
        all_of(put("spec", "authOptions", {"mode": "token"}), put("spec", "rayVersion", "latest")),
        "spec.rayVersion",
        "authOptions.mode is 'token' but RayVersion format is invalid: latest, could not parse",
    ),
    Case(
        "auth-token-old-version",
        all_of(put("spec", "authOptions", {"mode": "token"}), put("spec", "rayVersion", "2.51.0")),
        "spec.rayVersion",
        "authOptions.mode is 'token' but minimum Ray version is 2.52.0, got 2.51.0",
        all_of(put("spec", "authOptions", {"mode": "token"}), put("spec", "rayVersion", "2.52")),
    ),
    Case(
        "auth-k8s-old-version",
        all_of(
            put("spec", "authOptions", {"mode": "token", "enableK8sTokenAuth": True}),
            put("spec", "rayVersion", "2.54.0"),
        ),
        "spec.rayVersion",
        "authOptions.enableK8sTokenAuth is enabled but minimum Ray version is 2.55.0, got 2.54.0",
        all_of(
            put("spec", "authOptions", {"mode": "token", "enableK8sTokenAuth": True}),
            put("spec", "rayVersion", "2.55.0"),
        ),
    ),
    Case(
        "auth-k8s-with-secret",
        all_of(
            put(
                "spec",
                "authOptions",
                {"mode": "token", "enableK8sTokenAuth": True, "secretName": "s"},
            ),
            put("spec", "rayVersion", "2.55.0"),
        ),
        "spec.authOptions.secretName",
        "authOptions.enableK8sTokenAuth is enabled and authOptions.secretName is also set",
        all_of(put("spec", "authOptions", {"mode": "token", "secretName": "s"})),
    ),
    Case(
        "auth-k8s-needs-token-mode",
        put("spec", "authOptions", {"enableK8sTokenAuth": True}),
        "spec.authOptions.enableK8sTokenAuth",
        "authOptions.enableK8sTokenAuth is enabled but authOptions.mode not set to 'token'",
        put("spec", "authOptions", {"enableK8sTokenAuth": False}),
    ),
    Case(
        "network-policy-needs-gate",
        put("spec", "networkPolicy", {}),
        "spec.networkPolicy",
        "spec.networkPolicy requires the RayClusterNetworkPolicy feature gate to be enabled",
        put("spec", "networkPolicy", {}),
        good_gates=GATES_ALL,
    ),
    Case(
        "network-policy-head-ingress-under-deny-egress",
        put("spec", "networkPolicy", {"mode": "DenyAllEgress", "head": {"ingressRules": [{}]}}),
        "spec.networkPolicy.head.ingressRules",
        'networkPolicy.head.ingressRules cannot be set when mode is "DenyAllEgress" (ingress is '
        "not restricted)",
        put("spec", "networkPolicy", {"mode": "DenyAll", "head": {"ingressRules": [{}]}}),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "network-policy-worker-egress-under-deny-ingress",
        put("spec", "networkPolicy", {"mode": "DenyAllIngress", "worker": {"egressRules": [{}]}}),
        "spec.networkPolicy.worker.egressRules",
        'networkPolicy.worker.egressRules cannot be set when mode is "DenyAllIngress"',
        put("spec", "networkPolicy", {"mode": "DenyAllEgress", "worker": {"egressRules": [{}]}}),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "network-policy-group-rules",
        put(
            "spec",
            "networkPolicy",
            {
                "mode": "DenyAllIngress",
                "workerGroups": [{"groupName": "workers", "egressRules": [{}]}],
            },
        ),
        "spec.networkPolicy.workerGroups[0].egressRules",
        'networkPolicy.workerGroups["workers"].egressRules cannot be set when mode is',
        put(
            "spec",
            "networkPolicy",
            {"workerGroups": [{"groupName": "workers", "egressRules": [{}]}]},
        ),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "network-policy-group-name-dns1123",
        all_of(put("spec", "networkPolicy", {}), put(*W0, "groupName", "Big_Group")),
        "spec.workerGroupSpecs[0].groupName",
        'worker group name "Big_Group" must be a valid DNS1123 label when networkPolicy is enabled',
        put(*W0, "groupName", "Big_Group"),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "network-policy-unknown-group",
        put("spec", "networkPolicy", {"workerGroups": [{"groupName": "nope"}]}),
        "spec.networkPolicy.workerGroups[0].groupName",
        'networkPolicy.workerGroups["nope"] does not match any group name in workerGroupSpecs',
        put("spec", "networkPolicy", {"workerGroups": [{"groupName": "workers"}]}),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "tls-needs-gate",
        put("spec", "tlsOptions", {"enabled": True}),
        "spec.tlsOptions",
        "spec.tlsOptions requires the RayClusterMTLS feature gate to be enabled",
        put("spec", "tlsOptions", {"enabled": True}),
        good_gates=GATES_ALL,
    ),
    Case(
        "tls-head-env",
        all_of(
            put("spec", "tlsOptions", {"enabled": True}),
            put(*HEAD_C, "env", env(("RAY_USE_TLS", "1"))),
        ),
        "spec.headGroupSpec.template.spec.containers[0].env[0]",
        "cannot set RAY_USE_TLS environment variable in head Pod when tlsOptions is set - the "
        "operator manages TLS configuration automatically",
        all_of(
            put("spec", "tlsOptions", {"enabled": False}),
            put(*HEAD_C, "env", env(("RAY_USE_TLS", "1"))),
        ),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "tls-worker-mount-name",
        all_of(
            put("spec", "tlsOptions", {"enabled": True}),
            put(*W0_C, "volumeMounts", [{"name": "ray-tls", "mountPath": "/x"}]),
        ),
        "spec.workerGroupSpecs[0].template.spec.containers[0].volumeMounts[0]",
        'cannot use volume mount named "ray-tls" in worker group "workers" when tlsOptions is set',
        all_of(
            put("spec", "tlsOptions", {"enabled": True}),
            put(*W0_C, "volumeMounts", [{"name": "certs", "mountPath": "/x"}]),
        ),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
    ),
    Case(
        "tls-head-mount-path",
        all_of(
            put("spec", "tlsOptions", {"enabled": True}),
            put(*HEAD_C, "volumeMounts", [{"name": "certs", "mountPath": "/etc/ray/tls"}]),
        ),
        "spec.headGroupSpec.template.spec.containers[0].volumeMounts[0]",
        'cannot use volume mount at path "/etc/ray/tls" in head Pod when tlsOptions is set',
        gates=GATES_ALL,
    ),
    Case(
        "tls-autoscaler-env",
        all_of(
            put("spec", "tlsOptions", {"enabled": True}),
            put("spec", "autoscalerOptions", {"env": env(("RAY_TLS_CA_CERT", "x"))}),
        ),
        "spec.autoscalerOptions.env[0]",
        "cannot set RAY_TLS_CA_CERT environment variable in autoscalerOptions.env when tlsOptions "
        "is set - the operator manages TLS configuration for the autoscaler automatically",
        gates=GATES_ALL,
    ),
    Case(
        "tls-autoscaler-mount",
        all_of(
            put("spec", "tlsOptions", {"enabled": True}),
            put(
                "spec",
                "autoscalerOptions",
                {"volumeMounts": [{"name": "ray-tls", "mountPath": "/a"}]},
            ),
        ),
        "spec.autoscalerOptions.volumeMounts[0]",
        'cannot use volume mount named "ray-tls" in autoscalerOptions.volumeMounts when tlsOptions',
        gates=GATES_ALL,
    ),
]


@pytest.mark.parametrize("case", RAYCLUSTER_FEATURE_CASES, ids=lambda c: c.id)
def test_raycluster_feature_rule(case: Case) -> None:
    check_case(validate_raycluster, raycluster(), case)
