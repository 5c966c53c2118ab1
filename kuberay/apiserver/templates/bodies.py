"""A request body read as one JSON object, from JSON or YAML, within a size limit.

YAML (by Content-Type: ``application/yaml``, ``application/x-yaml``, ``text/yaml``) is read
as the apiserver reads it (``sigs.k8s.io/yaml``): dates stay strings; anchors and aliases
are expanded into copies, and the expansion is bounded by :data:`MAX_BODY` (a "billion
laughs" document is refused, not expanded); a recursive alias, a binary or set value, NaN or
infinity are refused. Anything else is read as JSON. Nesting deeper than the parsers allow is
refused. Every refusal is :class:`~kuberay.apiserver.templates.errors.BadBody`.
"""

from __future__ import annotations

import json
from typing import Any, Final

import orjson
import yaml

from kuberay.apiserver.templates.errors import BadBody

#: The largest body read or written: the kube-apiserver's own request limit (3 MiB).
MAX_BODY: Final = 3 * 2**20
YAML_MEDIA_TYPES: Final = frozenset({"application/yaml", "application/x-yaml", "text/yaml"})
_TIMESTAMP_TAG: Final = "tag:yaml.org,2002:timestamp"


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader without the timestamp rule (Kubernetes keeps dates as strings)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in rules if tag != _TIMESTAMP_TAG]
    for first, rules in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_EXPANDER: Final = json.JSONEncoder(allow_nan=False, ensure_ascii=False, separators=(",", ":"))


def is_yaml(content_type: str) -> bool:
    """The Content-Type names YAML (parameters such as ``charset`` ignored)."""
    return content_type.split(";", 1)[0].strip().lower() in YAML_MEDIA_TYPES


def _yaml_to_json(raw: bytes) -> bytes:
    """The YAML document as JSON text, its aliases expanded, at most :data:`MAX_BODY` bytes."""
    document = yaml.load(raw, Loader=_Loader)  # a SafeLoader subclass
    size = 0
    chunks: list[str] = []
    for chunk in _EXPANDER.iterencode(document):
        size += len(chunk)
        if size > MAX_BODY:
            raise BadBody(f"the body expands beyond {MAX_BODY} bytes")
        chunks.append(chunk)
    return "".join(chunks).encode()


def decode_body(content_type: str, raw: bytes) -> dict[str, Any]:
    """The body as a fresh dict (nothing shared between its parts)."""
    if len(raw) > MAX_BODY:
        raise BadBody(f"the body is larger than {MAX_BODY} bytes")
    try:
        text = _yaml_to_json(raw) if is_yaml(content_type) else raw
        body = orjson.loads(text)
    except BadBody:
        raise
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        raise BadBody(f"{type(exc).__name__}: {str(exc)[:200]}") from None
    if not isinstance(body, dict):
        raise BadBody("the body is not an object")
    return body


def encode_body(body: dict[str, Any]) -> bytes:
    """``body`` as JSON (at most :data:`MAX_BODY` bytes)."""
    try:
        out = orjson.dumps(body)
    except TypeError as exc:  # orjson.JSONEncodeError: an integer beyond 64 bits
        raise BadBody(str(exc)) from None
    if len(out) > MAX_BODY:
        raise BadBody(f"the body grows beyond {MAX_BODY} bytes")
    return out
