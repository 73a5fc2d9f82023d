"""Coherent errors for arithmetic: an injected step must not contradict itself.

`contradiction` reads ONE step (its text, tool and arguments, nothing of the history) the
way a shortcut attributor could, and says what in it disagrees: the running total, operand
or operation stated in the text against the expression or program actually run, the answer
stated against the answer sent, a calculation announced where the tool called is another.
Reference steps never trip it; an operator's replacement must not either, or the gold step
could be found without reading the run. The parsers here are written independently of the
package's own (`parse_calc`, `parse_code`), so the check does not just echo the builders.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from whowhen.benchmarks.arithmetic import SPEC
from whowhen.benchmarks.arithmetic.actions import CODE_TOOLS, said
from whowhen.benchmarks.arithmetic.experts import ExpertChatSystem
from whowhen.operators import build_operators
from whowhen.runtime import Action, Step

from .coherence_checks import modes_test, reference_test, swept_test

BENCHMARK = "arithmetic"
SYSTEMS = tuple(SPEC.policies)
OPERATORS = build_operators([SPEC], generic={})  # this package's only: no generic slip
TERMINATE = ExpertChatSystem.end.strip()
_NUM = r"-?\d+(?:\.\d+)?"
_FAMILIES = {
    "add": re.compile(r"\b(?:add|adding|adds|plus)\b", re.I),
    "sub": re.compile(r"\b(?:subtract|subtracting|minus|takes? .{1,12} away|removes?)\b", re.I),
    "mul": re.compile(r"\b(?:multiply|multiplying|times)\b", re.I),
    "div": re.compile(r"\b(?:divide|dividing|divided|splits?)\b", re.I),
}
_ANSWER_WORDS = re.compile(r"(?:the answer is|final answer:)\s*(\S+?)\.?$", re.I)
_PROPOSED = re.compile(rf"Proposed answer: ({_NUM})\.$")
_LAST_RESULT = re.compile(rf"last result is ({_NUM})")
_LITERAL = re.compile(rf"({_NUM}) ([-+*/x]) ({_NUM})")
_REQUEST = re.compile(r"\b(?:please|re-run it)\b", re.I)
_CLAIM = re.compile(rf"(?:give back|returns|ought to be) ({_NUM})")
_EXPRESSION = re.compile(rf"^\s*({_NUM})\s*([-+*/])\s*({_NUM})\s*$")
_PROGRAM = re.compile(rf"^print\(\s*({_NUM})\s*(\+|-|\*|//|/)\s*({_NUM})\s*\)$")
_SYMBOLS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "//": "div"}
_APPLY = {"+": float.__add__, "-": float.__sub__, "*": float.__mul__, "/": float.__truediv__}


def _same(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except ValueError:
        return a.strip() == b.strip()


def _numbers(text: str) -> set[float]:
    return {float(x) for x in re.findall(_NUM, text)}


def _families(text: str) -> set[str]:
    """The operations a text talks about (add, sub, mul, div)."""
    return {op for op, pattern in _FAMILIES.items() if pattern.search(text)}


def _computed(tool: str | None, args: dict[str, Any]) -> tuple[str, str, str] | None:
    """(op, left, right) of the expression or one-line program the step runs, or None."""
    if tool == "calculator":
        m = _EXPRESSION.match(str(args.get("expression", "")))
    elif tool in CODE_TOOLS:
        m = _PROGRAM.match(str(args.get("code", "")).strip())
    else:
        return None
    if not m:
        return None
    left, sym, right = m.groups()
    return _SYMBOLS[sym], left, right


def _calculation(text: str, tool: str | None, args: dict[str, Any]) -> str | None:
    """What contradicts itself in a calculation step (text naming an operation)."""
    if tool not in ("calculator", *CODE_TOOLS):
        return f"the text announces a calculation, the step calls {tool or 'no tool'}"
    computed = _computed(tool, args)
    families = _families(text)
    if computed is None:
        return "a calculation whose expression cannot be read back"
    op, left, right = computed
    if families != {op}:
        return f"the text says {sorted(families)}, the expression does {op}"
    if _numbers(text) != {float(left), float(right)}:
        return f"the text's numbers {sorted(_numbers(text))}, the expression uses {left}, {right}"
    return None


def contradiction(step: Action | Step) -> str | None:
    """What in this one step contradicts the rest of it, or None when it is consistent."""
    text = said(step.content).removesuffix(TERMINATE).strip()
    tool, args = step.tool, step.tool_args or {}
    answer = _ANSWER_WORDS.search(text)
    literal = _LITERAL.search(text)
    if answer is not None or tool == "final_answer":
        if tool != "final_answer":
            return f"the text gives the answer, the step calls {tool or 'no tool'}"
        if answer is None:
            return "an answer sent with a text that states none"
        if not _same(answer.group(1), str(args.get("answer", ""))):
            return f"the text's answer {answer.group(1)}, the call sends {args.get('answer')}"
        return None
    if literal is not None:  # a calculation quoted in the text: the one the call makes
        if tool is None and step.actor == "verifier" and _REQUEST.search(text):
            return None  # a calculation the verifier asks the solver to make: no call here
        if tool != "calculator":
            return f"the text quotes {literal.group(0)}, the step calls {tool or 'no tool'}"
        expression = str(args.get("expression", ""))
        if " ".join(literal.groups()) != " ".join(expression.split()):
            return f"the text quotes {literal.group(0)}, the call computes {expression}"
        claim = _CLAIM.search(text)
        left, sym, right = literal.groups()
        if claim and sym in _APPLY:
            value = _APPLY[sym](float(left), float(right))
            if value != float(claim.group(1)):
                return f"the text expects {claim.group(1)} from {expression}, it is {value:g}"
        return None
    if _families(text) and not text.startswith("Check failed") and len(_numbers(text)) >= 1:
        return _calculation(text, tool, args)
    proposed = _PROPOSED.search(text)
    if proposed is not None:
        if tool is not None:
            return f"a proposal that calls {tool}"
        stated = _LAST_RESULT.search(text)
        if stated and not _same(stated.group(1), proposed.group(1)):
            return f"the last result {stated.group(1)}, the proposal {proposed.group(1)}"
        return None
    if tool == "calculator":
        return "a calculation with a text that states none"
    if tool in CODE_TOOLS:
        code = str(args.get("code", ""))
        missing = [x for x in re.findall(_NUM, text) if x not in code]
        return f"the text's {missing} are not in the program" if missing else None
    return None


test_reference_steps_are_consistent = reference_test(BENCHMARK, SYSTEMS, contradiction, 101)
test_operator_replacements_are_consistent = swept_test(BENCHMARK, SYSTEMS, OPERATORS, contradiction)
test_every_mode_of_the_package_was_checked = modes_test(BENCHMARK, SYSTEMS, OPERATORS)


def _calc(text: str, expression: str, actor: str = "assistant") -> Action:
    return Action(actor, text, "calculator", {"expression": expression})


def _code(text: str, code: str) -> Action:
    return Action("assistant", text, "run_python", {"code": code})


@pytest.mark.parametrize(
    "step",
    [
        _calc("Next, add 4 to the running total of 59.", "58 + 4"),  # the audit's example
        _code("Next, add 4 to the running total of 59.", "print(58 + 4)"),
        _calc("Next, add 4 to the running total of 59.", "59 - 4"),
        _calc("Next, divide the running total of 60 by 3.", "60 / 4"),
        _code("Next, multiply the running total of 12 by 5.", "print(12 + 5)"),
        Action(
            "assistant",
            "All operations are done; the answer is 24.",
            "final_answer",
            {"answer": "34"},
        ),
        Action(
            "verifier",
            "I checked all 4 calculations against the problem; they use the right "
            "operations. Final answer: 75.",
            "final_answer",
            {"answer": "57"},
        ),
        Action(
            "assistant", "Next, add 4 to the running total of 59.", "final_answer", {"answer": "63"}
        ),
        Action(
            "assistant",
            "All operations are done; the answer is 63.",
            "calculator",
            {"expression": "59 + 4"},
        ),
        Action("solver", "Next, subtract 9 from the running total of 84."),
        _calc("Adding 4 to 59 gives the new total.", "59 * 4"),
        _calc("Now 12 times 5: the problem scales the pile by 5 here.", "12 * 6"),
        _calc("Let me re-check that step: 57 + 12 again.", "57 + 13"),
        _calc("Checking by undoing the last step: 69 - 12 should give back 58.", "69 - 12"),
        Action(
            "solver", "All 4 operations are done and the last result is 62. Proposed answer: 26."
        ),
        Action("verifier", "Final answer: 62."),
        Action("solver", "Please recompute step 3, 45 + 12, once more before continuing."),
        _calc("Let me try 37 x 3 on the calculator.", "73 x 3"),
        _code("Sanity check in code: going back from 96 must give 84.", "total = 69\nprint(57)"),
        _code("Let me assert that the last step can be reversed to 17.", "assert 30 - 12 == 18"),
    ],
)
def test_the_check_flags_a_contradictory_step(step: Action) -> None:
    assert contradiction(step) is not None


@pytest.mark.parametrize(
    "step",
    [
        _calc("Next, add 4 to the running total of 58.", "58 + 4"),
        _code("Next, divide the running total of 60 by 4.", "print(60 // 4)"),
        Action(
            "assistant",
            "All operations are done; the answer is 34.",
            "final_answer",
            {"answer": "34"},
        ),
        Action("solver", "I have applied all 4 operations. Proposed answer: 62."),
        Action(
            "verifier", "Check failed: the problem has 4 operations but I count 3 calculations."
        ),
        _calc("The running total is 84; the next sentence takes 9 away, so I subtract.", "84 - 9"),
        _calc("Checking by undoing the last step: 69 - 12 should give back 57.", "69 - 12"),
        _calc("Let me try 37 x 3 on the calculator.", "37 x 3"),
        Action("assistant", "The total went up to 62 because Ava gained apples; two to go."),
        Action("verifier", "Please recompute step 3, 45 + 12, once more before continuing."),
        Action("verifier", "Looks right up to here (4 calculations checked). Continue from 57."),
        Action("solver", "I redid calculation 4 and got 57; I go on from there."),
        _code(
            "Sanity check in code: going back from 96 must give 84.",
            "total = 96\nprevious = total - 12\nassert previous == 84, previous\nprint(previous)",
        ),
        Action(
            "solver", "All 4 operations are done and the last result is 62. Proposed answer: 62."
        ),
    ],
)
def test_the_check_passes_a_consistent_step(step: Action) -> None:
    assert contradiction(step) is None
