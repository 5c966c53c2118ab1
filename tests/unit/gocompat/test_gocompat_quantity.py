"""``Quantity`` against apimachinery's results for the same strings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kuberay.gocompat.gojson import format_go_float
from kuberay.gocompat.quantity import Quantity, QuantityError, go_pow10

DATA = Path(__file__).parents[1] / "controllers" / "data"
VECTORS: list[dict[str, Any]] = json.loads((DATA / "go_quantity_vectors.json").read_text())


@pytest.mark.parametrize("vector", VECTORS, ids=[repr(v["in"]) for v in VECTORS])
def test_matches_apimachinery(vector: dict[str, Any]) -> None:
    text = vector["in"]
    if vector.get("err"):
        with pytest.raises(QuantityError):
            Quantity.parse(text)
        return
    quantity = Quantity.parse(text)
    assert str(quantity) == vector["str"]
    assert str(quantity.plus(Quantity())) == vector["canon"]
    if abs(quantity.exact) < 2**63:  # Go's overflow result depends on its internal form
        assert quantity.value() == vector["value"]
    assert format_go_float(quantity.approximate_float()) == vector["float"]
    assert str(quantity.plus(quantity)) == vector["double"]
    assert str(quantity.times(3)) == vector["times3"]


def test_json_numbers() -> None:
    assert str(Quantity.from_json(3)) == "3"
    assert str(Quantity.from_json(0.5)) == "500m"
    assert str(Quantity.from_json(2.0)) == "2"
    with pytest.raises(QuantityError):
        Quantity.from_json(True)


def test_sum_keeps_first_nonzero_format() -> None:
    total = Quantity.parse("1").plus(Quantity.parse("500m").times(3))
    assert str(total) == "2500m"
    assert str(Quantity.parse("1Gi").times(4)) == "4Gi"
    assert str(Quantity().plus(Quantity.parse("2Gi"))) == "2Gi"


def test_pow10_matches_go_tables() -> None:
    assert go_pow10(0) == 1.0
    assert go_pow10(-1) == 0.1
    assert go_pow10(-9) == 1e-9
    assert go_pow10(40) == 1e40
