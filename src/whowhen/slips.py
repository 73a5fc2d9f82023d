"""Generic slip helpers every benchmark's operators may use: a realistic mistyped number,
and the one operator that fits any benchmark (a mistyped numeric final answer).

Why here, below the benchmark packages: operators of several benchmarks mistype numbers
the same way, and the planning machinery (`operators`, `injection.plan`) sits
above the packages, so it cannot be what they import.
"""

from __future__ import annotations

import random
import re

from whowhen.runtime import Action
from whowhen.tools import final_action, format_number


def typo(number: str, rng: random.Random) -> str:
    """A realistic mistyping of a number: swap two adjacent digits, or be off by one/ten."""
    digits = number.lstrip("-")
    swaps = [
        i
        for i in range(len(digits) - 1)
        if digits[i] != digits[i + 1] and not (i == 0 and digits[1] == "0")
    ]
    if swaps and "." not in digits and rng.random() < 0.6:
        i = rng.choice(swaps)
        digits = digits[:i] + digits[i + 1] + digits[i] + digits[i + 2 :]
        return ("-" if number.startswith("-") else "") + digits
    value = float(number) + rng.choice([-10, -1, 1, 10])
    if value <= 0:
        value = float(number) + 1
    return format_number(value)


NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w]|\.\d)")
"""A number standing alone in a text (not part of a word, an id or a longer number)."""
_VERIFIED = re.compile(r"^I checked all (\d+) calculations against the problem")


def wrong_final_answer(action: Action, rng: random.Random) -> Action | None:
    """action.wrong_tool_argument on `final_answer`: the numeric answer, mistyped, and
    stated so in the step's text too (the agent believes the wrong number: the error shows
    only against the history, never as a step that contradicts itself).

    Only the shared `final_action` wordings and texts whose one number is the answer are
    rewritten: a benchmark whose answer text also shows how the answer was reached (a
    tally, a list of values) has operators of its own, which keep that account
    consistent."""
    if action.tool != "final_answer":
        return None
    answer = str((action.tool_args or {}).get("answer", ""))
    try:
        float(answer)
    except ValueError:
        return None
    checked = _VERIFIED.match(action.content)
    verified = int(checked.group(1)) if checked else None
    wrong = typo(answer, rng)
    if action.content == final_action(action.actor, answer, verified).content:
        return final_action(action.actor, wrong, verified)
    if NUMBER.findall(action.content) in ([], [answer]):  # the answer, said once, or not
        text = NUMBER.sub(lambda _: wrong, action.content)
        return Action(action.actor, text, "final_answer", {"answer": wrong})
    return None


GENERIC = {"action.wrong_tool_argument": wrong_final_answer}
"""Mode -> operator that applies to any benchmark's actions (tried before the packages')."""
