"""The storage layout against KubeRay's key rules (history-server.md §1.5, §1.6)."""

from __future__ import annotations

import pytest

from kuberay.historyserver.ids import InvalidID, to_hex
from kuberay.historyserver.layout import (
    EVENT_FILE_RE,
    ClusterRef,
    Layout,
    LayoutError,
    camel,
    endpoint_storage_key,
    event_file_name,
    parse_event_file_name,
    parse_session_marker,
    ray_camel,
    session_created_at,
    to_camel,
)

S = "session_2026-01-11_19-38-40_123456_1"
RC = Layout(ClusterRef("default", "raycluster-hs"))
JOB = Layout(ClusterRef.make("team-a", "rayjob-x-abc12", "RayJob", "rayjob-x"), root="/my/root/")
SVC = Layout(ClusterRef.make("ns", "svc-c", "RAYSERVICE", "svc"), root="r")


def test_markers_byte_for_byte() -> None:
    assert RC.session_marker_key(S) == f"cluster-metadata/raycluster/default_raycluster-hs/{S}"
    assert (
        JOB.session_marker_key(S)
        == f"my/root/cluster-metadata/rayjob/team-a_rayjob-x_rayjob-x-abc12/{S}"
    )
    assert SVC.session_marker_key(S) == f"r/cluster-metadata/rayservice/ns_svc_svc-c/{S}"
    assert JOB.metadata_prefix() == "my/root/cluster-metadata/"
    assert RC.metadata_prefix() == "cluster-metadata/"


def test_markers_parse_back() -> None:
    for layout in (RC, JOB, SVC):
        parsed = parse_session_marker(layout.session_marker_key(S), layout.root)
        assert parsed == (layout.cluster, S)
    assert parse_session_marker("cluster-metadata/raycluster/a_b_c/s") is None
    assert parse_session_marker("cluster-metadata/rayjob/a_b/s") is None
    assert parse_session_marker("cluster-metadata/raycluster/a_b/s/extra") is None
    assert parse_session_marker("other/raycluster/a_b/s") is None
    assert parse_session_marker("cluster-metadata/raycluster/a_b/..") is None


def test_history_tree_byte_for_byte() -> None:
    node = "72671b9b9704e37837a0c1dbe67f5b48f92ed718c77faf03ce819bf3"
    base = f"cluster-history/raycluster/default/raycluster-hs/{S}"
    assert RC.session_prefix(S) == base
    assert RC.log_key(S, node, "raylet.out") == f"{base}/{node}/logs/raylet.out"
    assert RC.log_key(S, node, "events/event_GCS.log") == f"{base}/{node}/logs/events/event_GCS.log"
    name = event_file_name(node, 1_768_160_320_123_456_789, compressed=False)
    assert name == f"{node}-2026-01-11-19-1768160320123456789.jsonl"
    assert RC.node_events_key(S, node, name) == f"{base}/{node}/node_events/{name}"
    assert (
        RC.job_events_key(S, node, "01000000", name) == f"{base}/{node}/job_events/01000000/{name}"
    )
    assert JOB.cluster_prefix() == "my/root/cluster-history/rayjob/team-a/rayjob-x/rayjob-x-abc12"
    assert SVC.cluster_prefix() == "r/cluster-history/rayservice/ns/svc/svc-c"


def test_event_file_names_match_the_servers_regex_and_parse_back() -> None:
    for compressed in (False, True):
        name = event_file_name("abc123", 1_768_160_320_000_000_001, compressed=compressed)
        assert EVENT_FILE_RE.search(name)
        parsed = parse_event_file_name(name)
        assert parsed is not None
        assert (parsed.node_id, parsed.hour, parsed.created_ns, parsed.compressed) == (
            "abc123",
            "2026-01-11-19",
            1_768_160_320_000_000_001,
            compressed,
        )
    assert EVENT_FILE_RE.search("legacy-2026-01-11-19.json") is None
    assert EVENT_FILE_RE.search("legacy-2026-01-11-19")  # KubeRay's legacy hourly names
    assert parse_event_file_name("something.jsonl") is None


