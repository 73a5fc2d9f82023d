"""Issue 19, "coherent errors", for arithmetic: an injected step must not contradict itself.

`contradiction` reads ONE step (its text, tool and arguments, nothing of the history) the
way a shortcut attributor could, and says what in it disagrees: the running total, operand
or operation stated in the text against the expression or program actually run, the answer
stated against the answer sent, a calculation announced where the tool called is another.
Reference steps never trip it; an operator's replacement must not either, or the gold step
could be found without reading the run. The parsers here are written independently of the
package's own (`parse_calc`, `parse_code`), so the check does not just echo the builders.
"""

from __future__ import annotations

import random
import re
from typing import Any

import polars as pl
import pytest

from whowhen.benchmarks.arithmetic import SPEC
from whowhen.injection.operators import build_operators
from whowhen.injection.plan import plan_injections
from whowhen.rollouts import run_rollouts
from whowhen.runtime import Action, Step
from whowhen.runtime.records import steps_from_frame, steps_from_rows
from whowhen.schema import NON_AGENT_ACTORS
from whowhen.taxonomy import Mode

from .operator_checks import TAXONOMY, rollouts

BENCHMARK = "arithmetic"
SYSTEMS = tuple(SPEC.policies)
_NUM = r"(-?\d+(?:\.\d+)?)"
_INTENTS = {
    "add": re.compile(rf"^Next, add {_NUM} to the running total of {_NUM}\.$"),
    "sub": re.compile(rf"^Next, subtract {_NUM} from the running total of {_NUM}\.$"),
    "mul": re.compile(rf"^Next, multiply the running total of {_NUM} by {_NUM}\.$"),
    "div": re.compile(rf"^Next, divide the running total of {_NUM} by {_NUM}\.$"),
}
_CALC_WORDS = re.compile(r"\b(?:add|subtract|multiply|divide)\b.*running total", re.I)
_ANSWER_WORDS = re.compile(r"(?:the answer is|final answer:)\s*(\S+?)\.?$", re.I)
_EXPRESSION = re.compile(rf"^\s*{_NUM}\s*([-+*/])\s*{_NUM}\s*$")
_PROGRAM = re.compile(rf"^print\(\s*{_NUM}\s*(\+|-|\*|//|/)\s*{_NUM}\s*\)$")
_SYMBOLS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "//": "div"}


