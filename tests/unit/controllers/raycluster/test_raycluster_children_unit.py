"""Pieces of the RayCluster child steps that need no apiserver: the requeue env as KubeRay
parses it, GCS PVC drift, Go durations, the Secret cache scope and the Redis cleanup Job
retry (backoff, not a fixed 2 s)."""

from __future__ import annotations

from typing import Any

import pytest

from kuberay.cmd.operator_run import CACHE_SCOPE
from kuberay.controllers.builders.auth import build_auth_secret
from kuberay.controllers.builders.gcs_ft import build_gcs_storage_pvc
from kuberay.controllers.raycluster.children import gcs_pvc_drift
from kuberay.controllers.raycluster.context import Ctx, RayClusterSettings
from kuberay.controllers.raycluster.gcs_ft import (
    age_text,
    deletion_timeout,
    reconcile_gcs_ft_finalizer,
)
from kuberay.controllers.setup import requeue_seconds
from kuberay.kube import ApiError
from kuberay.reconcile import Expectations, RequeueError


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, 300.0),
        ("", 300.0),
        ("30", 30.0),
        ("+7", 7.0),
        ("0", 0.0),  # KubeRay: RequeueAfter 0, i.e. no periodic requeue
        ("-5", -5.0),  # likewise
        ("1.5", 300.0),
        (" 5", 300.0),
        ("5s", 300.0),
        ("1_0", 300.0),
        ("99999999999999999999", 300.0),  # strconv.Atoi: out of range
    ],
)
def test_requeue_seconds_like_strconv_atoi(raw: str | None, expected: float) -> None:
    env = {} if raw is None else {"RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV": raw}
    assert requeue_seconds(env) == expected


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0s"), (45.9, "45s"), (303, "5m3s"), (3607, "1h0m7s")]
)
def test_deletion_age_in_whole_seconds(seconds: float, text: str) -> None:
    assert age_text(seconds) == text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(None, 300.0), ("120", 120.0), ("+7", 7.0), ("0", 300.0), ("not-a-number", 300.0),
     (" 5", 300.0), ("1_0", 300.0)],
)  # fmt: skip
def test_gcs_ft_deletion_timeout_like_strconv_atoi(raw: str | None, expected: float) -> None:
    annotations = {} if raw is None else {"ray.io/gcs-ft-deletion-timeout": raw}
    cluster = {"metadata": {"name": "c", "namespace": "n", "annotations": annotations}}
    assert deletion_timeout(cluster) == expected


def _rocks(storage: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": "ns", "uid": "u1"},
        "spec": {"gcsFaultToleranceOptions": {"backend": "rocksdb", "storage": storage}},
    }


def test_gcs_pvc_drift() -> None:
    live = build_gcs_storage_pvc(_rocks({}))
    live["spec"]["storageClassName"] = "standard"  # the defaulted class: not drift
    assert gcs_pvc_drift(build_gcs_storage_pvc(_rocks({})), live) == ""
    assert gcs_pvc_drift(build_gcs_storage_pvc(_rocks({"size": "1024Mi"})), live) == ""
    desired = build_gcs_storage_pvc(
        _rocks(
            {
                "size": "2Gi",
                "storageClassName": "fast",
                "accessModes": ["ReadWriteOnce", "ReadWriteMany"],
            }
        )
    )
    assert gcs_pvc_drift(desired, live) == (
        "requested size 2Gi != current 1Gi; storageClassName fast != current standard; "
        "accessModes [ReadWriteOnce ReadWriteMany] != current [ReadWriteOnce]"
    )


def _matches(selector: str, labels: dict[str, str]) -> bool:
    # The selectors used in CACHE_SCOPE: comma-separated "key" / "key=value" terms.
    for term in selector.split(","):
        key, _, value = term.partition("=")
        if key not in labels or (value and labels[key] != value):
            return False
    return True


def test_secret_cache_scope_selects_the_auth_secret_only() -> None:
    scope = CACHE_SCOPE[("v1", "Secret")]
    assert scope.label_selector is not None
    cluster = _rocks({})
    secret = build_auth_secret(cluster, "token")
    assert _matches(scope.label_selector, secret["metadata"]["labels"])
    assert not _matches(scope.label_selector, {"app": "user"})


class _FakeCache:
    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.objects = objects

    def list(self, api_version: str, kind: str, **_: Any) -> list[dict[str, Any]]:
        return [o for o in self.objects if o["kind"] == kind]


class _FailingClient:
    def __init__(self) -> None:
        self.creates = 0

    async def create(self, obj: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.creates += 1
        raise ApiError(403, "Forbidden", "jobs is forbidden: exceeded quota")


class _Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Any, etype: str, reason: str, message: str, action: str = "") -> None:
        self.events.append((etype, reason, message))


async def test_redis_cleanup_job_failure_backs_off_instead_of_fixed_requeue() -> None:
    import datetime as dt

    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    cluster = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {
            "name": "ft",
            "namespace": "ns",
            "uid": "u1",
            "resourceVersion": "1",
            "deletionTimestamp": now,
            "finalizers": ["ray.io/gcs-ft-redis-cleanup-finalizer"],
        },
        "spec": {
            "gcsFaultToleranceOptions": {"redisAddress": "redis:6379"},
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [{"name": "ray-head", "image": "ray"}]}},
            },
        },
    }
    client = _FailingClient()
    recorder = _Recorder()
    ctx = Ctx(
        client=client,  # type: ignore[arg-type]
        cache=_FakeCache([]),  # type: ignore[arg-type]
        recorder=recorder,  # type: ignore[arg-type]
        settings=RayClusterSettings(),
        expectations=Expectations(),
    )
    with pytest.raises(RequeueError, match="ns/ft-redis-cleanup"):
        await reconcile_gcs_ft_finalizer(ctx, cluster)
    assert client.creates == 1
    assert recorder.events[0][:2] == ("Warning", "FailedToCreateRedisCleanupJob")
    assert "ns/ft-redis-cleanup" in recorder.events[0][2]
