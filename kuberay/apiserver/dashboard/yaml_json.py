"""``POST /dashboard/api/yaml-to-json``: one YAML document in, its JSON out, so the page
(which has no YAML parser of its own) can send a pasted manifest to the Kubernetes API.

Nothing of the cluster is read or written: the route only converts. As every route under
``/dashboard/api`` it needs credentials in caller mode (the guard's private tree), so an
anonymous client cannot use the server as a parser.

The input is held to what a manifest is (:func:`yaml_to_json`):

* at most :data:`MAX_BYTES` bytes of UTF-8 (413 beyond), nested at most :data:`MAX_DEPTH`
  levels; converted in a worker thread, so the server keeps answering meanwhile;
* exactly one document, a mapping;
* YAML's safe subset only (PyYAML's safe loader, libyaml's when built with it: a tag such
  as ``!!python/object`` is refused);
* no anchors or aliases: an alias is a shared reference that JSON would copy out in full,
  so a few hundred bytes could expand to gigabytes;
* values JSON can hold: a timestamp becomes its ISO 8601 text (as ``kubectl`` reads it),
  a NaN, an infinity, a binary or a set is refused.

A refusal is a 400 (413) ``Status`` naming the line and column where YAML says so.
"""

from __future__ import annotations

import asyncio
import datetime
import json
from typing import Any

import yaml
from aiohttp import web

from kuberay.apiserver.dashboard.answer import JsonAnswer
from kuberay.apiserver.dashboard.pods import API_PREFIX

YAML_TO_JSON_PATH = API_PREFIX + "/yaml-to-json"
ROUTE_NAME = "dashboard-yaml-to-json"
#: The largest body converted (a RayJob manifest is a few KiB).
MAX_BYTES = 256 * 1024
#: The deepest nesting accepted (a RayJob manifest nests about 15 levels).
MAX_DEPTH = 64
#: libyaml's safe loader when PyYAML was built with it (C: fast on hostile input), else the
#: pure-Python one; both construct only YAML's standard tags.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _refused(code: int, message: str) -> JsonAnswer:
    reason = "RequestEntityTooLarge" if code == 413 else "BadRequest"
    return JsonAnswer.refused(code, reason, message)


def _plain(value: object) -> str:
    if isinstance(value, datetime.date):  # datetime too: a subclass
        return value.isoformat().replace("+00:00", "Z")
    raise TypeError(f"a {type(value).__name__} value has no JSON form")


def _at(mark: Any) -> str:
    """``line L, column C: `` of a YAML mark ("" without one)."""
    return f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""


def _structure_problem(text: str) -> str | None:
    """Why ``text``'s event stream is refused (None: one document, no anchor or alias)."""
    documents = 0
    depth = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                return f"{_at(event.start_mark)}nested deeper than {MAX_DEPTH} levels"
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        if isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                return "more than one YAML document: paste one manifest"
        elif isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            return f"{_at(event.start_mark)}anchors and aliases (& and *) are not accepted"
    return None if documents else "the YAML holds no document"


def yaml_to_json(body: bytes) -> JsonAnswer:
    """The answer for ``body``: 200 with the document's JSON, or a refusal (module doc)."""
    if len(body) > MAX_BYTES:
        return _refused(413, f"the YAML is over {MAX_BYTES // 1024} KiB")
    try:
        text = body.decode("utf-8")
        problem = _structure_problem(text)
        if problem is not None:
            return _refused(400, problem)
        loaded: Any = yaml.load(text, Loader=_LOADER)  # a safe loader
    except UnicodeDecodeError:
        return _refused(400, "the YAML is not UTF-8 text")
    except yaml.MarkedYAMLError as exc:
        return _refused(400, f"{_at(exc.problem_mark)}{exc.problem or exc.context or 'not YAML'}")
    except (yaml.YAMLError, RecursionError):
        return _refused(400, "the text is not YAML the server can read")
    if not isinstance(loaded, dict):
        return _refused(400, "the YAML is not a mapping: a manifest starts with apiVersion, kind")
    try:
        converted = json.dumps(loaded, default=_plain, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as exc:
        return _refused(400, f"the YAML holds a value JSON cannot: {exc}")
    return JsonAnswer(200, converted.encode())


async def _read_capped(request: web.Request) -> bytes:
    """The body, read up to one byte over :data:`MAX_BYTES` (then no further)."""
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_BYTES:
        chunk = await request.content.read(MAX_BYTES + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def add_yaml_route(router: web.UrlDispatcher) -> None:
    """Add ``POST`` :data:`YAML_TO_JSON_PATH` (before the dashboard's files, whose pattern
    would match it too)."""

    async def handle(request: web.Request) -> web.Response:
        if (request.content_length or 0) > MAX_BYTES:
            answer = _refused(413, f"the YAML is over {MAX_BYTES // 1024} KiB")
        else:
            answer = await asyncio.to_thread(yaml_to_json, await _read_capped(request))
        return answer.response()

    router.add_post(YAML_TO_JSON_PATH, handle, name=ROUTE_NAME)