def _same(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except ValueError:
        return a.strip() == b.strip()


def _stated_calculation(text: str) -> tuple[str, str, str] | None:
    """(op, running total, operand) the text says it computes, or None."""
    for op, pattern in _INTENTS.items():
        m = pattern.match(text.strip())
        if m:
            first, second = m.groups()
            return (op, second, first) if op in ("add", "sub") else (op, first, second)
    return None


def _computed(tool: str | None, args: dict[str, Any]) -> tuple[str, str, str] | None:
    """(op, left, right) of the expression or program the step runs, or None."""
    if tool == "calculator":
        m = _EXPRESSION.match(str(args.get("expression", "")))
    elif tool == "run_python":
        m = _PROGRAM.match(str(args.get("code", "")).strip())
    else:
        return None
    if not m:
        return None
    left, sym, right = m.groups()
    return _SYMBOLS[sym], left, right


def contradiction(step: Action | Step) -> str | None:
    """What in this one step contradicts the rest of it, or None when it is consistent."""
    text, tool, args = step.content, step.tool, step.tool_args or {}
    stated = _stated_calculation(text)
    answer = _ANSWER_WORDS.search(text.strip())
    if stated is not None or _CALC_WORDS.search(text):
        if tool not in ("calculator", "run_python"):
            return f"the text announces a calculation, the step calls {tool or 'no tool'}"
        computed = _computed(tool, args)
        if stated is None or computed is None:
            return "a calculation whose text or expression cannot be read back"
        (s_op, s_total, s_n), (c_op, c_total, c_n) = stated, computed
        if s_op != c_op:
            return f"the text says {s_op}, the expression does {c_op}"
        if not _same(s_total, c_total):
            return f"the text's running total {s_total}, the expression uses {c_total}"
        if not _same(s_n, c_n):
            return f"the text's operand {s_n}, the expression uses {c_n}"
        return None
    if answer is not None:
        if tool != "final_answer":
            return f"the text gives the answer, the step calls {tool or 'no tool'}"
        if not _same(answer.group(1), str(args.get("answer", ""))):
            return f"the text's answer {answer.group(1)}, the call sends {args.get('answer')}"
        return None
    if tool == "final_answer":
        return "an answer sent with a text that states none"
    if tool in ("calculator", "run_python"):
        return "a calculation with a text that states none"
    return None


def _agent_steps(steps: pl.DataFrame) -> list[Step]:
    agent = steps.filter(
        pl.col("kind").is_in(["action", "message"]) & ~pl.col("actor").is_in(NON_AGENT_ACTORS)
    )
    return steps_from_frame(agent.sort("run_id", "step"))


OPERATORS = build_operators([SPEC], generic={})
"""This package's operators only (no generic slip, no other benchmark's): mode -> one
operator that tries the mode's operators in order, as the injection stage does."""


def _package_only(
    original: Action, mode: Mode, context: list[dict[str, Any]], rng: random.Random
) -> Action | None:
    return OPERATORS[mode.id](original, rng, steps_from_rows(context))


def planned_replacements(system: str, seed: int = 3, per_run: int = 3) -> list[tuple[str, Action]]:
    """(mode, replacement) of injections planned for every mode of the package on the
    rollouts the coverage test uses (slips on, so recoveries are there to inject into)."""
    runs, steps = rollouts(BENCHMARK, system)
    out = []
    for mode in OPERATORS:
        plan = plan_injections(runs, steps, TAXONOMY, seed, per_run, [mode], _package_only)
        out += [(mode, Action.from_json(a)) for a in plan["replacement_action"]]
    return out


def every_replacement(system: str) -> list[tuple[str, Action]]:
    """(mode, replacement) for every agent step of the rollouts, every mode, three rng
    seeds: more than the plan samples, so no step form is missed."""
    _, steps = rollouts(BENCHMARK, system)
    out = []
    for run_id in steps["run_id"].unique(maintain_order=True):
        history = steps_from_frame(steps.filter(pl.col("run_id") == run_id).sort("step"))
        for i, step in enumerate(history):
            if step.kind not in ("action", "message") or step.actor in NON_AGENT_ACTORS:
                continue
            for mode, op in OPERATORS.items():
                for seed in range(3):
                    replaced = op(step.as_action(), random.Random(seed), history[:i])
                    if replaced is not None and replaced != step.as_action():
                        out.append((mode, replaced))
    return out


@pytest.mark.parametrize("system", SYSTEMS)
def test_reference_steps_are_consistent(system: str) -> None:
    _, steps, _ = run_rollouts(BENCHMARK, system, {"n_tasks": 30}, 1, 0.0, 80)
    agent = _agent_steps(steps)
    assert len(agent) > 100
    flagged = [(s.content, s.tool_args, why) for s in agent if (why := contradiction(s))]
    assert not flagged, flagged[:3]


@pytest.mark.parametrize("system", SYSTEMS)
def test_operator_replacements_are_consistent(system: str) -> None:
    planned = planned_replacements(system)
    swept = every_replacement(system)
    assert planned and swept
    for name, found in (("planned", planned), ("swept", swept)):
        flagged = [(m, a.content, a.tool_args, why) for m, a in found if (why := contradiction(a))]
        assert not flagged, (name, len(flagged), len(found), flagged[:3])


def test_every_mode_of_the_package_was_checked() -> None:
    modes = {m for system in SYSTEMS for m, _ in every_replacement(system)}
    assert modes == set(OPERATORS)


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
    ],
)
def test_the_check_passes_a_consistent_step(step: Action) -> None:
    assert contradiction(step) is None
