"""Parsing of the ``--feature-gates`` flag syntax.

The syntax is Kubernetes': ``Name=bool[,Name=bool...]`` with booleans spelled as
Go's ``strconv.ParseBool`` accepts them, so operators can reuse the flag values they
already pass to Kubernetes components.
"""

from __future__ import annotations

from kuberay.gocompat.goutil import go_parse_bool as parse_bool

from .errors import FeatureGateError

__all__ = ["parse_bool", "parse_feature_gates"]


def parse_feature_gates(text: str) -> dict[str, bool]:
    """Parse ``"A=true, B=false"`` into ``{"A": True, "B": False}``.

    Whitespace around names and values is ignored, as are empty entries, so ``""``
    yields ``{}``.  A later entry for the same name wins.  Raises
    :class:`FeatureGateError` naming the gate for a missing or non-boolean value.
    Whether the names are known is not checked here.
    """
    result: dict[str, bool] = {}
    for entry in text.split(","):
        if not entry.strip():
            continue
        name, sep, raw_value = entry.partition("=")
        name = name.strip()
        value = raw_value.strip()
        if not name:
            raise FeatureGateError(f"missing feature gate name in {entry.strip()!r}")
        if not sep:
            raise FeatureGateError(f"missing bool value for feature gate {name}")
        try:
            result[name] = parse_bool(value)
        except ValueError:
            raise FeatureGateError(
                f"invalid value of feature gate {name}={value}: must be true or false"
            ) from None
    return result
