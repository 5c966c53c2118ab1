"""Structural-schema checks of embedded Kubernetes objects, as the apiserver makes them.

The typed CRDs (see :mod:`kuberay.api.v1.k8s_schemas`) make the apiserver reject a pod
template with ``ports: "x"`` or ``limits.cpu: "{}"``. The operator checks the same schemas
itself, so an object admitted by an older, untyped CRD (or never sent through an apiserver)
is reported with the same field path instead of crashing a builder. Messages follow the
apiserver's wording. Unknown fields are not errors (the apiserver prunes them); ``null`` is
treated as absent (the apiserver drops nulls of non-nullable fields). On top of the schema,
quantities that match the pattern but cannot be used (more than 1000 digits, a decimal
exponent beyond +-1000) are ``spec`` errors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from kuberay.api.v1.k8s_schemas import embedded_schema_shared
from kuberay.api.v1.validation.errors import FieldError, quantity_problem
from kuberay.gocompat.go_text import go_quote

__all__ = ["check_embedded"]

Schema = Mapping[str, Any]

_JSON_TYPES = {
    "object": "object",
    "array": "array",
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
}


@cache
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _type_ok(expected: str, actual: str) -> bool:
    return actual == expected or (expected == "number" and actual == "integer")


def _shown(value: Any) -> str:
    return go_quote(value) if isinstance(value, str) else repr(value)


def _check(
    value: Any, schema: Schema, path: str, out: list[FieldError], *, item: bool = False
) -> None:
    if value is None and not item:
        return  # the apiserver drops a null field or map value
    actual = "null" if value is None else _json_type(value)
    if schema.get("x-kubernetes-int-or-string"):
        if actual not in ("integer", "string"):
            out.append(
                FieldError(
                    path,
                    f'Invalid value: "{actual}": {path} in body must be of type '
                    f'integer,string: "{actual}"',
                    "crd",
                )
            )
            return
    elif "type" in schema:
        expected = _JSON_TYPES.get(str(schema["type"]), str(schema["type"]))
        if not _type_ok(expected, actual):
            out.append(
                FieldError(
                    path,
                    f'Invalid value: "{actual}": {path} in body must be of type {expected}: '
                    f'"{actual}"',
                    "crd",
                )
            )
            return
    if value is None:
        return
    if isinstance(value, str):
        pattern = schema.get("pattern")
        if pattern is not None and not _pattern(str(pattern)).search(value):
            out.append(
                FieldError(
                    path,
                    f"Invalid value: {_shown(value)}: {path} in body should match '{pattern}'",
                    "crd",
                )
            )
        if pattern is not None and schema.get("x-kubernetes-int-or-string"):
            problem = quantity_problem(value)
            if problem:
                out.append(FieldError(path, f"Invalid value: {_shown(value)}: {problem}", "spec"))
        max_length = schema.get("maxLength")
        if max_length is not None and len(value) > int(max_length):
            out.append(
                FieldError(
                    path,
                    f"Too long: may not be more than {max_length} bytes",
                    "crd",
                )
            )
        enum = schema.get("enum")
        if enum is not None and value not in enum:
            supported = ", ".join(go_quote(str(v)) for v in enum)
            out.append(
                FieldError(
                    path,
                    f"Unsupported value: {go_quote(value)}: supported values: {supported}",
                    "crd",
                )
            )
    if isinstance(value, Mapping):
        properties: Schema = schema.get("properties") or {}
        for key in schema.get("required") or ():
            if value.get(key) is None and "default" not in properties.get(key, {}):
                out.append(FieldError(f"{path}.{key}", "Required value", "crd"))
        for key, item in value.items():
            if key in properties:
                _check(item, properties[key], f"{path}.{key}", out)
            elif isinstance(schema.get("additionalProperties"), Mapping):
                _check(item, schema["additionalProperties"], f"{path}[{key}]", out)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                _check(item, items, f"{path}[{i}]", out, item=True)
            if schema.get("x-kubernetes-list-type") == "map":
                _check_list_map(
                    value, items, schema.get("x-kubernetes-list-map-keys") or (), path, out
                )
            elif schema.get("x-kubernetes-list-type") == "set":
                _check_set(value, path, out)


def _check_list_map(
    value: list[Any], items: Schema, keys: Any, path: str, out: list[FieldError]
) -> None:
    properties: Schema = items.get("properties") or {}
    seen: set[str] = set()
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            continue
        key_values = []
        for key in keys:
            raw = item.get(key)
            if raw is None:
                raw = properties.get(key, {}).get("default")
            key_values.append(raw)
        shown = ",".join(f'"{k}":{_shown(v)}' for k, v in zip(keys, key_values, strict=False))
        marker = repr(key_values)
        if marker in seen:
            out.append(FieldError(f"{path}[{i}]", f"Duplicate value: {{{shown}}}", "crd"))
        seen.add(marker)


def _check_set(value: list[Any], path: str, out: list[FieldError]) -> None:
    seen: set[str] = set()
    for i, item in enumerate(value):
        marker = repr(item)
        if marker in seen:
            out.append(FieldError(f"{path}[{i}]", f"Duplicate value: {_shown(item)}", "crd"))
        seen.add(marker)


def check_embedded(
    embedded: str, value: Any, path: str, *, is_list: bool = False
) -> list[FieldError]:
    """Errors of ``value`` (the embedded type ``embedded``, or a list of it) at ``path``."""
    schema: Schema = embedded_schema_shared(embedded)
    if is_list:
        schema = {"type": "array", "items": schema}
    out: list[FieldError] = []
    _check(value, schema, path, out)
    return out
