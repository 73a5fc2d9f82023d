"""Official-style answer scoring rules, shared by every benchmark and by dataset-file
benchmarks that name one in config.

- `numeric`: GSM8K/MATH style; the last number (or a \\boxed{...} value) after removing
  $, commas, units and LaTeX noise; fractions and percentages understood; equal to 1e-6.
- `multiple_choice`: the chosen option letter, however it is written ("(B)", "B.",
  "Answer: b").
- `relaxed`: ChartQA relaxed accuracy; numbers within 5% of the gold value, else exact.
- `exact`: whitespace- and case-normalised string equality.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

_BOXED = re.compile(r"\\boxed\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?%?")
_LATEX_FRAC = re.compile(r"\\[dt]?frac\{(-?[\d.]+)\}\{(-?[\d.]+)\}")


def _clean(text: str) -> str:
    text = text.replace(",", "").replace("$", "").replace("\\!", "").replace("\\%", "%")
    text = _LATEX_FRAC.sub(r"\1/\2", text)
    return re.sub(r"\\(left|right|,|;|text\{[^}]*\})", "", text)


def parse_number(text: str | None) -> float | None:
    """The answer's number: a \\boxed{} value if present, else the last number in the text."""
    if text is None:
        return None
    text = str(text)
    boxed = _BOXED.findall(text)
    candidates = _NUMBER.findall(_clean(boxed[-1] if boxed else text))
    if not candidates:
        return None
    token = candidates[-1].replace(" ", "")
    percent = token.endswith("%")
    token = token.rstrip("%")
    try:
        value = float(Fraction(token)) if "/" in token else float(token)
    except (ValueError, ZeroDivisionError):
        return None
    return value / 100 if percent else value


def numeric(pred: str | None, gold: str) -> bool:
    p, g = parse_number(pred), parse_number(gold)
    if p is None or g is None:
        return exact(pred, gold)
    return abs(p - g) <= 1e-6 * max(1.0, abs(g))


def choice_letter(text: str | None) -> str | None:
    """The option letter chosen in `text` (the last standalone A-J, preferring 'Answer: X')."""
    if text is None:
        return None
    stated = re.search(r"answer\s*(?:is)?\s*[:\uff1a]?\s*\(?([A-Ja-j])\b", text, re.I)
    if stated:
        return stated.group(1).upper()
    letters = re.findall(r"(?<![A-Za-z])\(?([A-J])\)?(?![A-Za-z])", text.strip())
    if letters:
        return letters[-1].upper()
    single = text.strip().strip("().").upper()
    return single if len(single) == 1 and single in "ABCDEFGHIJ" else None


def multiple_choice(pred: str | None, gold: str) -> bool:
    letter = choice_letter(pred)
    return letter is not None and letter == choice_letter(gold)


def relaxed(pred: str | None, gold: str, tolerance: float = 0.05) -> bool:
    p, g = parse_number(pred), parse_number(gold)
    if p is not None and g is not None and re.fullmatch(r"\s*[-\d.,%$]+\s*", str(gold)):
        return p == g if g == 0 else abs(p - g) / abs(g) <= tolerance
    return exact(pred, gold)


def exact(pred: str | None, gold: str) -> bool:
    if pred is None:
        return False

    def norm(s: str) -> str:
        return " ".join(str(s).casefold().split()).strip(" .")

    return norm(pred) == norm(gold)


SCORERS: dict[str, Callable[[str | None, str], bool]] = {
    "numeric": numeric,
    "multiple_choice": multiple_choice,
    "relaxed": relaxed,
    "exact": exact,
}
