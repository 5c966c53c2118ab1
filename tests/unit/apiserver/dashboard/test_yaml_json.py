"""The dashboard's YAML-to-JSON route: one manifest converted; more than one document, a
non-mapping, a Python tag, an alias bomb, an oversized body and values JSON cannot hold
refused with a Status naming why; a token needed in caller mode."""

from __future__ import annotations

import json

import aiohttp
import pytest

from kuberay.apiserver.dashboard.yaml_json import MAX_BYTES, yaml_to_json

MANIFEST = b"""\
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: nightly
spec:
  entrypoint: python -c 'print(1)'
  shutdownAfterJobFinishes: maybe
  ttlSecondsAfterFinished: 60
  runtimeEnvYAML: |
    pip: [numpy]
  note: 2026-01-02T03:04:05Z
"""

ALIAS_BOMB = b"""\
a: &a [x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: [*c, *c, *c, *c, *c, *c, *c, *c, *c]
"""


def test_a_manifest_becomes_its_json_values_as_written() -> None:
    answer = yaml_to_json(MANIFEST)
    assert answer.status == 200
    assert json.loads(answer.body) == {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "nightly"},
        "spec": {
            "entrypoint": "python -c 'print(1)'",
            "shutdownAfterJobFinishes": "maybe",  # left for the schema to refuse
            "ttlSecondsAfterFinished": 60,
            "runtimeEnvYAML": "pip: [numpy]\n",
            "note": "2026-01-02T03:04:05Z",  # a timestamp stays its text
        },
    }


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"kind: A\n---\nkind: B\n", "more than one YAML document"),
        (b"- a\n- b\n", "not a mapping"),
        (b"just text\n", "not a mapping"),
        (b"", "no document"),
        (b"a: !!python/object/apply:os.system ['true']\n", "line 1, column 4"),
        (b"!!python/object:object {}\n", "line 1"),
        (ALIAS_BOMB, "anchors and aliases"),
        (b"a: .nan\n", "JSON cannot"),
        (b"a: !!binary aGk=\n", "JSON cannot"),
        (b"a: [b\n", "line 2"),
        (b"a: \xff\n", "not UTF-8"),
        (b"a: " + b"[" * 100 + b"]" * 100, "nested deeper than 64"),
        (b"a: " + b"[" * 50000 + b"]" * 50000, "line 1"),
    ],
)
def test_what_is_not_one_plain_manifest_is_refused_with_the_reason(body: bytes, said: str) -> None:
    answer = yaml_to_json(body)
    status = json.loads(answer.body)
    assert answer.status == 400 and status["kind"] == "Status"
    assert said in status["message"]


def test_a_body_over_the_cap_is_refused_unparsed() -> None:
    answer = yaml_to_json(b"a: " + b"x" * MAX_BYTES)
    assert answer.status == 413


async def test_the_route_converts_for_a_caller_with_a_token_only(server: str) -> None:
    url = f"{server}/dashboard/api/yaml-to-json"
    token = {"Authorization": "Bearer t"}
    async with aiohttp.ClientSession() as session:
        async with session.post(url, data=b"kind: RayJob\n") as r:
            assert r.status == 401  # caller mode: not a parser for anyone
        async with session.post(url, data=b"kind: RayJob\n", headers=token) as r:
            assert r.status == 200 and await r.json() == {"kind": "RayJob"}
        async with session.post(url, data=b"x" * (MAX_BYTES + 1), headers=token) as r:
            assert r.status == 413
