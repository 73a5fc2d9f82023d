"""Scripted reference policies for the arithmetic benchmark.

Both systems decide *only* from the visible history: they re-read the problem from
step 0 and take the running total from the last calculator observation. So an
injected wrong number propagates to the end, exactly as it would for a model,
unless the verifier notices it (a recovery).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents.scripted import ScriptedReact, ScriptedSolverVerifier, proposed_answer
from whowhen.benchmarks.arithmetic import OPS, SYMBOL_TO_OP, parse_problem
from whowhen.runtime import Action, Step

_TEMPLATES = {
    "add": "Next, add {n} to the running total of {a}.",
    "sub": "Next, subtract {n} from the running total of {a}.",
    "mul": "Next, multiply the running total of {a} by {n}.",
    "div": "Next, divide the running total of {a} by {n}.",
}
_EXPR = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([-+*/])\s*(-?\d+(?:\.\d+)?)\s*$")


def calc_action(actor: str, op: str, a: str, n: str, expr_a: str | None = None) -> Action:
    """A calculator step: the stated intent, and the expression actually sent to the tool.

    `expr_a` differs from `a` only for an action error (right intent, wrong argument).
    """
    sym = OPS[op][1]
    return Action(
        actor,
        _TEMPLATES[op].format(n=n, a=a),
        "calculator",
        {"expression": f"{expr_a if expr_a is not None else a} {sym} {n}"},
    )


def parse_calc(action: Action | Step) -> tuple[str, str, str, str] | None:
    """(op, a, n, expr_a) of a calculator step, read back from its text and expression."""
    if action.tool != "calculator" or not action.tool_args:
        return None
    m = _EXPR.match(str(action.tool_args.get("expression", "")))
    if not m:
        return None
    expr_a, sym, n = m.groups()
    stated = re.search(r"running total of (-?\d+(?:\.\d+)?)", action.content)
    return SYMBOL_TO_OP[sym], stated.group(1) if stated else expr_a, n, expr_a


def final_action(actor: str, answer: str, verified_steps: int | None = None) -> Action:
    text = (
        f"I checked all {verified_steps} calculations against the problem; they use the "
        f"right operations. Final answer: {answer}."
        if verified_steps is not None
        else f"All operations are done; the answer is {answer}."
    )
    return Action(actor, text, "final_answer", {"answer": answer})


def _problem(history: Sequence[Step]) -> tuple[int, list[tuple[str, int]]]:
    return parse_problem(history[0].content.split("Problem: ", 1)[-1])


def _solver_step(actor: str, history: Sequence[Step], since: int) -> Action | None:
    """The next calculation after index `since`, or None when all operations are done."""
    start, ops = _problem(history)
    calcs = [s for s in history[since:] if s.actor == actor and s.tool == "calculator"]
    if len(calcs) >= len(ops):
        return None
    observations = [
        s for s in history[since:] if s.kind == "observation" and s.actor == "calculator"
    ]
    total = observations[-1].content if observations else str(start)
    op, n = ops[len(calcs)]
    return calc_action(actor, op, total, str(n))


def _last_result(history: Sequence[Step], start: int) -> str:
    obs = [s for s in history if s.kind == "observation" and s.actor == "calculator"]
    return obs[-1].content if obs else str(start)


class ReactSystem(ScriptedReact):
    """Single-agent ReAct loop: think, call the calculator, repeat, then answer."""

    def act(self, history: Sequence[Step]) -> Action:
        action = _solver_step("assistant", history, 0)
        if action is None:
            start, _ = _problem(history)
            action = final_action("assistant", _last_result(history, start))
        return action


class SolverVerifierSystem(ScriptedSolverVerifier):
    """Two agents: the solver computes and proposes; the verifier checks the operations
    against the problem and either answers or sends the solver back to redo the work.

    The verifier checks *which operation* each calculation uses, not the numbers: it
    catches a wrong operator (recovery) but not a wrong operand or a mistyped total.
    """

    def solver_turn(self, history: Sequence[Step], since: int) -> Action:
        action = _solver_step("solver", history, since)
        if action is None:
            start, ops = _problem(history)
            total = _last_result(history[since:], start)
            action = Action(
                "solver", f"I have applied all {len(ops)} operations. Proposed answer: {total}."
            )
        return action

    def verify(self, history: Sequence[Step], since: int) -> Action:
        _, ops = _problem(history)
        calcs = [s for s in history[since:] if s.actor == "solver" and s.tool == "calculator"]
        if len(calcs) != len(ops):
            return Action(
                "verifier",
                f"Check failed: the problem has {len(ops)} operations but "
                f"I count {len(calcs)} calculations. Please redo the "
                "calculation from the start.",
            )
        for i, (step, (op, n)) in enumerate(zip(calcs, ops, strict=True), start=1):
            parsed = parse_calc(step)
            if parsed is None or parsed[0] != op:
                used = OPS[parsed[0]][1] if parsed else "?"
                return Action(
                    "verifier",
                    f"Check failed at calculation {i}: the problem asks "
                    f"to {OPS[op][2]} {n}, but the calculation uses "
                    f"'{used}'. Please redo the calculation from the start.",
                )
        return final_action("verifier", proposed_answer(history), verified_steps=len(ops))


POLICIES: dict[str, type] = {"react": ReactSystem, "solver_verifier": SolverVerifierSystem}
"""System name -> this benchmark's scripted reference policy."""