def test_endpoint_keys_keep_the_query() -> None:
    assert endpoint_storage_key("/api/v0/cluster_metadata") == "restful__api__v0__cluster_metadata"
    assert endpoint_storage_key("/api/serve/applications/") == "restful__api__serve__applications"
    assert endpoint_storage_key("/timezone") == "restful__timezone"
    assert (
        RC.endpoint_key(S, "/api/v0/placement_groups?detail=1&limit=10000")
        == f"cluster-history/raycluster/default/raycluster-hs/{S}/fetched_endpoints/"
        "restful__api__v0__placement_groups?detail=1&limit=10000"
    )
    assert RC.endpoint_key(S, "/api/data/datasets/01000000").endswith(
        "/fetched_endpoints/restful__api__data__datasets__01000000"
    )
    with pytest.raises(LayoutError):
        RC.endpoint_key(S, "/api/../../x")


@pytest.mark.parametrize("bad", ["..", ".", "", "a/b", "a\\b", "s p", "x\n"])
def test_names_that_escape_are_refused(bad: str) -> None:
    with pytest.raises(LayoutError):
        RC.session_prefix(bad)
    with pytest.raises(LayoutError):
        RC.node_prefix(S, bad)
    with pytest.raises(LayoutError):
        RC.job_events_key(S, "n", bad, "f.jsonl")


@pytest.mark.parametrize("bad", ["../x", "a/../b", "/abs", "a//b", "./a", "a\\b", "a/\x00"])
def test_log_paths_that_escape_are_refused(bad: str) -> None:
    with pytest.raises(LayoutError):
        RC.log_key(S, "n", bad)


def test_cluster_refs_are_checked() -> None:
    with pytest.raises(LayoutError):
        ClusterRef("ns", "c", owner_kind="rayjob")
    with pytest.raises(LayoutError):
        ClusterRef("ns", "c", owner_kind="deployment", owner_name="x")
    with pytest.raises(LayoutError):
        ClusterRef("n_s", "c")
    with pytest.raises(LayoutError):
        Layout(ClusterRef("ns", "c"), root="a/../b")


def test_session_time() -> None:
    created = session_created_at(S)
    assert created is not None and created.isoformat() == "2026-01-11T19:38:40.123456"
    assert session_created_at("session_latest") is None


def test_ids_follow_convert_base64_to_hex() -> None:
    assert to_hex("AQAAAA==") == "01000000"
    assert to_hex("cmcbm5cE43g3oMHb5n9bSPku1xjHf68DzoGb8w==") == (
        "72671b9b9704e37837a0c1dbe67f5b48f92ed718c77faf03ce819bf3"
    )
    assert to_hex("ABCDEF01") == "abcdef01"
    assert to_hex("_-8") == "ffef"  # raw URL-safe base64
    with pytest.raises(InvalidID):
        to_hex("not base64!")


def test_protobuf_json_names_of_stored_events() -> None:
    assert camel("creation_request_received_ns") == "creationRequestReceivedNs"
    assert camel("taskId") == "taskId"
    assert camel("gpu_2x") == "gpu2x"
    event = {"event_id": "a", "labels": {"my_key": 1}, "task_definition_event": {"task_id": "t"}}
    assert to_camel(event) == {
        "eventId": "a",
        "labels": {"my_key": 1},  # a map field: its keys are user data
        "taskDefinitionEvent": {"taskId": "t"},
    }
    camel_case = {"eventId": "a"}
    assert to_camel(camel_case) is camel_case


def test_rays_camel_case_of_dashboard_answers() -> None:
    assert ray_camel("job_id") == "jobId"
    assert ray_camel("gpu_2x") == "gpu2X"  # str.title, as Ray's to_camel_case
