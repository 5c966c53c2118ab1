"""KubeRay's truncation rules for derived names and label values (``CheckName`` /
``CheckLabel``), which the operator's builders and the history server both apply."""

from __future__ import annotations

import pytest

from kuberay.naming import check_label, check_name


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("short", "short"),
        ("a" * 50, "a" * 50),
        ("x" * 10 + "b" * 50, "b" * 50),
        ("1abc", "rabc"),
        ("-abc", "rabc"),
        ("_abc", "rabc"),
        ("$abc", "$abc"),  # '$' is a symbol, not punctuation, for Go's unicode.IsPunct
        ("9" * 60, "r" + "9" * 49),
    ],
)
def test_check_name(raw: str, expected: str) -> None:
    assert check_name(raw) == expected


def test_check_label() -> None:
    assert check_label("a" * 70) == "a" * 63
    assert check_label("." + "a" * 10) == "r" + "a" * 10
    assert check_label("1abc") == "1abc"
