"""Field metadata shared by the models, the converter and the CRD schema generator.

Every model attribute is declared with :func:`jfield`, which records the attribute's JSON
name and the facts the CRD schema needs (enum, default, minimum, CEL rules, ...). The
attribute itself always defaults to ``None`` ("absent in the JSON object") unless it is a
required field, so that a structured object unstructures back to exactly the dict it came
from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs

META_KEY: Final = "kuberay"

#: Marker for "this field has no CRD default".
NO_DEFAULT: Final = attrs.NOTHING


@attrs.frozen(kw_only=True)
class CelRule:
    """One ``x-kubernetes-validations`` entry."""

    rule: str
    message: str


@attrs.frozen(kw_only=True)
class FieldMeta:
    """Schema facts about one model attribute.

    ``embedded`` names a Kubernetes type (``"core/v1.PodTemplateSpec"``) that is kept as a
    plain dict and emitted in the CRD as an object with
    ``x-kubernetes-preserve-unknown-fields``. ``quantity`` marks a resource.Quantity
    (``int-or-string``); ``date_time`` a metav1.Time string.
    """

    json: str
    required: bool = False
    enum: tuple[str, ...] | None = None
    crd_default: Any = NO_DEFAULT
    minimum: int | None = None
    min_length: int | None = None
    min_items: int | None = None
    int_format: str = "int32"
    embedded: str | None = None
    quantity: bool = False
    date_time: bool = False
    nullable: bool = False
    cel: tuple[CelRule, ...] = ()
    list_type: str | None = None
    list_map_keys: tuple[str, ...] | None = None
    doc: str = ""


def jfield(
    json: str,
    *,
    required: bool = False,
    enum: Sequence[str] | None = None,
    crd_default: Any = NO_DEFAULT,
    minimum: int | None = None,
    min_length: int | None = None,
    min_items: int | None = None,
    int_format: str = "int32",
    embedded: str | None = None,
    quantity: bool = False,
    date_time: bool = False,
    nullable: bool = False,
    cel: Sequence[CelRule] = (),
    list_type: str | None = None,
    list_map_keys: Sequence[str] | None = None,
    doc: str = "",
) -> Any:
    """Declare a model attribute serialized under the JSON key ``json``.

    Optional attributes default to ``None`` (absent); required ones have no default.
    """
    meta = FieldMeta(
        json=json,
        required=required,
        enum=tuple(str(v) for v in enum) if enum is not None else None,
        crd_default=crd_default,
        minimum=minimum,
        min_length=min_length,
        min_items=min_items,
        int_format=int_format,
        embedded=embedded,
        quantity=quantity,
        date_time=date_time,
        nullable=nullable,
        cel=tuple(cel),
        list_type=list_type,
        list_map_keys=tuple(list_map_keys) if list_map_keys is not None else None,
        doc=doc,
    )
    if required:
        return attrs.field(metadata={META_KEY: meta})
    return attrs.field(default=None, metadata={META_KEY: meta})


def extra_field() -> Any:
    """The ``extra`` attribute: JSON keys this model does not know, kept verbatim."""
    return attrs.field(factory=dict, repr=lambda v: repr(v) if v else "{}")


def field_meta(attribute: attrs.Attribute[Any]) -> FieldMeta | None:
    """The :class:`FieldMeta` of a model attribute (``None`` for ``extra``)."""
    meta = attribute.metadata.get(META_KEY)
    return meta if isinstance(meta, FieldMeta) else None


@attrs.define(kw_only=True)
class ApiModel:
    """Base class of every ray.io model (marker used by the converter and schema generator).

    Subclasses are attrs classes whose attributes are declared with :func:`jfield`. The
    inherited ``extra`` dict holds the JSON keys a model does not know (a newer KubeRay's
    fields) and explicit ``null`` values, verbatim; unstructure merges it back, so a read
    followed by a write never loses what a user wrote.
    """

    extra: dict[str, Any] = extra_field()  # noqa: RUF009 - attrs.field() wrapper
