"""FeatureGate registry and --feature-gates parsing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kuberay.featuregates import (
    FeatureGate,
    FeatureGateError,
    FeatureSpec,
    Stage,
    parse_bool,
    parse_feature_gates,
)

SPECS = {
    "AlphaThing": FeatureSpec(default=False, stage=Stage.ALPHA),
    "BetaThing": FeatureSpec(default=True, stage=Stage.BETA),
    "DoneThing": FeatureSpec(default=True, stage=Stage.GA, lock_to_default=True),
    "OldThing": FeatureSpec(default=False, stage=Stage.DEPRECATED),
}


@pytest.fixture
def gate() -> FeatureGate:
    return FeatureGate(SPECS)


def test_stage_values() -> None:
    assert [s.value for s in Stage] == ["Alpha", "Beta", "GA", "Deprecated"]


def test_defaults(gate: FeatureGate) -> None:
    assert not gate.enabled("AlphaThing")
    assert gate.enabled("BetaThing")
    assert gate.as_dict() == {
        "AlphaThing": False,
        "BetaThing": True,
        "DoneThing": True,
        "OldThing": False,
    }


def test_unknown_gate_in_enabled_is_an_error(gate: FeatureGate) -> None:
    with pytest.raises(FeatureGateError, match="Nope"):
        gate.enabled("Nope")


def test_set_from_string(gate: FeatureGate) -> None:
    gate.set_from_string("AlphaThing=true,BetaThing=false")
    assert gate.enabled("AlphaThing")
    assert not gate.enabled("BetaThing")


def test_set_from_string_tolerates_whitespace_and_empty_entries(gate: FeatureGate) -> None:
    gate.set_from_string("  AlphaThing = true ,, BetaThing=False , ")
    assert gate.enabled("AlphaThing")
    assert not gate.enabled("BetaThing")


@pytest.mark.parametrize("text", ["", "   ", ",", " , ,"])
def test_empty_string_changes_nothing(gate: FeatureGate, text: str) -> None:
    gate.set_from_string(text)
    assert gate.as_dict() == FeatureGate(SPECS).as_dict()


def test_unknown_gate_message_names_it_and_lists_known_gates(gate: FeatureGate) -> None:
    with pytest.raises(FeatureGateError) as info:
        gate.set_from_string("AlphaThing=true,Bogus=true")
    message = str(info.value)
    assert "unrecognized feature gate: Bogus" in message
    for known in SPECS:
        assert known in message
    assert not gate.enabled("AlphaThing"), "a failed set must change nothing"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("AlphaThing=yes", "invalid value of feature gate AlphaThing=yes"),
        ("AlphaThing=", "invalid value of feature gate AlphaThing="),
        ("AlphaThing", "missing bool value for feature gate AlphaThing"),
        ("=true", "missing feature gate name"),
    ],
)
def test_bad_values_name_the_gate_and_value(gate: FeatureGate, text: str, fragment: str) -> None:
    with pytest.raises(FeatureGateError) as info:
        gate.set_from_string(text)
    assert fragment in str(info.value)


def test_locked_gate_cannot_leave_its_default(gate: FeatureGate) -> None:
    gate.set_from_string("DoneThing=true")  # setting it to its default is fine
    with pytest.raises(FeatureGateError) as info:
        gate.set_from_string("DoneThing=false")
    assert str(info.value) == (
        "cannot set feature gate DoneThing to false, feature is locked to true"
    )
    assert gate.enabled("DoneThing")


def test_set_mapping_is_all_or_nothing(gate: FeatureGate) -> None:
    with pytest.raises(FeatureGateError):
        gate.set({"AlphaThing": True, "DoneThing": False})
    assert not gate.enabled("AlphaThing")


def test_deprecated_gate_can_be_set(gate: FeatureGate) -> None:
    gate.set({"OldThing": True})
    assert gate.enabled("OldThing")


def test_known_features_format(gate: FeatureGate) -> None:
    assert gate.known_features() == [
        "AlphaThing=true|false (ALPHA - default=false)",
        "BetaThing=true|false (BETA - default=true)",
    ]


def test_add_same_spec_twice_is_fine_but_conflicting_spec_is_not() -> None:
    gate = FeatureGate()
    gate.add({"X": FeatureSpec(default=False, stage=Stage.ALPHA)})
    gate.add({"X": FeatureSpec(default=False, stage=Stage.ALPHA)})
    with pytest.raises(FeatureGateError, match="X"):
        gate.add(
            {
                "Y": FeatureSpec(default=False, stage=Stage.ALPHA),
                "X": FeatureSpec(default=True, stage=Stage.BETA),
            }
        )
    assert gate.as_dict() == {"X": False}, "a rejected add must add nothing"


def test_empty_gate_reports_no_known_gates() -> None:
    with pytest.raises(FeatureGateError, match=r"known feature gates: \(none\)"):
        FeatureGate().set_from_string("A=true")


@pytest.mark.parametrize("text", ["1", "t", "T", "TRUE", "true", "True"])
def test_parse_bool_true(text: str) -> None:
    assert parse_bool(text) is True


@pytest.mark.parametrize("text", ["0", "f", "F", "FALSE", "false", "False"])
def test_parse_bool_false(text: str) -> None:
    assert parse_bool(text) is False


@pytest.mark.parametrize("text", ["yes", "no", "", "tRUE", "2", "on"])
def test_parse_bool_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_bool(text)


def test_later_entry_wins() -> None:
    assert parse_feature_gates("A=true,A=false") == {"A": False}


NAMES = st.from_regex(r"[A-Z][A-Za-z0-9]{0,10}", fullmatch=True)


@given(st.dictionaries(NAMES, st.booleans(), max_size=6), st.sampled_from(["", " ", "  "]))
def test_parse_round_trips_any_mapping(values: dict[str, bool], pad: str) -> None:
    text = ",".join(f"{pad}{k}{pad}={pad}{str(v).lower()}{pad}" for k, v in values.items())
    assert parse_feature_gates(text) == values
