"""A request body read as one JSON object, from JSON or YAML, within a size limit.

YAML (by Content-Type: ``application/yaml``, ``application/x-yaml``, ``text/yaml``) is read
as the apiserver reads it (``sigs.k8s.io/yaml``): dates stay strings; anchors and aliases
are expanded into copies, and the expansion is bounded by :data:`MAX_BODY` (a "billion
laughs" document is refused, not expanded); a recursive alias, a binary or set value, NaN or
infinity are refused. Anything else is read as JSON. Nesting deeper than the parsers allow
(libyaml and orjson: about 1,000 levels; orjson writes at most 254) is refused. A large YAML
body takes seconds of CPU to read: the middleware reads one in a worker thread. Every refusal
is :class:`~kuberay.apiserver.templates.errors.BadBody`.
"""

from __future__ import annotations

import math
from typing import Any, Final

import orjson
import yaml

from kuberay.apiserver.templates.errors import BadBody

#: The largest body read or written: the kube-apiserver's own request limit (3 MiB).
MAX_BODY: Final = 3 * 2**20
YAML_MEDIA_TYPES: Final = frozenset({"application/yaml", "application/x-yaml", "text/yaml"})
_TIMESTAMP_TAG: Final = "tag:yaml.org,2002:timestamp"


_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml bounds nesting


class _Loader(_BaseLoader):  # type: ignore[misc]
    """PyYAML's safe loader without the timestamp rule (Kubernetes keeps dates as strings)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in rules if tag != _TIMESTAMP_TAG]
    for first, rules in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def is_yaml(content_type: str) -> bool:
    """The Content-Type names YAML (parameters such as ``charset`` ignored)."""
    return content_type.split(";", 1)[0].strip().lower() in YAML_MEDIA_TYPES


def _expanded_size(document: Any) -> int:
    """About how many bytes ``document`` takes as JSON with its aliases expanded (each shared
    part is measured once); :class:`BadBody` beyond :data:`MAX_BODY`, for a part that
    contains itself and for NaN or infinity."""
    sizes: dict[int, int] = {}

    def size(node: Any) -> int:
        if isinstance(node, float) and not math.isfinite(node):
            raise BadBody("NaN or infinity")
        if not isinstance(node, (dict, list)):
            return len(node) + 2 if isinstance(node, str) else 8
        key = id(node)
        if key in sizes:
            if sizes[key] < 0:
                raise BadBody("a recursive alias")
            return sizes[key]
        sizes[key] = -1
        parts = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        total = 2 + sum(size(part) + 1 for part in parts)
        if total > MAX_BODY:
            raise BadBody(f"the body expands beyond {MAX_BODY} bytes")
        sizes[key] = total
        return total

    return size(document)


def _yaml_to_json(raw: bytes) -> bytes:
    """The YAML document as JSON text, its aliases expanded into copies."""
    document = yaml.load(raw, Loader=_Loader)  # a SafeLoader
    _expanded_size(document)
    return orjson.dumps(document, option=orjson.OPT_NON_STR_KEYS)


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
