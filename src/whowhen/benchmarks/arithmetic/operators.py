"""Error operators for the arithmetic policies' steps, one per taxonomy mode that fits.

Each applies only where the scripted policy's next move is known: a calculation (or
`print(a op b)` program) in the policy's own form, the solver's proposal, the verifier's
rejection. Every replacement is built with the policy's own builders (`calc_action`,
`code_action`, `proposal_action`, `answer_action`, `approval_action`) with the wording of
the step they replace (or the draw at its index) from a wrong belief, so the step says what it
does: the total, operand and operation in its text are the ones it computes, the answer
it states is the one it sends. It is wrong only against the problem and the history
(tests/test_coherence_arithmetic.py holds every operator to that). No (mode, system) was
dropped: each mode here has a form in which the wrong belief is stated and acted on.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import partial

from whowhen.benchmarks.arithmetic.actions import (
    CODE_TOOLS,
    answer_action,
    approval_action,
    calc_action,
    code_action,
    parse_calc,
    parse_code,
    parse_proposal,
    progress,
    proposal_action,
    restart_point,
    step_style,
)
from whowhen.benchmarks.arithmetic.experts import CHECKER, CODER, ExpertChatSystem
from whowhen.benchmarks.arithmetic.phrases import REJECTION_RE
from whowhen.benchmarks.arithmetic.restatements import (
    distorted_total,
    misread_total,
    mistyped_check,
)
from whowhen.benchmarks.arithmetic.tasks import shown_problem
from whowhen.benchmarks.base import Operator, covers
from whowhen.runtime import Action, Step
from whowhen.slips import typo

_REJECTION_RE = REJECTION_RE


def _policy_step(
    action: Action, history: Sequence[Step]
) -> tuple[str, int, list[tuple[str, int]], Callable[..., Action]] | None:
    """(running total, index of the operation this step applies, operations, step builder)
    when `action` is exactly the single agent's (or the group chat's coder's) next
    calculation or program; else None. The solver of the two-agent system is left out: the
    verifier checks the operation of each calculation, so these planning slips would only
    ever be caught and redone there (the group chat's verifier only counts programs)."""
    if action.actor not in ("assistant", CODER):
        return None
    problem = shown_problem(history)
    if action.tool == "calculator":
        parsed, build = parse_calc(action), calc_action
    elif action.tool in CODE_TOOLS:
        parsed, build = parse_code(action), partial(code_action, tool=action.tool)
    else:
        return None
    if problem is None or parsed is None:
        return None
    op, a, n, _ = parsed
    if build(action.actor, op, a, n, style=step_style(action)) != action:
        return None  # not in the policy's form, or already off
    done = len(progress(history, action.actor, tool=action.tool).steps)
    ops = problem[1]
    if done >= len(ops) or ops[done] != (op, int(float(n))):
        return None
    return a, done, ops, build


@covers("react", "code_act", "expert_chat")
def premature_finish(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """planning.premature_finish: after at least one operation, the running total is given
    as the answer instead of applying the next operation."""
    step = _policy_step(action, history)
    if step is None or step[1] == 0:
        return None
    return answer_action(action.actor, step[0], history)


@covers("react", "expert_chat")
def wrong_subgoal(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """planning.wrong_subgoal: the step applies the operation after the next one (stated and
    computed), so the next one is skipped: the policy goes on counting from there."""
    step = _policy_step(action, history)
    if step is None:
        return None
    total, k, ops, build = step
    if k + 1 >= len(ops) or ops[k + 1] == ops[k]:
        return None
    op, n = ops[k + 1]
    return build(action.actor, op, total, str(n), style=step_style(action))


@covers("solver_verifier")
def distorted_handoff(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """coordination.distorted_handoff: the solver's proposal miscopies the last result."""
    m = parse_proposal(action.content) if action.tool is None else None
    if m is None or action.actor != "solver":
        return None
    n, total, style = m
    return proposal_action("solver", n, typo(total, rng), style)


@covers("solver_verifier", "expert_chat")
def false_approval(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """verification.false_approval: instead of sending the solver back, the verifier
    answers with the proposal it should have rejected, in its approval wording."""
    problem = shown_problem(history)
    end = {"verifier": "", CHECKER: ExpertChatSystem.end}.get(action.actor)
    if end is None or action.tool is not None or problem is None:
        return None
    if not _REJECTION_RE.match(action.content):
        return None
    proposed = parse_proposal(history[-1].content) if history else None
    if not proposed:
        return None
    return approval_action(proposed[1], len(problem[1]), history, action.actor, end)


@covers("solver_verifier")
def ignored_message(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """coordination.ignored_message: sent back by the verifier, the solver re-sends the
    proposal it made before the rejection, as if the rejection had not come. (In the group
    chat the verifier counts the programs again and sends it back once more: recovered.)"""
    verifier = {"solver": "verifier", CODER: CHECKER}.get(action.actor)
    if verifier is None or action.tool is not None:
        return None
    if not parse_proposal(action.content):
        return None
    since = restart_point(history, verifier)
    if not since:
        return None
    earlier = [
        s
        for s in history[:since]
        if s.actor == action.actor and s.tool is None and parse_proposal(s.content)
    ]
    if not earlier or earlier[-1].content == action.content:
        return None
    return Action(action.actor, earlier[-1].content)


_CONFUSED_OP = {"add": "sub", "sub": "add", "mul": "add", "div": "sub"}


@covers("react", "solver_verifier")
def wrong_operand(action: Action, rng: random.Random) -> Action | None:
    """reasoning.wrong_operand: a calculation with a nearby number in place of the operand,
    stated and computed (a divisor that still divides the total evenly, for a division)."""
    parsed = parse_calc(action)
    if parsed is None:
        return None
    op, a, n, _ = parsed
    value = int(float(n))
    candidates = [v for v in range(max(1, value - 3), value + 4) if v != value]
    if op == "div":
        total = float(a)
        candidates = [d for d in range(2, 10) if d != value and total % d == 0] or candidates
    return calc_action(action.actor, op, a, str(rng.choice(candidates)), style=step_style(action))


@covers("react")
def wrong_operator(action: Action, rng: random.Random) -> Action | None:
    """reasoning.wrong_operator: a confused operation, stated and computed."""
    parsed = parse_calc(action)
    if parsed is None:
        return None
    op, a, n, _ = parsed
    return calc_action(action.actor, _CONFUSED_OP[op], a, n, style=step_style(action))


@covers("react", "solver_verifier")
def wrong_tool_argument(action: Action, rng: random.Random) -> Action | None:
    """action.wrong_tool_argument: the right operation is carried out on a mistyped
    running total (digits swapped, or off by one or ten). The mistyped total is the one the
    step states and computes, as the agent copied it; the last result in the history shows
    the right one. (Not the total's typo in the expression alone: a text that states the
    right total over a call that uses another contradicts itself.)"""
    parsed = parse_calc(action)
    if parsed is None:
        return None
    op, a, n, expr_a = parsed
    if expr_a != a:  # already contradicts itself: not a step in the policy's form
        return None
    return calc_action(action.actor, op, typo(a, rng), n, style=step_style(action))


_CALCULATOR = {
    "reasoning.wrong_operand": wrong_operand,
    "reasoning.wrong_operator": wrong_operator,
    "action.wrong_tool_argument": wrong_tool_argument,
}


def _as_code(mode: str) -> Callable[[Action, random.Random], Action | None]:
    """The calculator operator of `mode`, applied to a code step: the program is read
    as the equivalent calculator step, changed, and written back as a program."""

    def apply(action: Action, rng: random.Random) -> Action | None:
        parsed = parse_code(action)
        if parsed is None:
            return None
        op, a, n, code_a = parsed
        core = _CALCULATOR[mode]
        style = step_style(action)
        changed = core(calc_action(action.actor, op, a, n, code_a, style=style), rng)
        back = parse_calc(changed) if changed is not None else None
        if back is None:
            return None
        return code_action(action.actor, *back, style=style, tool=action.tool)

    return covers("code_act", "expert_chat")(apply)


OPERATORS: dict[str, Operator | tuple[Operator, ...]] = {
    **{mode: (op, _as_code(mode)) for mode, op in _CALCULATOR.items()},
    "action.wrong_tool_argument": (
        wrong_tool_argument,
        _as_code("action.wrong_tool_argument"),
        mistyped_check,
    ),
    "perception.misread_value": misread_total,
    "planning.premature_finish": premature_finish,
    "planning.wrong_subgoal": wrong_subgoal,
    "coordination.distorted_handoff": (distorted_handoff, distorted_total),
    "verification.false_approval": false_approval,
    "coordination.ignored_message": ignored_message,
}
"""Taxonomy mode -> operator(s) for the arithmetic steps: the calculator operators, on
calculator steps and, read back as a calculation, on code-as-action steps
(`print(<total> <op> <n>)`); the planning, hand-off and verification slips of these
policies; and (`restatements`) a wrong running total stated or typed at every other kind
of step: misread in a lone agent's plans, notes, recaps and answers, passed on wrongly
between solver and verifier, mistyped in re-checks, retries and test programs."""
