"""camelCase JSON dicts <-> attrs models, through a cattrs :data:`converter`.

Rules (both directions are exact inverses on anything a user can write):

* every model attribute maps to the JSON key recorded in its field metadata;
* an attribute that is ``None`` is omitted on unstructure (Go ``omitempty`` for pointers and
  our "absent" marker), so a field the user did not write never appears, and an explicit
  default the user did write stays;
* JSON keys a model does not know, and explicit ``null`` values, are kept verbatim in the
  model's ``extra`` dict and merged back on unstructure;
* embedded Kubernetes objects (``dict[str, Any]``) are copied verbatim;
* scalars are checked strictly (no ``"3"`` -> ``3`` coercion); integers given for ``float``
  fields stay integers, so ``1`` does not come back as ``1.0``;
* enum-typed fields must hold one of the values their CRD schema allows.

Errors are reported as :class:`StructureError` carrying every problem found, each with the
JSON path of the offending value (``spec.workerGroupSpecs[0].groupName``).
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs
import cattrs

from kuberay.api.v1._meta import ApiModel, FieldMeta, field_meta

__all__ = [
    "PathError",
    "StructureError",
    "converter",
    "copy_json",
    "join_path",
    "model_fields",
    "structure",
    "unstructure",
]

M = TypeVar("M", bound=ApiModel)
StructureFn = Callable[[Any], Any]
UnstructureFn = Callable[[Any], Any]


@attrs.frozen
class PathError:
    """One problem found while structuring: where (JSON path) and what."""

    path: str
    message: str


class StructureError(ValueError):
    """A dict could not be turned into a model; ``errors`` lists every problem found."""

    def __init__(self, errors: list[PathError]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{e.path or '<root>'}: {e.message}" for e in errors))

    def prefixed(self, prefix: str) -> StructureError:
        """The same errors with ``prefix`` prepended to every path."""
        return StructureError(
            [PathError(join_path(prefix, e.path), e.message) for e in self.errors]
        )


def join_path(prefix: str, suffix: str) -> str:
    """Join JSON path segments: ``a`` + ``b`` -> ``a.b``; ``a`` + ``[0]`` -> ``a[0]``."""
    if not prefix:
        return suffix
    if not suffix:
        return prefix
    if suffix.startswith("["):
        return prefix + suffix
    return f"{prefix}.{suffix}"


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON-like value (dicts, lists, scalars); much faster than deepcopy."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _fail(message: str) -> StructureError:
    return StructureError([PathError("", message)])


# --- scalar hooks ---------------------------------------------------------------------------
def _structure_str(value: Any) -> str:
    if not isinstance(value, str):
        raise _fail(f"expected a string, got {_type_name(value)}")
    return value


def _structure_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _fail(f"expected a boolean, got {_type_name(value)}")
    return value


def _structure_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(f"expected an integer, got {_type_name(value)}")
    return value


def _structure_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(f"expected a number, got {_type_name(value)}")
    return value


def _structure_int_or_string(value: Any) -> str | int:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _fail(f"expected an integer or a string, got {_type_name(value)}")
    return value


def _structure_any(value: Any) -> Any:
    return copy_json(value)


def _identity(value: Any) -> Any:
    return value


def _unstructure_enum(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def _make_enum_structure(cls: type[enum.Enum]) -> StructureFn:
    allowed = ", ".join(repr(m.value) for m in cls)

    def structure_enum(value: Any) -> Any:
        if not isinstance(value, str):
            raise _fail(f"expected a string, got {_type_name(value)}")
        try:
            return cls(value)
        except ValueError:
            raise _fail(f"unsupported value {value!r}: supported values: {allowed}") from None

    return structure_enum


# --- type compilation -----------------------------------------------------------------------
_NONE_TYPE = type(None)


def _strip_optional(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        args = tuple(a for a in typing.get_args(tp) if a is not _NONE_TYPE)
        if len(args) == 1:
            return args[0]
        return typing.Union[args]  # noqa: UP007 - rebuilding a union from runtime args
    return tp


def _is_int_or_string(tp: Any) -> bool:
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        return set(typing.get_args(tp)) == {str, int}
    return False


def _compile_structure(tp: Any) -> StructureFn:
    tp = _strip_optional(tp)
    if tp is Any:
        return _structure_any
    if tp is str:
        return _structure_str
    if tp is bool:
        return _structure_bool
    if tp is int:
        return _structure_int
    if tp is float:
        return _structure_float
    if _is_int_or_string(tp):
        return _structure_int_or_string
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _make_enum_structure(tp)
    if isinstance(tp, type) and issubclass(tp, ApiModel):
        return _model_structure_fn(tp)
    origin = typing.get_origin(tp)
    if origin is list:
        (item_tp,) = typing.get_args(tp)
        return _make_list_structure(_compile_structure(item_tp))
    if origin is dict:
        key_tp, value_tp = typing.get_args(tp)
        if key_tp is not str:
            raise TypeError(f"only str-keyed dicts are supported, got {tp!r}")
        return _make_dict_structure(_compile_structure(value_tp))
    raise TypeError(f"no structure hook for {tp!r}")


def _compile_unstructure(tp: Any) -> UnstructureFn:
    tp = _strip_optional(tp)
    if tp is Any:
        return copy_json
    if tp in (str, bool, int, float) or _is_int_or_string(tp):
        return _identity
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _unstructure_enum
    if isinstance(tp, type) and issubclass(tp, ApiModel):
        return _model_unstructure_fn(tp)
    origin = typing.get_origin(tp)
    if origin is list:
        (item_tp,) = typing.get_args(tp)
        item_fn = _compile_unstructure(item_tp)
        return lambda value: [item_fn(v) for v in value]
    if origin is dict:
        _, value_tp = typing.get_args(tp)
        value_fn = _compile_unstructure(value_tp)
        return lambda value: {k: value_fn(v) for k, v in value.items()}
    raise TypeError(f"no unstructure hook for {tp!r}")


def _make_list_structure(item_fn: StructureFn) -> StructureFn:
    def structure_list(value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise _fail(f"expected an array, got {_type_name(value)}")
        out: list[Any] = []
        errors: list[PathError] = []
        for i, item in enumerate(value):
            if item is None:
                errors.append(PathError(f"[{i}]", "null is not allowed in this list"))
                continue
            try:
                out.append(item_fn(item))
            except StructureError as exc:
                errors.extend(exc.prefixed(f"[{i}]").errors)
        if errors:
            raise StructureError(errors)
        return out

    return structure_list


def _make_dict_structure(value_fn: StructureFn) -> StructureFn:
    def structure_dict(value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise _fail(f"expected an object, got {_type_name(value)}")
        out: dict[str, Any] = {}
        errors: list[PathError] = []
        for key, item in value.items():
            if not isinstance(key, str):
                errors.append(PathError(f"[{key}]", "object keys must be strings"))
                continue
            if item is None and value_fn is not _structure_any:
                errors.append(PathError(f"[{key}]", "null is not allowed here"))
                continue
            try:
                out[key] = value_fn(item)
            except StructureError as exc:
                errors.extend(exc.prefixed(f"[{key}]").errors)
        if errors:
            raise StructureError(errors)
        return out

    return structure_dict


# --- models ---------------------------------------------------------------------------------
@attrs.frozen
class ModelField:
    """A model attribute as the converter and the schema generator see it."""

    name: str
    json: str
    type: Any
    meta: FieldMeta


_FIELDS_CACHE: dict[type[ApiModel], tuple[ModelField, ...]] = {}
_STRUCTURE_CACHE: dict[type[ApiModel], StructureFn] = {}
_UNSTRUCTURE_CACHE: dict[type[ApiModel], UnstructureFn] = {}


def model_fields(cls: type[ApiModel]) -> tuple[ModelField, ...]:
    """The JSON-mapped attributes of a model class, in declaration order."""
    cached = _FIELDS_CACHE.get(cls)
    if cached is not None:
        return cached
    attrs.resolve_types(cls)
    out: list[ModelField] = []
    for attribute in attrs.fields(cls):
        meta = field_meta(attribute)
        if meta is None:
            continue
        out.append(ModelField(attribute.name, meta.json, attribute.type, meta))
    result = tuple(out)
    _FIELDS_CACHE[cls] = result
    return result


def _model_structure_fn(cls: type[ApiModel]) -> StructureFn:
    cached = _STRUCTURE_CACHE.get(cls)
    if cached is not None:
        return cached

    # Compiled lazily so that recursive/forward references resolve after definition.
    compiled: dict[str, tuple[ModelField, StructureFn, frozenset[str] | None]] = {}

    def compile_fields() -> None:
        for mf in model_fields(cls):
            allowed = frozenset(mf.meta.enum) if mf.meta.enum is not None else None
            compiled[mf.json] = (mf, _compile_structure(mf.type), allowed)

    def structure_model(value: Any) -> ApiModel:
        if not compiled:
            compile_fields()
        if not isinstance(value, Mapping):
            raise _fail(f"expected an object, got {_type_name(value)}")
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        errors: list[PathError] = []
        failed: set[str] = set()
        for key, item in value.items():
            entry = compiled.get(key) if isinstance(key, str) else None
            if entry is None:
                extra[str(key)] = copy_json(item)
                continue
            mf, fn, allowed = entry
            if item is None:
                # An explicit null: kept verbatim so that it round-trips.
                extra[key] = None
                continue
            try:
                result = fn(item)
            except StructureError as exc:
                errors.extend(exc.prefixed(key).errors)
                failed.add(mf.name)
                continue
            if allowed is not None and str(result) not in allowed:
                options = ", ".join(repr(a) for a in mf.meta.enum or ())
                errors.append(
                    PathError(key, f"unsupported value {item!r}: supported values: {options}")
                )
                failed.add(mf.name)
                continue
            kwargs[mf.name] = result
        for mf, _, _ in compiled.values():
            if mf.meta.required and mf.name not in kwargs and mf.name not in failed:
                errors.append(PathError(mf.json, "Required value"))
        if errors:
            raise StructureError(errors)
        return cls(**kwargs, extra=extra)

    _STRUCTURE_CACHE[cls] = structure_model
    return structure_model


def _model_unstructure_fn(cls: type[ApiModel]) -> UnstructureFn:
    cached = _UNSTRUCTURE_CACHE.get(cls)
    if cached is not None:
        return cached
    compiled: list[tuple[str, str, UnstructureFn]] = []

    def unstructure_model(value: Any) -> dict[str, Any]:
        if not compiled:
            compiled.extend(
                (mf.name, mf.json, _compile_unstructure(mf.type)) for mf in model_fields(cls)
            )
        out: dict[str, Any] = {}
        for name, json_name, fn in compiled:
            item = getattr(value, name)
            if item is not None:
                out[json_name] = fn(item)
        for key, item in value.extra.items():
            if key not in out:
                out[key] = copy_json(item)
        return out

    _UNSTRUCTURE_CACHE[cls] = unstructure_model
    return unstructure_model


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, ApiModel)


def _is_enum(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.Enum)


def _as_cattrs_hook(fn: StructureFn) -> Callable[[Any, Any], Any]:
    def hook(value: Any, _type: Any) -> Any:
        return fn(value)

    return hook


def _cattrs_model_structure_hook(tp: type[ApiModel]) -> Callable[[Any, Any], Any]:
    return _as_cattrs_hook(_model_structure_fn(tp))


def _cattrs_enum_structure_hook(tp: type[enum.Enum]) -> Callable[[Any, Any], Any]:
    return _as_cattrs_hook(_make_enum_structure(tp))


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter()
    for tp, s_fn in (
        (str, _structure_str),
        (bool, _structure_bool),
        (int, _structure_int),
        (float, _structure_float),
    ):
        conv.register_structure_hook(tp, _as_cattrs_hook(s_fn))
    conv.register_structure_hook_factory(_is_model, _cattrs_model_structure_hook)
    conv.register_unstructure_hook_factory(_is_model, _model_unstructure_fn)
    conv.register_structure_hook_factory(_is_enum, _cattrs_enum_structure_hook)
    conv.register_unstructure_hook_factory(_is_enum, lambda _tp: _unstructure_enum)
    return conv


#: The cattrs converter for every ray.io/v1 model (strict, path-reporting hooks).
converter: cattrs.Converter = _make_converter()


def structure(kind_cls: type[M], obj: Mapping[str, Any]) -> M:
    """Build a model of type ``kind_cls`` from a camelCase dict (e.g. an apiserver object).

    Raises :class:`StructureError` listing every problem (with JSON paths).
    """
    result = converter.structure(obj, kind_cls)
    assert isinstance(result, kind_cls)
    return result


def unstructure(model: ApiModel) -> dict[str, Any]:
    """The camelCase dict of a model; ``None`` attributes are omitted, ``extra`` merged back."""
    result = converter.unstructure(model)
    assert isinstance(result, dict)
    return result
