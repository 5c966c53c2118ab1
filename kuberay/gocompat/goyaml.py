"""Read YAML the way KubeRay does (``sigs.k8s.io/yaml`` on go-yaml v2) and print it as Go JSON.

KubeRay turns a RayJob's ``runtimeEnvYAML`` into JSON with ``yaml.YAMLToJSON``. Go-yaml v2
resolves plain scalars with YAML 1.1 rules that differ from PyYAML's: ``y``/``Y``/``n``/``N``
are booleans, ``1e3``, ``0x1F``, ``0o17``, ``0b101``, ``017`` and ``1_000`` are numbers, there
are no sexagesimal numbers, and timestamps stay strings. Map keys are then turned into
strings (``true``, ``1``, shortest float32 ``%g``), and ``encoding/json`` writes the result with
sorted keys, Go number formatting and HTML-safe string escapes.

:func:`load_go_yaml` returns that JSON-able value; :func:`marshal_go_json` prints it like Go.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import yaml

from .go_text import go_quote, to_float32
from .gojson import GoJSONError, format_go_float, marshal_value
from .gotime import format_rfc3339

__all__ = ["GoYAMLError", "go_json_number", "load_go_yaml", "marshal_go_json"]


class GoYAMLError(ValueError):
    """The text is not YAML KubeRay can convert to JSON."""


_PLAIN_TAG: Final = "tag:kuberay.python,2026:go-plain"
_BOOLS: Final = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE"), True),
    **dict.fromkeys(("on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE"), False),
    **dict.fromkeys(("off", "Off", "OFF"), False),
}
_NULLS: Final = frozenset(("", "~", "null", "Null", "NULL"))
_SPECIAL_FLOATS: Final = {
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_YAML_STYLE_FLOAT: Final = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_GO_FLOAT: Final = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|[-+]?(?i:inf|infinity|nan)")
_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1
_UINT64_MAX: Final = (1 << 64) - 1


def _go_parse_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)`` then ``ParseUint`` (prefixes 0x/0o/0b/0, a sign)."""
    sign = 1
    body = text
    if body[:1] in "+-":
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if not body:
        return None
    base = 10
    lowered = body.lower()
    if lowered.startswith(("0x", "0o", "0b")):
        base = {"x": 16, "o": 8, "b": 2}[lowered[1]]
        body = body[2:]
    elif len(body) > 1 and body[0] == "0":
        base = 8
        body = body[1:]
    if not body or not all(ch in "0123456789abcdefABCDEF"[: base + (base > 10) * 6] for ch in body):
        return None
    value = sign * int(body, base)
    if _INT64_MIN <= value <= _INT64_MAX:
        return value
    if not text.startswith(("+", "-")) and value <= _UINT64_MAX:
        return value  # strconv.ParseUint (no sign allowed)
    return None


def _resolve_plain(text: str) -> object:
    """go-yaml v2 ``resolve("", text)`` for an untagged plain scalar."""
    if text in _NULLS:
        return None
    first = text[0]
    if first in "yYnNtTfFoO~":
        return _BOOLS.get(text, text)
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    if first == ".":
        if _GO_FLOAT.fullmatch(text) and not math.isinf(float(text)):
            return float(text)
        return text
    if first in "+-0123456789":
        plain = text.replace("_", "")
        number = _go_parse_int(plain)
        if number is not None:
            return number
        if _YAML_STYLE_FLOAT.fullmatch(plain):
            value = float(plain)
            if not math.isinf(value):  # Go's ParseFloat fails on overflow: a string then
                return value
    return text


@functools.cache
def _go_yaml_loader() -> type[yaml.SafeLoader]:
    """A SafeLoader whose plain scalars resolve like go-yaml v2 (PyYAML is imported on the
    first use: an operator without RayJobs never loads it)."""
    import yaml

    class GoYAMLLoader(yaml.SafeLoader):
        """SafeLoader whose plain scalars resolve like go-yaml v2."""

    GoYAMLLoader.yaml_implicit_resolvers = {}
    GoYAMLLoader.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"])
    GoYAMLLoader.add_implicit_resolver(_PLAIN_TAG, re.compile(r"", re.S), None)
    GoYAMLLoader.add_constructor(_PLAIN_TAG, _construct_plain)
    return GoYAMLLoader


