"""The RayJob a RayCronJob creates for a tick: KubeRay's name, label, annotation, owner
reference, and the template copied as it was read (fields unknown to this build too)."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

from kuberay.controllers.raycronjob import build_rayjob, rayjob_name


def cronjob() -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCronJob",
        "metadata": {
            "name": "test-cronjob",
            "namespace": "ns",
            "uid": "11111111-2222",
            "resourceVersion": "7",
            "labels": {"team": "a"},
            "annotations": {"note": "x"},
        },
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {
                "entrypoint": "python test.py",
                "shutdownAfterJobFinishes": False,
                "entrypointNumCpus": 0,
                "futureField": {"nested": [1, {"deep": None}]},
                "rayClusterSpec": {
                    "headGroupSpec": {
                        "rayStartParams": {},
                        "template": {"spec": {"containers": [{"name": "h", "image": "i"}]}},
                    }
                },
            },
        },
        "status": {"lastScheduleTime": "2024-01-01T00:00:00Z"},
    }


TICK = dt.datetime(2024, 1, 1, 0, 5, tzinfo=dt.UTC)


def test_name_is_the_tick_in_unix_minutes() -> None:
    # CJ-01: 2024-01-01T00:05Z is minute 28401125 since the epoch.
    assert rayjob_name("test-cronjob", TICK) == "test-cronjob-28401125"
    taipei = dt.timezone(dt.timedelta(hours=8))
    same_instant = dt.datetime(2024, 1, 1, 8, 5, tzinfo=taipei)
    assert rayjob_name("test-cronjob", same_instant) == "test-cronjob-28401125"
    assert rayjob_name("test-cronjob", TICK + dt.timedelta(minutes=5)) == "test-cronjob-28401130"


def test_rayjob_carries_kuberays_metadata_and_owner() -> None:
    job = build_rayjob(cronjob(), TICK)
    assert job["apiVersion"] == "ray.io/v1" and job["kind"] == "RayJob"
    assert job["metadata"] == {
        "name": "test-cronjob-28401125",
        "namespace": "ns",
        "labels": {"ray.io/cronjob-name": "test-cronjob"},
        "annotations": {"ray.io/cronjob-scheduled-timestamp": "2024-01-01T00:05:00Z"},
        "ownerReferences": [
            {
                "apiVersion": "ray.io/v1",
                "kind": "RayCronJob",
                "name": "test-cronjob",
                "uid": "11111111-2222",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }


def test_annotation_is_utc_even_for_a_zoned_tick() -> None:
    berlin = dt.timezone(dt.timedelta(hours=1))
    job = build_rayjob(cronjob(), dt.datetime(2024, 1, 1, 9, 0, 30, tzinfo=berlin))
    stamp = job["metadata"]["annotations"]["ray.io/cronjob-scheduled-timestamp"]
    assert stamp == "2024-01-01T08:00:30Z"


def test_spec_is_the_raw_template_verbatim_and_a_copy() -> None:
    source = cronjob()
    job = build_rayjob(source, TICK)
    assert job["spec"] == cronjob()["spec"]["jobTemplate"]
    assert job["spec"]["futureField"] == {"nested": [1, {"deep": None}]}
    assert job["spec"]["shutdownAfterJobFinishes"] is False
    assert job["spec"]["entrypointNumCpus"] == 0
    job["spec"]["rayClusterSpec"]["headGroupSpec"]["rayStartParams"]["x"] = "1"
    job["spec"]["futureField"]["nested"].append(2)
    assert source == cronjob()  # the cached object is never touched


def test_cronjob_labels_and_annotations_are_not_copied() -> None:
    source = copy.deepcopy(cronjob())
    job = build_rayjob(source, TICK)
    assert "team" not in job["metadata"]["labels"]
    assert "note" not in job["metadata"]["annotations"]
