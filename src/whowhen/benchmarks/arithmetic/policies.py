"""Scripted reference policies for the arithmetic benchmark.

Both systems decide *only* from the visible history: they re-read the problem from
step 0 and take the running total from the last calculator observation. So an
injected wrong number propagates to the end, exactly as it would for a model,
unless the verifier notices it (a recovery)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents.scripted import ScriptedReact, ScriptedSolverVerifier, proposed_answer
from whowhen.benchmarks.arithmetic.tasks import OPS, SYMBOL_TO_OP, parse_problem
from whowhen.runtime import Action, Step
from whowhen.tools import final_action

_TEMPLATES = {
    "add": "Next, add {n} to the running total of {a}.",
    "sub": "Next, subtract {n} from the running total of {a}.",
    "mul": "Next, multiply the running total of {a} by {n}.",
    "div": "Next, divide the running total of {a} by {n}.",
}
PROPOSAL = "I have applied all {n} operations. Proposed answer: {total}."
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
            action = Action("solver", PROPOSAL.format(n=len(ops), total=total))
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


# --- code as action: one `print(<total> <op> <n>)` program per operation -------------------

_PY_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "//"}
_PY_OP = {sym: op for op, sym in _PY_SYMBOL.items()}
_CODE = re.compile(r"^print\((-?\d+(?:\.\d+)?) (\+|-|\*|//) (-?\d+(?:\.\d+)?)\)$")
_STATED = re.compile(
    r"^Next, (?:add|subtract|multiply|divide) .*running total of (-?\d+(?:\.\d+)?)"
)


def code_action(actor: str, op: str, a: str, n: str, code_a: str | None = None) -> Action:
    """A code step: the stated intent, and the program actually run (`code_a` differs from
    `a` only for an action error: right intent, mistyped total). Division is exact in this
    benchmark, so the program uses `//` and prints an integer."""
    code = f"print({code_a if code_a is not None else a} {_PY_SYMBOL[op]} {n})"
    return Action(actor, _TEMPLATES[op].format(n=n, a=a), "run_python", {"code": code})


def parse_code(action: Action | Step) -> tuple[str, str, str, str] | None:
    """(op, a, n, code_a) of a code step in the form `code_action` writes, else None."""
    if action.tool != "run_python" or not action.tool_args:
        return None
    m = _CODE.match(str(action.tool_args.get("code", "")).strip())
    stated = _STATED.match(action.content)
    if not m or not stated:
        return None
    code_a, sym, n = m.groups()
    return _PY_OP[sym], stated.group(1), n, code_a


class CodeActSystem(ScriptedReact):
    """Single agent acting in code: one small program per operation, each reading the
    running total from the last program's output, then the answer."""

    name = "code_act"

    def act(self, history: Sequence[Step]) -> Action:
        start, ops = _problem(history)
        runs = [s for s in history if s.actor == "assistant" and s.tool == "run_python"]
        outputs = [s for s in history if s.kind == "observation" and s.actor == "run_python"]
        total = outputs[-1].content.strip() if outputs else str(start)
        if len(runs) < len(ops):
            op, n = ops[len(runs)]
            return code_action("assistant", op, total, str(n))
        return final_action("assistant", total)


POLICIES["code_act"] = CodeActSystem