def _construct_plain(loader: yaml.SafeLoader, node: yaml.Node) -> object:
    import yaml

    assert isinstance(node, yaml.ScalarNode)
    return _resolve_plain(loader.construct_scalar(node))


def _go_syntax(value: object) -> str:
    """Go ``%+#v`` of a decoded YAML scalar (composite values are shown Python-style)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, int | float):
        return str(value)
    return repr(value)


def _key_string(key: object, value: object) -> str:
    """``sigs.k8s.io/yaml``'s conversion of a YAML map key to a JSON object key."""
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        if math.isnan(key):
            return ".nan"
        if math.isinf(key):
            return ".inf" if key > 0 else "-.inf"
        return _format_g32(key)
    if isinstance(key, str):
        return key
    key_type = "%!s(<nil>)" if key is None else type(key).__name__
    raise GoYAMLError(
        f"unsupported map key of type: {key_type}, key: {_go_syntax(key)}, "
        f"value: {_go_syntax(value)}"
    )


def _format_g32(value: float) -> str:
    """``strconv.FormatFloat(value, 'g', -1, 32)`` (shortest digits, exponent from 1e+06)."""
    f32 = to_float32(value)
    if f32 == 0:
        return "-0" if math.copysign(1.0, f32) < 0 else "0"
    text = repr(f32)
    for precision in range(1, 10):
        text = f"{f32:.{precision - 1}e}"
        if to_float32(float(text)) == f32:
            break
    mantissa, exponent_text = text.split("e")
    exponent = int(exponent_text)
    if exponent < -4 or exponent >= 6:
        sign = "-" if exponent < 0 else "+"
        return f"{mantissa}e{sign}{abs(exponent):02d}"
    return f"{float(text):.{max(precision - 1 - exponent, 0)}f}"


def _jsonable(value: object) -> object:
    if isinstance(value, Mapping):
        return {_key_string(k, v): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return format_rfc3339(value)
    if isinstance(value, bytes):
        raise GoYAMLError("binary YAML values are not supported")
    return value


def load_go_yaml(text: str) -> object:
    """``runtimeEnvYAML`` as the JSON value ``yaml.YAMLToJSON`` produces (``None`` for null)."""
    import yaml

    loader = _go_yaml_loader()
    try:
        # Like go-yaml's Unmarshal, only the first document of a stream counts.
        value = next(iter(yaml.load_all(text, Loader=loader)), None)
    except yaml.YAMLError as err:
        raise GoYAMLError(f"yaml: {err}") from err
    return _jsonable(value)


def _sorted(value: object) -> object:
    if isinstance(value, Mapping):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_sorted(v) for v in value]
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        raise GoYAMLError(f"json: unsupported value: {_format_nonfinite(value)}")
    return value


def _format_nonfinite(value: float) -> str:
    """Go's ``%v`` of NaN / ±Inf."""
    if math.isnan(value):
        return "NaN"
    return "+Inf" if value > 0 else "-Inf"


def marshal_go_json(value: object) -> str:
    """Go ``json.Marshal`` of a decoded JSON value: sorted keys, compact, HTML-safe."""
    ordered = _sorted(value)
    try:
        return marshal_value(ordered)
    except GoJSONError as err:
        raise GoYAMLError(str(err)) from err


def go_json_number(value: object) -> Any:
    """A JSON number as Go reads it into ``interface{}`` (float64), for ``json.dumps``.

    Integral values below 1e21 come back as ``int`` so they print without a fraction, like Go.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    as_float = float(value)
    if as_float.is_integer() and abs(as_float) < 1e21:
        return int(format_go_float(as_float))  # Go's digits: 2**64 prints 18446744073709552000
    return as_float
