"""The feature gate registry.

Experimental behaviour is guarded by named boolean gates so it can ship disabled
and be switched on per deployment with ``--feature-gates``.  Components declare
their gates with :meth:`FeatureGate.add`; the command line then overrides them with
:meth:`FeatureGate.set_from_string`; code asks :meth:`FeatureGate.enabled`.
The semantics follow ``k8s.io/component-base/featuregate``.
"""

from __future__ import annotations

from collections.abc import Mapping

import structlog

from .errors import FeatureGateError
from .parse import parse_feature_gates
from .spec import FeatureSpec, Stage

__all__ = ["FeatureGate"]

_log = structlog.get_logger(__name__)


class FeatureGate:
    """A set of known gates and the values explicitly set for some of them."""

    def __init__(self, specs: Mapping[str, FeatureSpec] | None = None) -> None:
        """Create a registry, optionally adding ``specs`` right away."""
        self._known: dict[str, FeatureSpec] = {}
        self._overrides: dict[str, bool] = {}
        if specs:
            self.add(specs)

    def add(self, specs: Mapping[str, FeatureSpec]) -> None:
        """Declare gates.

        Re-declaring a gate with an identical spec is allowed; with a different spec
        it raises :class:`FeatureGateError` and nothing is added.
        """
        for name, spec in specs.items():
            existing = self._known.get(name)
            if existing is not None and existing != spec:
                raise FeatureGateError(
                    f"feature gate {name} with different spec already exists: {existing}"
                )
        self._known.update(specs)

    def enabled(self, name: str) -> bool:
        """Return the gate's value: the explicit setting, else its default.

        Raises :class:`FeatureGateError` for an unknown gate.
        """
        spec = self._known.get(name)
        if spec is None:
            raise FeatureGateError(f"feature gate {name} is not registered")
        return self._overrides.get(name, spec.default)

    def set(self, values: Mapping[str, bool]) -> None:
        """Set gates explicitly; all-or-nothing.

        Raises :class:`FeatureGateError` for an unknown gate (listing the known ones)
        or for a locked gate set to a non-default value; nothing changes then.
        Setting a GA or deprecated gate logs a warning.
        """
        for name, value in values.items():
            spec = self._known.get(name)
            if spec is None:
                known = ", ".join(sorted(self._known)) or "(none)"
                raise FeatureGateError(
                    f"unrecognized feature gate: {name} (known feature gates: {known})"
                )
            if spec.lock_to_default and value != spec.default:
                raise FeatureGateError(
                    f"cannot set feature gate {name} to {_fmt(value)}, "
                    f"feature is locked to {_fmt(spec.default)}"
                )
        for name, value in values.items():
            self._overrides[name] = value
            stage = self._known[name].stage
            if stage in (Stage.GA, Stage.DEPRECATED):
                _log.warning(
                    "setting a feature gate that will be removed in a future release",
                    feature_gate=name,
                    stage=stage.value,
                    value=value,
                )

    def set_from_string(self, text: str) -> None:
        """Parse ``"A=true,B=false"`` (see :func:`parse_feature_gates`) and :meth:`set` it."""
        self.set(parse_feature_gates(text))

    def known_features(self) -> list[str]:
        """Describe the settable gates for ``--help``, sorted.

        Each line reads ``"Name=true|false (ALPHA - default=false)"``.  GA and
        deprecated gates are omitted, as in Kubernetes.
        """
        return sorted(
            f"{name}=true|false ({spec.stage.value.upper()} - default={_fmt(spec.default)})"
            for name, spec in self._known.items()
            if spec.stage not in (Stage.GA, Stage.DEPRECATED)
        )

    def as_dict(self) -> dict[str, bool]:
        """Return the effective value of every known gate."""
        return {name: self.enabled(name) for name in sorted(self._known)}


def _fmt(value: bool) -> str:
    return "true" if value else "false"
