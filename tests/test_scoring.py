"""Scoring rules on known right and wrong answers."""

from __future__ import annotations

import pytest

from whowhen.benchmarks.scoring import (
    SCORERS,
    choice_letter,
    exact,
    multiple_choice,
    numeric,
    parse_number,
    relaxed,
)


@pytest.mark.parametrize(
    ("pred", "gold"),
    [
        ("The answer is 1,200.", "1200"),
        ("#### 72", "72"),
        ("$18.00", "18"),
        ("So x = \\boxed{\\frac{3}{4}}", "0.75"),
        ("3/4", "\\frac{3}{4}"),
        ("50%", "0.5"),
        ("It costs 5 dollars", "5"),
        ("-3", "-3.0"),
    ],
)
def test_numeric_right(pred, gold) -> None:
    assert numeric(pred, gold)


@pytest.mark.parametrize(
    ("pred", "gold"),
    [
        ("10", "1"),
        ("1", "10"),
        ("The answer is 7", "72"),
        ("no idea", "5"),
        (None, "5"),
        ("\\boxed{4} but maybe 5", "5"),
    ],
)
def test_numeric_wrong(pred, gold) -> None:
    assert not numeric(pred, gold)


@pytest.mark.parametrize(
    ("pred", "letter"),
    [
        ("(B)", "B"),
        ("B.", "B"),
        ("Answer: c", "C"),
        ("The answer is (D) because", "D"),
        ("a", "A"),
        ("I think it is E", "E"),
    ],
)
def test_choice_letter(pred, letter) -> None:
    assert choice_letter(pred) == letter


def test_multiple_choice() -> None:
    assert multiple_choice("Answer: (b)", "B") and not multiple_choice("Answer: A", "B")
    assert not multiple_choice("none of these", "B")


@pytest.mark.parametrize(
    ("pred", "gold", "ok"),
    [
        ("104", "100", True),
        ("95.5", "100", True),
        ("106", "100", False),
        ("0", "0", True),
        ("0.1", "0", False),
        ("Paris", "paris", True),
        ("2019", "2018", True),
        ("blue", "red", False),
    ],
)
def test_relaxed_accuracy(pred, gold, ok) -> None:
    assert relaxed(pred, gold) is ok


def test_exact_and_registry() -> None:
    assert exact("  Hello   World. ", "hello world") and not exact("hello", "hell")
    assert set(SCORERS) == {"numeric", "multiple_choice", "relaxed", "exact"}
    assert parse_number("nothing") is None
