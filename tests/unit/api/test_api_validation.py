"""KubeRay's validation rules: every rule with a failing example (path + message asserted) and
a passing near-miss."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from kuberay_api_testutil import container, raycluster, raycronjob, rayjob, rayservice

from kuberay.api.v1 import (
    FieldError,
    RayCluster,
    first_error,
    raycluster_spec_warnings,
    structure,
    validate_raycluster,
    validate_raycluster_update,
    validate_raycronjob,
    validate_raycronjob_update,
    validate_rayjob,
    validate_rayjob_update,
    validate_rayservice,
    validate_rayservice_update,
)

Mutation = Callable[[dict[str, Any]], None]
Key = str | int


def _walk(obj: Any, path: tuple[Key, ...]) -> Any:
    for key in path:
        if isinstance(obj, dict) and isinstance(key, str):
            obj = obj.setdefault(key, {})
        else:
            obj = obj[key]
    return obj


def put(*path: Any) -> Mutation:
    """Mutation setting ``path[:-1]`` to ``path[-1]`` (intermediate dicts created)."""
    *keys, value = path

    def apply(obj: dict[str, Any]) -> None:
        _walk(obj, tuple(keys[:-1]))[keys[-1]] = copy.deepcopy(value)

    return apply


def drop(*path: Key) -> Mutation:
    def apply(obj: dict[str, Any]) -> None:
        del _walk(obj, path[:-1])[path[-1]]

    return apply


def all_of(*mutations: Mutation) -> Mutation:
    def apply(obj: dict[str, Any]) -> None:
        for mutation in mutations:
            mutation(obj)

    return apply


def noop(_: dict[str, Any]) -> None:
    return None


HEAD = ("spec", "headGroupSpec")
HEAD_C = (*HEAD, "template", "spec", "containers", 0)
W0 = ("spec", "workerGroupSpecs", 0)
W0_C = (*W0, "template", "spec", "containers", 0)
GATES_ALL = {
    "GCSFaultToleranceEmbeddedStorage": True,
    "RayClusterNetworkPolicy": True,
    "RayClusterMTLS": True,
    "RayClusterHistoryServer": True,
}
AUTOSCALING = put("spec", "enableInTreeAutoscaling", True)
V2 = all_of(AUTOSCALING, put("spec", "autoscalerOptions", {"version": "v2"}))


def env(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"name": n, "value": v} for n, v in pairs]


@dataclass
class Case:
    id: str
    bad: Mutation
    path: str
    message: str
    good: Mutation = noop
    gates: dict[str, bool] | None = None
    source: str = "spec"
    good_gates: dict[str, bool] | None = field(default=None)


def _history(collector: dict[str, Any]) -> Mutation:
    return put("spec", "historyServerOptions", {"collectorOptions": collector})


def _collector(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"image": "collector:1", "env": env(*pairs)}


ROCKSDB = {"backend": "rocksdb"}

RAYCLUSTER_CASES = [
    Case(
        "name-length",
        put("metadata", "name", "a" * 54),
        "metadata.name",
        "RayCluster name should be no more than 53 characters",
        put("metadata", "name", "a" * 53),
        source="metadata",
    ),
    Case(
        "name-dns1035",
        put("metadata", "name", "1cluster"),
        "metadata.name",
        "RayCluster name should be a valid DNS1035 label: [a DNS-1035 label must consist",
        put("metadata", "name", "cluster1"),
        source="metadata",
    ),
    Case(
        "head-no-container",
        put(*HEAD, "template", "spec", "containers", []),
        "spec.headGroupSpec.template.spec.containers",
        "headGroupSpec should have at least one container",
    ),
    Case(
        "head-resources-conflict",
        all_of(
            put(*HEAD, "rayStartParams", {"num-cpus": "1"}), put(*HEAD, "resources", {"CPU": "1"})
        ),
        "spec.headGroupSpec.resources",
        "resource fields should not be set in both rayStartParams and Resources for Head group",
        put(*HEAD, "resources", {"CPU": "1"}),
    ),
    Case(
        "head-labels-in-params",
        put(*HEAD, "rayStartParams", {"labels": "a=b"}),
        "spec.headGroupSpec.rayStartParams[labels]",
        "rayStartParams['labels'] is not supported for Head group; please use the top-level",
        put(*HEAD, "labels", {"a": "b"}),
    ),
    Case(
        "head-label-key",
        put(*HEAD, "labels", {"-bad": "x"}),
        "spec.headGroupSpec.labels[-bad]",
        "invalid label key for Head group: '-bad', error: name part must consist of",
        put(*HEAD, "labels", {"example.com/good": "x"}),
    ),
    Case(
        "worker-label-value",
        put(*W0, "labels", {"a": "bad value!"}),
        "spec.workerGroupSpecs[0].labels[a]",
        "invalid label value for key 'a' in workers group: 'bad value!', error: a valid label",
        put(*W0, "labels", {"a": "good_value"}),
    ),
    Case(
        "worker-no-container",
        put(*W0, "template", "spec", "containers", []),
        "spec.workerGroupSpecs[0].template.spec.containers",
        "workerGroupSpec should have at least one container",
    ),
    Case(
        "worker-min-max-unset",
        drop(*W0, "maxReplicas"),
        "spec.workerGroupSpecs[0].maxReplicas",
        "worker group workers must set both minReplicas and maxReplicas when autoscaling is "
        "disabled",
        all_of(drop(*W0, "maxReplicas"), AUTOSCALING),
    ),
    Case(
        "worker-negative-min",
        put(*W0, "minReplicas", -1),
        "spec.workerGroupSpecs[0].minReplicas",
        "worker group workers has negative minReplicas -1",
        put(*W0, "minReplicas", 0),
    ),
    Case(
        "worker-negative-max",
        all_of(put(*W0, "minReplicas", 0), put(*W0, "maxReplicas", -1)),
        "spec.workerGroupSpecs[0].maxReplicas",
        "worker group workers has negative maxReplicas -1",
        put(*W0, "maxReplicas", 0),
    ),
    Case(
        "worker-min-gt-max",
        all_of(put(*W0, "minReplicas", 5), put(*W0, "maxReplicas", 3)),
        "spec.workerGroupSpecs[0].minReplicas",
        "worker group workers has minReplicas 5 greater than maxReplicas 3",
        all_of(put(*W0, "minReplicas", 3), put(*W0, "maxReplicas", 3)),
    ),
    Case(
        "worker-resources-conflict",
        all_of(put(*W0, "rayStartParams", {"num-gpus": "1"}), put(*W0, "resources", {"GPU": "1"})),
        "spec.workerGroupSpecs[0].resources",
        "resource fields should not be set in both rayStartParams and Resources for workers group",
        put(*W0, "rayStartParams", {"num-gpus": "1"}),
    ),
    Case(
        "worker-idle-timeout-negative",
        all_of(V2, put(*W0, "idleTimeoutSeconds", -10)),
        "spec.workerGroupSpecs[0].idleTimeoutSeconds",
        "worker group workers: idleTimeoutSeconds must be non-negative, got -10",
        all_of(V2, put(*W0, "idleTimeoutSeconds", 0)),
    ),
    Case(
        "worker-idle-timeout-needs-v2",
        put(*W0, "idleTimeoutSeconds", 60),
        "spec.workerGroupSpecs[0].idleTimeoutSeconds",
        "worker group workers: idleTimeoutSeconds is set, but autoscaler v2 is not enabled",
        all_of(
            AUTOSCALING,
            put(*W0, "idleTimeoutSeconds", 60),
            put(*HEAD_C, "env", env(("RAY_enable_autoscaler_v2", "true"))),
        ),
    ),
    Case(
        "worker-priority-no-version",
        all_of(V2, put(*W0, "priority", 1), drop("spec", "rayVersion")),
        "spec.workerGroupSpecs[0].priority",
        "worker group workers: priority is set, but RayVersion was not specified. Ray version "
        "2.56.0 or later is required",
        all_of(put(*W0, "priority", 0), drop("spec", "rayVersion")),
    ),
    Case(
        "worker-priority-bad-version",
        all_of(V2, put(*W0, "priority", 1), put("spec", "rayVersion", "abc")),
        "spec.workerGroupSpecs[0].priority",
        'priority is set, but RayVersion format is invalid: abc, could not parse "abc" as version',
        all_of(V2, put(*W0, "priority", 1), put("spec", "rayVersion", "2.56.0")),
    ),
    Case(
        "worker-priority-old-version",
        all_of(V2, put(*W0, "priority", 1), put("spec", "rayVersion", "2.55.0")),
        "spec.workerGroupSpecs[0].priority",
        "worker group workers: priority is set, but minimum Ray version is 2.56.0, got 2.55.0",
        all_of(V2, put(*W0, "priority", 1), put("spec", "rayVersion", "2.56.1")),
    ),
    Case(
        "worker-priority-needs-v2",
        all_of(AUTOSCALING, put(*W0, "priority", 1), put("spec", "rayVersion", "2.56.0")),
        "spec.workerGroupSpecs[0].priority",
        "worker group workers: priority is set to 1, but autoscaler v2 is not enabled",
        all_of(V2, put(*W0, "priority", -3), put("spec", "rayVersion", "2.56.0")),
    ),
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
        "worker-suspend-needs-gate",
        put(*W0, "suspend", True),
        "spec.workerGroupSpecs[0].suspend",
        "worker group workers can be suspended only when the RayJobDeletionPolicy feature gate",
        put(*W0, "suspend", True),
        gates={"RayJobDeletionPolicy": False},
        good_gates={"RayJobDeletionPolicy": True},
    ),
    Case(
        "v2-env-without-autoscaling",
        put(*HEAD_C, "env", env(("RAY_enable_autoscaler_v2", "1"))),
        "spec.headGroupSpec.template.spec.containers[0].env[0]",
        "environment variable RAY_enable_autoscaler_v2 cannot be set to '1' when "
        "enableInTreeAutoscaling is false",
        put(*HEAD_C, "env", env(("RAY_enable_autoscaler_v2", "0"))),
    ),
    Case(
        "suspend-with-autoscaling",
        all_of(AUTOSCALING, put(*W0, "suspend", True)),
        "spec.workerGroupSpecs[0].suspend",
        "worker group workers cannot be suspended with Autoscaler enabled",
        all_of(AUTOSCALING, put(*W0, "suspend", False)),
    ),
    Case(
        "version-and-v2-env",
        all_of(V2, put(*HEAD_C, "env", env(("RAY_enable_autoscaler_v2", "true")))),
        "spec.autoscalerOptions.version",
        "both .spec.autoscalerOptions.version and head Pod env var RAY_enable_autoscaler_v2 are "
        "set, please only use the former",
        all_of(AUTOSCALING, put(*HEAD_C, "env", env(("RAY_enable_autoscaler_v2", "true")))),
    ),
    Case(
        "v2-head-restart-policy",
        all_of(V2, put(*HEAD, "template", "spec", "restartPolicy", "Always")),
        "spec.headGroupSpec.template.spec.restartPolicy",
        "restartPolicy for head Pod should be Never or unset when using autoscaler V2",
        all_of(V2, put(*HEAD, "template", "spec", "restartPolicy", "Never")),
    ),
    Case(
        "v2-worker-restart-policy",
        all_of(V2, put(*W0, "template", "spec", "restartPolicy", "OnFailure")),
        "spec.workerGroupSpecs[0].template.spec.restartPolicy",
        "restartPolicy for worker group workers should be Never or unset when using autoscaler V2",
        all_of(AUTOSCALING, put(*W0, "template", "spec", "restartPolicy", "OnFailure")),
    ),
    Case(
        "autoscaler-idle-timeout",
        put("spec", "autoscalerOptions", {"idleTimeoutSeconds": -1}),
        "spec.autoscalerOptions.idleTimeoutSeconds",
        "autoscalerOptions.idleTimeoutSeconds must be non-negative, got -1",
        put("spec", "autoscalerOptions", {"idleTimeoutSeconds": 0}),
    ),
    Case(
        "autoscaler-env-gen-cmd",
        put("spec", "autoscalerOptions", {"env": env(("KUBERAY_GEN_AUTOSCALER_START_CMD", "x"))}),
        "spec.autoscalerOptions.env[0]",
        "autoscalerOptions.env must not contain KUBERAY_GEN_AUTOSCALER_START_CMD: it is managed",
        put("spec", "autoscalerOptions", {"env": env(("OTHER", "x"))}),
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
    Case(
        "upgrade-strategy-on-owned-cluster",
        all_of(
            put("spec", "upgradeStrategy", {"type": "Recreate"}),
            put("metadata", "labels", {"ray.io/originated-from-crd": "RayJob"}),
        ),
        "spec.upgradeStrategy.type",
        "upgradeStrategy cannot be set when RayCluster is created by RayJob",
        all_of(
            put("spec", "upgradeStrategy", {"type": "Recreate"}),
            put("metadata", "labels", {"ray.io/originated-from-crd": "Other"}),
        ),
        source="upgrade",
    ),
    Case(
        "status-suspending-and-suspended",
        put(
            "status",
            {
                "conditions": [
                    {"type": "RayClusterSuspending", "status": "True"},
                    {"type": "RayClusterSuspended", "status": "True"},
                ]
            },
        ),
        "status.conditions",
        "invalid RayCluster State: rayv1.RayClusterSuspending and rayv1.RayClusterSuspended "
        "conditions should not be both true",
        put(
            "status",
            {
                "conditions": [
                    {"type": "RayClusterSuspending", "status": "False"},
                    {"type": "RayClusterSuspended", "status": "True"},
                ]
            },
        ),
        source="status",
    ),
    Case(
        "webhook-unique-group-names",
        lambda obj: obj["spec"]["workerGroupSpecs"].append(
            copy.deepcopy(obj["spec"]["workerGroupSpecs"][0])
        ),
        "spec.workerGroupSpecs[1].groupName",
        "worker group names must be unique",
        source="webhook",
    ),
    Case(
        "crd-managed-by-value",
        put("spec", "managedBy", "someone-else"),
        "spec.managedBy",
        "the managedBy field value must be either 'ray.io/kuberay-operator' or "
        "'kueue.x-k8s.io/multikueue'",
        put("spec", "managedBy", "kueue.x-k8s.io/multikueue"),
        source="crd",
    ),
    Case(
        "crd-enum",
        put("spec", "autoscalerOptions", {"version": "v3"}),
        "spec.autoscalerOptions.version",
        "unsupported value 'v3': supported values: 'v1', 'v2'",
        put("spec", "autoscalerOptions", {"version": "v1"}),
        source="crd",
    ),
    Case(
        "crd-quantity-pattern",
        put("spec", "gcsFaultToleranceOptions", {**ROCKSDB, "storage": {"size": "lots"}}),
        "spec.gcsFaultToleranceOptions.storage.size",
        "spec.gcsFaultToleranceOptions.storage.size in body should match",
        put("spec", "gcsFaultToleranceOptions", {**ROCKSDB, "storage": {"size": "1.5Gi"}}),
        gates=GATES_ALL,
        good_gates=GATES_ALL,
        source="crd",
    ),
    Case(
        "crd-list-map-duplicate",
        put(
            "spec",
            "networkPolicy",
            {"workerGroups": [{"groupName": "workers"}, {"groupName": "workers"}]},
        ),
        "spec.networkPolicy.workerGroups[1]",
        'Duplicate value: {"groupName":"workers"}',
        gates=GATES_ALL,
        source="crd",
    ),
]

JW = ("spec", "rayClusterSpec", "workerGroupSpecs", 0)
RULE_SUCCEEDED = {"policy": "DeleteCluster", "condition": {"jobStatus": "SUCCEEDED"}}

RAYJOB_CASES = [
    Case(
        "name-length",
        put("metadata", "name", "j" * 48),
        "metadata.name",
        "The RayJob metadata is invalid: RayJob name should be no more than 47 characters",
        put("metadata", "name", "j" * 47),
        source="metadata",
    ),
    Case(
        "name-dns1035",
        put("metadata", "name", "1job"),
        "metadata.name",
        "The RayJob metadata is invalid: RayJob name should be a valid DNS1035 label",
        source="metadata",
    ),
    Case(
        "suspend-needs-shutdown",
        put("spec", "suspend", True),
        "spec.suspend",
        "The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false is not "
        "allowed to be suspended",
        all_of(put("spec", "suspend", True), put("spec", "shutdownAfterJobFinishes", True)),
    ),
    Case(
        "ttl-negative",
        all_of(
            put("spec", "ttlSecondsAfterFinished", -1),
            put("spec", "shutdownAfterJobFinishes", True),
        ),
        "spec.ttlSecondsAfterFinished",
        "The RayJob spec is invalid: TTLSecondsAfterFinished must be a non-negative integer",
    ),
    Case(
        "ttl-needs-shutdown",
        put("spec", "ttlSecondsAfterFinished", 10),
        "spec.ttlSecondsAfterFinished",
        "The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false cannot "
        "have TTLSecondsAfterFinished",
        all_of(
            put("spec", "ttlSecondsAfterFinished", 10),
            put("spec", "shutdownAfterJobFinishes", True),
        ),
    ),
    Case(
        "deletion-needs-gate",
        put("spec", "deletionStrategy", {"deletionRules": [RULE_SUCCEEDED]}),
        "spec.deletionStrategy",
        "RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy",
        put("spec", "deletionStrategy", {"deletionRules": [RULE_SUCCEEDED]}),
        gates={"RayJobDeletionPolicy": False},
        good_gates={"RayJobDeletionPolicy": True},
    ),
    Case(
        "deletion-rules-vs-shutdown",
        all_of(
            put("spec", "deletionStrategy", {"deletionRules": [RULE_SUCCEEDED]}),
            put("spec", "shutdownAfterJobFinishes", True),
        ),
        "spec.shutdownAfterJobFinishes",
        "The RayJob spec is invalid: spec.shutdownAfterJobFinishes and "
        "spec.deletionStrategy.deletionRules are mutually exclusive",
    ),
    Case(
        "deletion-rules-vs-legacy",
        put(
            "spec",
            "deletionStrategy",
            {"deletionRules": [RULE_SUCCEEDED], "onSuccess": {"policy": "DeleteSelf"}},
        ),
        "spec.deletionStrategy",
        "The RayJob spec is invalid: Cannot use both legacy onSuccess/onFailure fields and "
        "deletionRules simultaneously",
    ),
    Case(
        "deletion-rules-vs-legacy-cel",
        put(
            "spec",
            "deletionStrategy",
            {"deletionRules": [RULE_SUCCEEDED], "onSuccess": {"policy": "DeleteSelf"}},
        ),
        "spec.deletionStrategy",
        "legacy policies (onSuccess/onFailure) and deletionRules cannot be used together",
        source="crd",
    ),
    Case(
        "deletion-legacy-incomplete",
        put("spec", "deletionStrategy", {"onSuccess": {"policy": "DeleteSelf"}}),
        "spec.deletionStrategy",
        "both DeletionStrategy.OnSuccess and DeletionStrategy.OnFailure must be set when using "
        "the legacy deletion policy fields of DeletionStrategy",
        put(
            "spec",
            "deletionStrategy",
            {"onSuccess": {"policy": "DeleteSelf"}, "onFailure": {"policy": "DeleteSelf"}},
        ),
    ),
    Case(
        "deletion-legacy-incomplete-cel",
        put("spec", "deletionStrategy", {"onFailure": {"policy": "DeleteSelf"}}),
        "spec.deletionStrategy",
        "deletionStrategy requires either BOTH onSuccess and onFailure, OR the deletionRules field",
        source="crd",
    ),
    Case(
        "deletion-legacy-policy-unset",
        put("spec", "deletionStrategy", {"onSuccess": {}, "onFailure": {"policy": "DeleteSelf"}}),
        "spec.deletionStrategy.onSuccess.policy",
        "the DeletionPolicyType field of DeletionStrategy.OnSuccess cannot be unset when "
        "DeletionStrategy is enabled",
    ),
    Case(
        "deletion-legacy-selector",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put(
                "spec",
                "deletionStrategy",
                {"onSuccess": {"policy": "DeleteCluster"}, "onFailure": {"policy": "DeleteSelf"}},
            ),
        ),
        "spec.deletionStrategy.onSuccess.policy",
        "the ClusterSelector mode doesn't support DeletionStrategy=DeleteCluster on success",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put(
                "spec",
                "deletionStrategy",
                {"onSuccess": {"policy": "DeleteNone"}, "onFailure": {"policy": "DeleteSelf"}},
            ),
        ),
    ),
    Case(
        "deletion-legacy-workers-autoscaling",
        all_of(
            put("spec", "rayClusterSpec", "enableInTreeAutoscaling", True),
            put(
                "spec",
                "deletionStrategy",
                {
                    "onSuccess": {"policy": "DeleteWorkers"},
                    "onFailure": {"policy": "DeleteCluster"},
                },
            ),
        ),
        "spec.deletionStrategy",
        "DeletionStrategy=DeleteWorkers currently does not support RayCluster with autoscaling",
        put(
            "spec",
            "deletionStrategy",
            {"onSuccess": {"policy": "DeleteWorkers"}, "onFailure": {"policy": "DeleteCluster"}},
        ),
    ),
    Case(
        "deletion-legacy-shutdown-delete-none",
        all_of(
            put("spec", "shutdownAfterJobFinishes", True),
            put(
                "spec",
                "deletionStrategy",
                {"onSuccess": {"policy": "DeleteNone"}, "onFailure": {"policy": "DeleteCluster"}},
            ),
        ),
        "spec.deletionStrategy",
        "shutdownAfterJobFinshes is set to 'true' while deletion policy is 'DeleteNone'",
        all_of(
            put("spec", "shutdownAfterJobFinishes", True),
            put(
                "spec",
                "deletionStrategy",
                {"onSuccess": {"policy": "DeleteSelf"}, "onFailure": {"policy": "DeleteCluster"}},
            ),
        ),
    ),
    Case(
        "deletion-empty",
        put("spec", "deletionStrategy", {}),
        "spec.deletionStrategy",
        "The RayJob spec is invalid: DeletionStrategy requires either BOTH onSuccess and "
        "onFailure, OR the deletionRules field (cannot be empty)",
    ),
    Case(
        "deletion-rule-both-statuses",
        put(
            "spec",
            "deletionStrategy",
            {
                "deletionRules": [
                    {
                        "policy": "DeleteCluster",
                        "condition": {"jobStatus": "FAILED", "jobDeploymentStatus": "Failed"},
                    }
                ]
            },
        ),
        "spec.deletionStrategy.deletionRules[0].condition",
        "deletionRules[0]: cannot set both JobStatus and JobDeploymentStatus at the same time",
    ),
    Case(
        "deletion-rule-no-status",
        put(
            "spec",
            "deletionStrategy",
            {"deletionRules": [{"policy": "DeleteCluster", "condition": {}}]},
        ),
        "spec.deletionStrategy.deletionRules[0].condition",
        "deletionRules[0]: exactly one of JobStatus and JobDeploymentStatus must be set",
    ),
    Case(
        "deletion-rule-no-status-cel",
        put(
            "spec",
            "deletionStrategy",
            {"deletionRules": [{"policy": "DeleteCluster", "condition": {}}]},
        ),
        "spec.deletionStrategy.deletionRules[0].condition",
        "the deletion condition requires either the JobStatus or the JobDeploymentStatus field.",
        source="crd",
    ),
    Case(
        "deletion-rule-negative-ttl",
        put(
            "spec",
            "deletionStrategy",
            {
                "deletionRules": [
                    {
                        "policy": "DeleteCluster",
                        "condition": {"jobStatus": "FAILED", "ttlSeconds": -1},
                    }
                ]
            },
        ),
        "spec.deletionStrategy.deletionRules[0].condition.ttlSeconds",
        "deletionRules[0]: TTLSeconds must be non-negative",
    ),
    Case(
        "deletion-rule-negative-ttl-crd",
        put(
            "spec",
            "deletionStrategy",
            {
                "deletionRules": [
                    {
                        "policy": "DeleteCluster",
                        "condition": {"jobStatus": "FAILED", "ttlSeconds": -1},
                    }
                ]
            },
        ),
        "spec.deletionStrategy.deletionRules[0].condition.ttlSeconds",
        "should be greater than or equal to 0",
        source="crd",
    ),
    Case(
        "deletion-rule-selector",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put(
                "spec",
                "deletionStrategy",
                {
                    "deletionRules": [
                        {"policy": "DeleteWorkers", "condition": {"jobStatus": "FAILED"}}
                    ]
                },
            ),
        ),
        "spec.deletionStrategy.deletionRules[0].policy",
        "deletionRules[0]: DeletionPolicyType 'DeleteWorkers' not supported when ClusterSelector "
        "is set",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put(
                "spec",
                "deletionStrategy",
                {"deletionRules": [{"policy": "DeleteSelf", "condition": {"jobStatus": "FAILED"}}]},
            ),
        ),
    ),
    Case(
        "deletion-rule-workers-autoscaling",
        all_of(
            put("spec", "rayClusterSpec", "enableInTreeAutoscaling", True),
            put(
                "spec",
                "deletionStrategy",
                {
                    "deletionRules": [
                        {"policy": "DeleteWorkers", "condition": {"jobStatus": "FAILED"}}
                    ]
                },
            ),
        ),
        "spec.deletionStrategy.deletionRules[0].policy",
        "deletionRules[0]: DeletionPolicyType 'DeleteWorkers' not supported with autoscaling "
        "enabled",
    ),
    Case(
        "deletion-rule-duplicate",
        put("spec", "deletionStrategy", {"deletionRules": [RULE_SUCCEEDED, RULE_SUCCEEDED]}),
        "spec.deletionStrategy.deletionRules[1]",
        "deletionRules[1]: duplicate rule for DeletionPolicyType 'DeleteCluster' and JobStatus "
        "'SUCCEEDED'",
        put(
            "spec",
            "deletionStrategy",
            {
                "deletionRules": [
                    RULE_SUCCEEDED,
                    {"policy": "DeleteCluster", "condition": {"jobDeploymentStatus": "Failed"}},
                ]
            },
        ),
    ),
    Case(
        "deletion-rule-ttl-order",
        put(
            "spec",
            "deletionStrategy",
            {
                "deletionRules": [
                    {
                        "policy": "DeleteCluster",
                        "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": 10},
                    },
                    {
                        "policy": "DeleteWorkers",
                        "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": 20},
                    },
                ]
            },
        ),
        "spec.deletionStrategy.deletionRules",
        "for JobStatus 'SUCCEEDED': DeleteCluster TTL (10) must be >= DeleteWorkers TTL (20)",
        put(
            "spec",
            "deletionStrategy",
            {
                "deletionRules": [
                    {
                        "policy": "DeleteCluster",
                        "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": 20},
                    },
                    {
                        "policy": "DeleteWorkers",
                        "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": 20},
                    },
                    {"policy": "DeleteSelf", "condition": {"jobStatus": "FAILED", "ttlSeconds": 0}},
                ]
            },
        ),
    ),
    Case(
        "suspend-with-selector",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put("spec", "suspend", True),
            put("spec", "shutdownAfterJobFinishes", True),
        ),
        "spec.suspend",
        "The RayJob spec is invalid: the ClusterSelector mode doesn't support the suspend "
        "operation",
    ),
    Case(
        "needs-cluster-spec-or-selector",
        drop("spec", "rayClusterSpec"),
        "spec.rayClusterSpec",
        "The RayJob spec is invalid: one of RayClusterSpec or ClusterSelector must be set",
        all_of(
            drop("spec", "rayClusterSpec"), put("spec", "clusterSelector", {"ray.io/cluster": "c"})
        ),
    ),
    Case(
        "selector-empty-cluster-name",
        all_of(drop("spec", "rayClusterSpec"), put("spec", "clusterSelector", {"other": "c"})),
        "spec.clusterSelector[ray.io/cluster]",
        "cluster name in ClusterSelector should not be empty",
    ),
    Case(
        "selector-in-sidecar-mode",
        all_of(
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put("spec", "submissionMode", "SidecarMode"),
        ),
        "spec.clusterSelector",
        "ClusterSelector is not supported in SidecarMode",
        all_of(
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put("spec", "submissionMode", "HTTPMode"),
        ),
    ),
    Case(
        "selector-with-backoff",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put("spec", "backoffLimit", 1),
        ),
        "spec.backoffLimit",
        "The RayJob spec is invalid: BackoffLimit is incompatible with ClusterSelector mode",
        all_of(
            drop("spec", "rayClusterSpec"),
            put("spec", "clusterSelector", {"ray.io/cluster": "c"}),
            put("spec", "backoffLimit", 0),
        ),
    ),
    Case(
        "interactive-with-backoff",
        all_of(put("spec", "submissionMode", "InteractiveMode"), put("spec", "backoffLimit", 2)),
        "spec.backoffLimit",
        "The RayJob spec is invalid: BackoffLimit is incompatible with InteractiveMode",
        all_of(put("spec", "submissionMode", "K8sJobMode"), put("spec", "backoffLimit", 2)),
    ),
    Case(
        "sidecar-submitter-template",
        all_of(
            put("spec", "submissionMode", "SidecarMode"), put("spec", "submitterPodTemplate", {})
        ),
        "spec.submitterPodTemplate",
        "Currently, SidecarMode doesn't support SubmitterPodTemplate",
        all_of(
            put("spec", "submissionMode", "K8sJobMode"), put("spec", "submitterPodTemplate", {})
        ),
    ),
    Case(
        "sidecar-submitter-config",
        all_of(put("spec", "submissionMode", "SidecarMode"), put("spec", "submitterConfig", {})),
        "spec.submitterConfig",
        "Currently, SidecarMode doesn't support SubmitterConfig",
    ),
    Case(
        "sidecar-head-restart-policy",
        all_of(
            put("spec", "submissionMode", "SidecarMode"),
            put(
                "spec",
                "rayClusterSpec",
                "headGroupSpec",
                "template",
                "spec",
                "restartPolicy",
                "Always",
            ),
        ),
        "spec.rayClusterSpec.headGroupSpec.template.spec.restartPolicy",
        "restartPolicy for head Pod should be Never or unset when using SidecarMode",
        all_of(
            put("spec", "submissionMode", "SidecarMode"),
            put(
                "spec",
                "rayClusterSpec",
                "headGroupSpec",
                "template",
                "spec",
                "restartPolicy",
                "Never",
            ),
        ),
    ),
    Case(
        "k8s-token-auth",
        all_of(
            put(
                "spec",
                "rayClusterSpec",
                "authOptions",
                {"mode": "token", "enableK8sTokenAuth": True},
            ),
            put("spec", "rayClusterSpec", "rayVersion", "2.55.0"),
        ),
        "spec.rayClusterSpec.authOptions.enableK8sTokenAuth",
        "The RayJob spec is invalid: K8s token auth mode is currently not supported for RayJob",
        put("spec", "rayClusterSpec", "authOptions", {"mode": "token"}),
    ),
    Case(
        "embedded-cluster-spec",
        put(*JW, "minReplicas", -2),
        "spec.rayClusterSpec.workerGroupSpecs[0].minReplicas",
        "The RayJob spec is invalid: worker group workers has negative minReplicas -2",
    ),
    Case(
        "embedded-cluster-ft-annotation",
        all_of(
            put("metadata", "annotations", {"ray.io/ft-enabled": "true"}),
            put("spec", "rayClusterSpec", "gcsFaultToleranceOptions", {"redisAddress": "r:1"}),
        ),
        "metadata.annotations[ray.io/ft-enabled]",
        "The RayJob spec is invalid: ray.io/ft-enabled annotation and GcsFaultToleranceOptions",
    ),
    Case(
        "runtime-env-yaml-syntax",
        put("spec", "runtimeEnvYAML", "a: [b"),
        "spec.runtimeEnvYAML",
        "failed to unmarshal RuntimeEnvYAML: a: [b: ",
        put("spec", "runtimeEnvYAML", "pip: [requests]\nenv_vars: {A: b}\n"),
    ),
    Case(
        "runtime-env-yaml-not-a-map",
        put("spec", "runtimeEnvYAML", "- a\n- b\n"),
        "spec.runtimeEnvYAML",
        "cannot unmarshal array into Go value of type map[string]interface {}",
        put("spec", "runtimeEnvYAML", ""),
    ),
    Case(
        "active-deadline",
        put("spec", "activeDeadlineSeconds", 0),
        "spec.activeDeadlineSeconds",
        "The RayJob spec is invalid: activeDeadlineSeconds must be a positive integer",
        put("spec", "activeDeadlineSeconds", 1),
    ),
    Case(
        "pre-running-deadline",
        put("spec", "preRunningDeadlineSeconds", 0),
        "spec.preRunningDeadlineSeconds",
        "The RayJob spec is invalid: preRunningDeadlineSeconds must be a positive integer",
        put("spec", "preRunningDeadlineSeconds", 1),
    ),
    Case(
        "pre-running-deadline-crd",
        put("spec", "preRunningDeadlineSeconds", 0),
        "spec.preRunningDeadlineSeconds",
        "Invalid value: 0: spec.preRunningDeadlineSeconds in body should be greater than or "
        "equal to 1",
        source="crd",
    ),
    Case(
        "backoff-negative",
        put("spec", "backoffLimit", -1),
        "spec.backoffLimit",
        "The RayJob spec is invalid: backoffLimit must be a positive integer",
        put("spec", "backoffLimit", 0),
    ),
    Case(
        "status-waiting",
        put("status", {"jobDeploymentStatus": "Waiting"}),
        "status.jobDeploymentStatus",
        "The RayJob status is invalid: JobDeploymentStatus cannot be `Waiting` when SubmissionMode "
        "is not InteractiveMode",
        all_of(
            put("status", {"jobDeploymentStatus": "Waiting"}),
            put("spec", "submissionMode", "InteractiveMode"),
        ),
        source="status",
    ),
    Case(
        "crd-managed-by",
        put("spec", "rayClusterSpec", "managedBy", "x"),
        "spec.rayClusterSpec.managedBy",
        "the managedBy field value must be either",
        put("spec", "managedBy", "ray.io/kuberay-operator"),
        source="crd",
    ),
]

INC = {
    "type": "NewClusterWithIncrementalUpgrade",
    "clusterUpgradeOptions": {
        "maxSurgePercent": 50,
        "stepSizePercent": 20,
        "intervalSeconds": 30,
        "gatewayClassName": "istio",
    },
}
RS_AUTOSCALING = put("spec", "rayClusterConfig", "enableInTreeAutoscaling", True)


def _inc(**options: Any) -> Mutation:
    value = copy.deepcopy(INC)
    value["clusterUpgradeOptions"].update(options)
    return all_of(RS_AUTOSCALING, put("spec", "upgradeStrategy", value))


RAYSERVICE_CASES = [
    Case(
        "name-length",
        put("metadata", "name", "s" * 48),
        "metadata.name",
        "The RayService metadata is invalid: RayService name should be no more than 47 characters",
        put("metadata", "name", "s" * 47),
        source="metadata",
    ),
    Case(
        "name-dns1035",
        put("metadata", "name", "Svc"),
        "metadata.name",
        "The RayService metadata is invalid: RayService name should be a valid DNS1035 label",
        source="metadata",
    ),
    Case(
        "initializing-timeout-duration",
        put("metadata", "annotations", {"ray.io/initializing-timeout": "-5m"}),
        "metadata.annotations[ray.io/initializing-timeout]",
        "The RayService metadata is invalid: RayService annotations is invalid: annotation "
        "ray.io/initializing-timeout must be a positive duration, got: -5m",
        put("metadata", "annotations", {"ray.io/initializing-timeout": "1h30m"}),
        source="metadata",
    ),
    Case(
        "initializing-timeout-zero",
        put("metadata", "annotations", {"ray.io/initializing-timeout": "0"}),
        "metadata.annotations[ray.io/initializing-timeout]",
        "must be a positive duration, got: 0",
        source="metadata",
    ),
    Case(
        "initializing-timeout-integer",
        put("metadata", "annotations", {"ray.io/initializing-timeout": "-3"}),
        "metadata.annotations[ray.io/initializing-timeout]",
        "annotation ray.io/initializing-timeout must be a positive integer (seconds), got: -3",
        put("metadata", "annotations", {"ray.io/initializing-timeout": "300"}),
        source="metadata",
    ),
    Case(
        "initializing-timeout-format",
        put("metadata", "annotations", {"ray.io/initializing-timeout": "abc"}),
        "metadata.annotations[ray.io/initializing-timeout]",
        "annotation ray.io/initializing-timeout has invalid format: abc. Expected Go duration "
        "format (e.g., '5m', '1h') or positive integer seconds",
        put("metadata", "annotations", {"ray.io/initializing-timeout": ""}),
        source="metadata",
    ),
    Case(
        "k8s-token-auth",
        put("spec", "rayClusterConfig", "authOptions", {"enableK8sTokenAuth": True}),
        "spec.rayClusterConfig.authOptions.enableK8sTokenAuth",
        "The RayService spec is invalid: K8s token auth mode is currently not supported for "
        "RayService",
    ),
    Case(
        "embedded-cluster-spec",
        put("spec", "rayClusterConfig", "headGroupSpec", "template", "spec", "containers", []),
        "spec.rayClusterConfig.headGroupSpec.template.spec.containers",
        "The RayService spec is invalid: headGroupSpec should have at least one container",
    ),
    Case(
        "head-service-name",
        put(
            "spec", "rayClusterConfig", "headGroupSpec", "headService", {"metadata": {"name": "x"}}
        ),
        "spec.rayClusterConfig.headGroupSpec.headService.metadata.name",
        "The RayService spec is invalid: spec.rayClusterConfig.headGroupSpec.headService.metadata."
        "name should not be set",
        put(
            "spec",
            "rayClusterConfig",
            "headGroupSpec",
            "headService",
            {"metadata": {"labels": {"a": "b"}}},
        ),
    ),
    Case(
        "upgrade-type",
        put("spec", "upgradeStrategy", {"type": "Blue"}),
        "spec.upgradeStrategy.type",
        "The RayService spec is invalid: Spec.UpgradeStrategy.Type value Blue is invalid, valid "
        "options are NewClusterWithIncrementalUpgrade, NewCluster, or None",
        put("spec", "upgradeStrategy", {"type": "None"}),
    ),
    Case(
        "deletion-delay",
        put("spec", "rayClusterDeletionDelaySeconds", -1),
        "spec.rayClusterDeletionDelaySeconds",
        "The RayService spec is invalid: Spec.RayClusterDeletionDelaySeconds should be a "
        "non-negative integer, got -1",
        put("spec", "rayClusterDeletionDelaySeconds", 0),
    ),
    Case(
        "deletion-delay-crd",
        put("spec", "rayClusterDeletionDelaySeconds", -1),
        "spec.rayClusterDeletionDelaySeconds",
        "should be greater than or equal to 0",
        source="crd",
    ),
    Case(
        "incremental-needs-autoscaler",
        put("spec", "upgradeStrategy", INC),
        "spec.rayClusterConfig.enableInTreeAutoscaling",
        "The RayService spec is invalid: Ray Autoscaler is required for "
        "NewClusterWithIncrementalUpgrade",
        _inc(),
    ),
    Case(
        "incremental-gate-off-skips-checks",
        put("spec", "upgradeStrategy", INC),
        "spec.rayClusterConfig.enableInTreeAutoscaling",
        "Ray Autoscaler is required",
        put("spec", "upgradeStrategy", INC),
        good_gates={"RayServiceIncrementalUpgrade": False},
    ),
    Case(
        "incremental-needs-options",
        all_of(
            RS_AUTOSCALING,
            put("spec", "upgradeStrategy", {"type": "NewClusterWithIncrementalUpgrade"}),
        ),
        "spec.upgradeStrategy.clusterUpgradeOptions",
        "The RayService spec is invalid: ClusterUpgradeOptions are required for "
        "NewClusterWithIncrementalUpgrade",
    ),
    Case(
        "incremental-max-surge",
        _inc(maxSurgePercent=150),
        "spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent",
        "The RayService spec is invalid: maxSurgePercent must be between 0 and 100",
        _inc(maxSurgePercent=100),
    ),
    Case(
        "incremental-step-size",
        _inc(stepSizePercent=-1),
        "spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent",
        "The RayService spec is invalid: stepSizePercent must be between 0 and 100",
        _inc(stepSizePercent=0),
    ),
    Case(
        "incremental-step-gt-surge",
        _inc(stepSizePercent=50, maxSurgePercent=20),
        "spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent",
        "The RayService spec is invalid: stepSizePercent must be less than or equal to "
        "maxSurgePercent",
        _inc(stepSizePercent=20, maxSurgePercent=20),
    ),
    Case(
        "incremental-interval",
        _inc(intervalSeconds=0),
        "spec.upgradeStrategy.clusterUpgradeOptions.intervalSeconds",
        "The RayService spec is invalid: intervalSeconds must be greater than 0",
        _inc(intervalSeconds=1),
    ),
    Case(
        "incremental-gateway-class",
        _inc(gatewayClassName=""),
        "spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName",
        "The RayService spec is invalid: gatewayClassName is required for "
        "NewClusterWithIncrementalUpgrade",
    ),
    Case(
        "crd-missing-required-option",
        all_of(
            RS_AUTOSCALING,
            put(
                "spec",
                "upgradeStrategy",
                {
                    "type": "NewClusterWithIncrementalUpgrade",
                    "clusterUpgradeOptions": {"gatewayClassName": "g"},
                },
            ),
        ),
        "spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent",
        "Required value",
        source="crd",
    ),
]

RAYCRONJOB_CASES = [
    Case(
        "name-length",
        put("metadata", "name", "c" * 37),
        "metadata.name",
        "RayCronJob name should be no more than 36 characters",
        put("metadata", "name", "c" * 36),
    ),
    Case(
        "schedule-tz",
        put("spec", "schedule", "TZ=UTC 0 * * * *"),
        "spec.schedule",
        "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        put("spec", "schedule", "0 * * * *"),
    ),
    Case(
        "schedule-invalid",
        put("spec", "schedule", "invalid"),
        "spec.schedule",
        "invalid cron schedule: expected exactly 5 fields, found 1: [invalid]",
        put("spec", "schedule", "@daily"),
    ),
    Case(
        "schedule-out-of-range",
        put("spec", "schedule", "0 0 * * 7"),
        "spec.schedule",
        "invalid cron schedule: end of range (7) above maximum (6): 7",
        put("spec", "schedule", "0 0 ? jan-mar sun,sat"),
    ),
    Case(
        "time-zone-empty",
        put("spec", "timeZone", ""),
        "spec.timeZone",
        "timeZone must not be empty string, omit the field to use the local time zone of the "
        "KubeRay operator",
        put("spec", "timeZone", "UTC"),
    ),
    Case(
        "time-zone-empty-crd",
        put("spec", "timeZone", ""),
        "spec.timeZone",
        "spec.timeZone in body should be at least 1 chars long",
        source="crd",
    ),
    Case(
        "time-zone-unknown",
        put("spec", "timeZone", "Mars/Olympus"),
        "spec.timeZone",
        "invalid time zone: unknown time zone Mars/Olympus",
        put("spec", "timeZone", "America/Los_Angeles"),
    ),
    Case(
        "job-template",
        put("spec", "jobTemplate", "suspend", True),
        "spec.jobTemplate.suspend",
        "invalid RayJob template: The RayJob spec is invalid: a RayJob with "
        "shutdownAfterJobFinishes set to false is not allowed to be suspended",
        all_of(
            put("spec", "jobTemplate", "suspend", True),
            put("spec", "jobTemplate", "shutdownAfterJobFinishes", True),
        ),
    ),
    Case(
        "job-template-cluster",
        put("spec", "jobTemplate", "rayClusterSpec", "workerGroupSpecs", 0, "maxReplicas", -1),
        "spec.jobTemplate.rayClusterSpec.workerGroupSpecs[0].maxReplicas",
        "invalid RayJob template: The RayJob spec is invalid: worker group workers has negative "
        "maxReplicas -1",
    ),
    Case(
        "crd-job-template-cel",
        put("spec", "jobTemplate", "deletionStrategy", {"onSuccess": {"policy": "DeleteSelf"}}),
        "spec.jobTemplate.deletionStrategy",
        "deletionStrategy requires either BOTH onSuccess and onFailure",
        source="crd",
    ),
]


def _check(validate: Callable[..., list[FieldError]], base: dict[str, Any], case: Case) -> None:
    bad = copy.deepcopy(base)
    case.bad(bad)
    errors = validate(bad, gates=case.gates)
    matching = [
        e
        for e in errors
        if e.path == case.path and case.message in e.message and e.source == case.source
    ]
    assert matching, (
        f"expected {case.source} error at {case.path!r} containing {case.message!r}; got:\n"
        + "\n".join(f"  [{e.source}] {e}" for e in errors)
    )
    good = copy.deepcopy(base)
    case.good(good)
    good_errors = validate(
        good, gates=case.good_gates if case.good_gates is not None else case.gates
    )
    if case.good is noop and case.good_gates is None:
        return
    assert good_errors == [], "\n".join(str(e) for e in good_errors)


@pytest.mark.parametrize("case", RAYCLUSTER_CASES, ids=lambda c: c.id)
def test_raycluster_rule(case: Case) -> None:
    _check(validate_raycluster, raycluster(), case)


@pytest.mark.parametrize("case", RAYJOB_CASES, ids=lambda c: c.id)
def test_rayjob_rule(case: Case) -> None:
    _check(validate_rayjob, rayjob(), case)


@pytest.mark.parametrize("case", RAYSERVICE_CASES, ids=lambda c: c.id)
def test_rayservice_rule(case: Case) -> None:
    _check(validate_rayservice, rayservice(), case)


@pytest.mark.parametrize("case", RAYCRONJOB_CASES, ids=lambda c: c.id)
def test_raycronjob_rule(case: Case) -> None:
    _check(validate_raycronjob, raycronjob(), case)


@pytest.mark.parametrize(
    ("validate", "builder"),
    [
        (validate_raycluster, raycluster),
        (validate_rayjob, rayjob),
        (validate_rayservice, rayservice),
        (validate_raycronjob, raycronjob),
    ],
)
def test_base_objects_are_valid(validate: Callable[..., list[FieldError]], builder: Any) -> None:
    assert validate(builder()) == []
    assert validate(structure(type_for(builder()), builder())) == []


def type_for(obj: dict[str, Any]) -> Any:
    from kuberay.api.v1 import MODELS

    return MODELS[obj["kind"]]


# --- behaviour of the error list ------------------------------------------------------------
def test_all_errors_are_returned_in_kuberay_order() -> None:
    obj = raycluster(name="Bad_Name")
    obj["spec"]["headGroupSpec"]["template"]["spec"]["containers"] = []
    obj["spec"]["workerGroupSpecs"][0].update({"minReplicas": 4, "maxReplicas": 2})
    obj["spec"]["autoscalerOptions"] = {"idleTimeoutSeconds": -5}
    errors = validate_raycluster(obj)
    assert [e.source for e in errors] == ["metadata", "spec", "spec", "spec"]
    assert [e.path for e in errors] == [
        "metadata.name",
        "spec.headGroupSpec.template.spec.containers",
        "spec.workerGroupSpecs[0].minReplicas",
        "spec.autoscalerOptions.idleTimeoutSeconds",
    ]
    first = first_error(errors, "spec")
    assert first is not None
    assert first.message == "headGroupSpec should have at least one container"
    assert first_error(errors) == errors[0]
    assert first_error(errors, "status") is None
    assert str(errors[0]).startswith("metadata.name: RayCluster name should be a valid DNS1035")


def test_unstructurable_dict_yields_crd_errors_only() -> None:
    obj = raycluster()
    obj["spec"]["workerGroupSpecs"][0]["replicas"] = "two"
    errors = validate_raycluster(obj)
    assert errors == [
        FieldError("spec.workerGroupSpecs[0].replicas", "expected an integer, got string", "crd")
    ]


def test_model_with_out_of_enum_value_reports_crd_and_controller_errors() -> None:
    model = structure(RayCluster, raycluster(upgradeStrategy={"type": "Recreate"}))
    assert model.spec is not None and model.spec.upgrade_strategy is not None
    model.spec.upgrade_strategy.type = "Rolling"  # type: ignore[assignment]
    errors = validate_raycluster(model)
    assert [(e.source, e.path) for e in errors] == [
        ("crd", "spec.upgradeStrategy.type"),
        ("upgrade", "spec.upgradeStrategy.type"),
    ]
    assert errors[0].message == (
        'Unsupported value: "Rolling": supported values: "Recreate", "None"'
    )
    assert errors[1].message == (
        "The RayCluster spec is invalid: Spec.UpgradeStrategy.Type value Rolling is invalid, "
        "valid options are Recreate or None"
    )


def test_missing_spec_is_validated_like_go_zero_values() -> None:
    errors = validate_raycluster({"metadata": {"name": "c"}})
    assert [e.message for e in errors] == ["headGroupSpec should have at least one container"]
    job_errors = validate_rayjob({"metadata": {"name": "j"}})
    assert [e.message for e in job_errors] == [
        "The RayJob spec is invalid: one of RayClusterSpec or ClusterSelector must be set"
    ]
    cron_errors = validate_raycronjob({"metadata": {"name": "c"}})
    assert cron_errors[0].message == "invalid cron schedule: empty spec string"


def test_callable_gates() -> None:
    obj = raycluster(networkPolicy={})
    assert validate_raycluster(obj, gates=lambda name: name == "RayClusterNetworkPolicy") == []
    assert validate_raycluster(obj, gates=lambda name: False) != []


def test_autoscaler_v1_restart_policy_warning() -> None:
    obj = raycluster(enableInTreeAutoscaling=True, autoscalerOptions={"version": "v1"})
    obj["spec"]["workerGroupSpecs"][0]["template"]["spec"]["restartPolicy"] = "Always"
    assert raycluster_spec_warnings(obj) == [
        "restartPolicy for worker groups [workers] should be Never or unset when using "
        "autoscaler V1"
    ]
    assert validate_raycluster(obj) == []  # a warning, not an error
    obj["spec"]["workerGroupSpecs"][0]["template"]["spec"]["restartPolicy"] = "Never"
    assert raycluster_spec_warnings(obj) == []


# --- updates (CEL transition rules) ---------------------------------------------------------
def test_raycluster_update_managed_by_and_backend_are_immutable() -> None:
    old = raycluster(
        managedBy="ray.io/kuberay-operator", gcsFaultToleranceOptions={"backend": "redis"}
    )
    new = copy.deepcopy(old)
    new["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    new["spec"]["gcsFaultToleranceOptions"]["backend"] = "rocksdb"
    errors = validate_raycluster_update(old, new, gates={"GCSFaultToleranceEmbeddedStorage": True})
    assert [(e.path, e.message, e.source) for e in errors] == [
        ("spec.managedBy", "the managedBy field is immutable", "crd"),
        (
            "spec.gcsFaultToleranceOptions.backend",
            "gcsFaultToleranceOptions.backend is immutable",
            "crd",
        ),
    ]
    # Adding or removing the field is not a transition (CEL oldSelf semantics).
    added = copy.deepcopy(raycluster())
    added["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    assert validate_raycluster_update(raycluster(), added) == []
    assert validate_raycluster_update(old, raycluster()) == []


def test_rayjob_update_rules() -> None:
    old = rayjob(managedBy="ray.io/kuberay-operator")
    new = copy.deepcopy(old)
    new["spec"]["entrypoint"] = "python other.py"
    new["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"] = 3
    assert validate_rayjob_update(old, new) == []  # KubeRay accepts (and ignores) such edits
    new["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    errors = validate_rayjob_update(old, new)
    assert [(e.path, e.message) for e in errors] == [
        ("spec.managedBy", "the managedBy field is immutable")
    ]
    cluster_old = rayjob()
    cluster_old["spec"]["rayClusterSpec"]["managedBy"] = "ray.io/kuberay-operator"
    cluster_new = copy.deepcopy(cluster_old)
    cluster_new["spec"]["rayClusterSpec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    assert [e.path for e in validate_rayjob_update(cluster_old, cluster_new)] == [
        "spec.rayClusterSpec.managedBy"
    ]


def test_rayservice_and_raycronjob_update_rules() -> None:
    old = rayservice(managedBy="ray.io/kuberay-operator")
    new = copy.deepcopy(old)
    new["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    assert [e.path for e in validate_rayservice_update(old, new)] == ["spec.managedBy"]
    cron_old = raycronjob()
    cron_old["spec"]["jobTemplate"]["managedBy"] = "ray.io/kuberay-operator"
    cron_new = copy.deepcopy(cron_old)
    cron_new["spec"]["jobTemplate"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    cron_new["spec"]["schedule"] = "bad"
    errors = validate_raycronjob_update(cron_old, cron_new)
    assert [e.path for e in errors] == ["spec.jobTemplate.managedBy", "spec.schedule"]


def test_error_text_names_the_field_once() -> None:
    from kuberay.api.v1.validation.errors import FieldError

    # KubeRay's message already names the field: keep it as it is.
    gate = FieldError(
        "spec.tlsOptions",
        "spec.tlsOptions requires the RayClusterMTLS feature gate to be enabled",
    )
    assert str(gate) == "spec.tlsOptions requires the RayClusterMTLS feature gate to be enabled"
    # Otherwise the path leads, once.
    assert str(FieldError("spec.workerGroupSpecs[0].replicas", "must be >= 0")) == (
        "spec.workerGroupSpecs[0].replicas: must be >= 0"
    )
