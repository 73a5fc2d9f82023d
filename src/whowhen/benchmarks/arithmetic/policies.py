"""Scripted reference policies for the arithmetic benchmark.

Every system decides *only* from the visible history: it re-reads the problem from
step 0 and takes the running total from the observation of its last operation step. So
an injected wrong number propagates to the end, exactly as it would for a model, unless
the verifier notices it (a recovery).

Runs read like an agent's: a plan first, one calculation per operation in one
of several phrasings, now and then a re-check of the last step with the tool (the same
sum again, the operands swapped, or the step undone), a malformed call that the tool
refuses and the agent retries, short notes on the running total, a recap before the
answer; the solver of the two-agent system checks in with the verifier along the way,
and the verifier sometimes asks it to re-check a step, or re-computes one itself. Every
choice is a `phrasing` draw: a pure function of the task text and the step index, so a
warm start, a replay and an operator see the policy's own choice. Re-checks repeat the
step's own numbers, so they confirm what was computed and never undo an injected error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedReact, ScriptedSolverVerifier
from whowhen.benchmarks.arithmetic.actions import (
    Progress,
    _last_agent,
    _output,
    _problem,
    _task_text,
    answer_action,
    approval_action,
    calc_action,
    parse_calc,
    parse_code,
    parse_proposal,
    plan_action,
    progress,
    proposal_action,
    redo_offset,
    restart_point,
)
from whowhen.benchmarks.arithmetic.code_act import CodeActSystem
from whowhen.benchmarks.arithmetic.experts import ExpertChatSystem
from whowhen.benchmarks.arithmetic.phrases import (
    _ACKS,
    _CHECKIN_RE,
    _CHECKINS,
    _COMMUTES,
    _CONFIRMS,
    _COUNT_REJECTS,
    _INVERSE,
    _NOTES_DOWN,
    _NOTES_UP,
    _OP_REJECTS,
    _RECAPS,
    _RECHECK_ASKS,
    _RECHECKS,
    _REPORT_RE,
    _REPORTS,
    _RETRIES,
    _RETRY_NOTES,
    _SELF_CHECK_NOTES,
    _SELF_CHECKS,
    _STYLES,
    _SWAPS,
    _UNDOS,
    ASK,
    PROPOSALS,
    _words,
)
from whowhen.benchmarks.arithmetic.tasks import OPS, SYMBOL_TO_OP, parse_story
from whowhen.runtime import Action, Step


def _check_expression(history: Sequence[Step], op_step: Step, key: str) -> tuple[str, str, str]:
    """(kind, expression, wording) of a re-check of `op_step` with its own numbers: the
    same sum again, the operands swapped, or the step undone from its result."""
    parsed = parse_calc(op_step) or parse_code(op_step)
    assert parsed is not None
    op, _, n, left = parsed
    out = _output(history, op_step) or ""
    kinds = ["again"] + (["undo"] if "." not in out else []) + (["swap"] if op in _COMMUTES else [])
    kind = phrasing.choose(history, f"{key}.kind", kinds)
    sym = OPS[op][1]
    if kind == "swap":
        return (
            kind,
            f"{n} {sym} {left}",
            phrasing.phrase(history, key, _SWAPS, expr=f"{n} {sym} {left}"),
        )
    if kind == "undo" and out:
        expr = f"{out} {_INVERSE[op]} {n}"
        return kind, expr, phrasing.phrase(history, key, _UNDOS, expr=expr, previous=left)
    expr = f"{left} {sym} {n}"
    return "again", expr, phrasing.phrase(history, key, _RECHECKS, expr=expr)


def _detour(history: Sequence[Step], actor: str, done: Progress, n_ops: int) -> Action | None:
    """A step between two operations of a single agent (or the solver), or None: after an
    operation, sometimes a re-check with the tool, or a note on the total; after a
    re-check, sometimes a word that it matched."""
    last = _last_agent(history, actor)
    if last is None or not done.steps:
        return None
    name, item = parse_story(_task_text(history))
    fields = {"total": done.total, "previous": done.previous, "name": name, "item": item}
    if last.step == done.steps[-1].step:
        if phrasing.chance(history, "arith.recheck", 0.3):
            _, expr, text = _check_expression(history, last, "arith.recheck")
            return Action(actor, text, "calculator", {"expression": expr})
        if actor == "assistant" and phrasing.chance(history, "arith.note", 0.3):
            left = _words(n_ops - len(done.steps))
            notes = _NOTES_UP if float(done.total) >= float(done.previous) else _NOTES_DOWN
            return Action(actor, phrasing.phrase(history, "arith.note", notes, left=left, **fields))
        return None
    if (
        actor == "assistant"
        and last.tool == "calculator"
        and parse_calc(last) is None
        and " x " not in str((last.tool_args or {}).get("expression", ""))
        and phrasing.chance(history, "arith.confirm", 0.5)
    ):
        return Action(actor, phrasing.phrase(history, "arith.confirm", _CONFIRMS, **fields))
    return None


def _next_operation(
    history: Sequence[Step], actor: str, done: Progress, ops: list[tuple[str, int]]
) -> Action:
    """The next operation step, or first (sometimes) a multiplication typed with an x that
    the calculator refuses, then a word on why it failed."""
    op, n = ops[len(done.steps)]
    last = _last_agent(history, actor)
    after = done.steps[-1].step if done.steps else 0
    retried = any(
        s.actor == actor and " x " in str((s.tool_args or {}).get("expression", ""))
        for s in history[after:]
    )
    if op == "mul" and not retried and phrasing.chance(history, "arith.retry", 0.35):
        text = phrasing.phrase(history, "arith.retry", _RETRIES, a=done.total, n=n)
        return Action(actor, text, "calculator", {"expression": f"{done.total} x {n}"})
    last_retry = last is not None and " x " in str((last.tool_args or {}).get("expression", ""))
    if last_retry and actor == "assistant" and phrasing.chance(history, "arith.why", 0.7):
        text = phrasing.phrase(history, "arith.why", _RETRY_NOTES, a=done.total)
        return Action(actor, text)
    style = phrasing.choose(history, "arith.calc", range(_STYLES))
    return calc_action(actor, op, done.total, str(n), style=style)


def _recap(history: Sequence[Step], actor: str, total: str) -> Action:
    start, ops = _problem(history)
    name, item = parse_story(_task_text(history))
    text = phrasing.phrase(
        history, "arith.recap", _RECAPS, name=name, item=item, start=start, k=len(ops), total=total
    )
    return Action(actor, text)


_RECAP_START = re.compile(r"^(?:Recap:|To sum up,|Looking back over the work:)")


class ReactSystem(ScriptedReact):
    """Single-agent ReAct loop: a plan, one calculation per operation (with re-checks,
    retries and notes along the way), a recap, then the answer."""

    def act(self, history: Sequence[Step]) -> Action:
        if len(history) <= 1:
            return plan_action(history, "assistant")
        _, ops = _problem(history)
        done = progress(history, "assistant")
        if len(done.steps) < len(ops):
            return _detour(history, "assistant", done, len(ops)) or _next_operation(
                history, "assistant", done, ops
            )
        detour = _detour(history, "assistant", done, len(ops))
        if detour is not None and detour.tool is not None:
            return detour
        last = _last_agent(history, "assistant")
        if last is not None and _RECAP_START.match(last.content):
            return answer_action("assistant", done.total, history)
        return _recap(history, "assistant", done.total)


# --- solver + verifier ---------------------------------------------------------------


def _asked_step(step: Step | None) -> tuple[int, str] | None:
    """(calculation, expression) a verifier's message asks the solver to re-run."""
    if step is None or step.actor != "verifier" or step.tool is not None:
        return None
    found = ASK.fields(step.content)
    return (int(found["calc"]), found["expr"]) if found else None


def _rerun(history: Sequence[Step], expr: str) -> Action:
    """The solver re-runs the calculation the verifier quoted, as quoted or (for a sum or a
    product) with the operands swapped: its result is the running total from then on."""
    left, sym, n = expr.split()
    if SYMBOL_TO_OP[sym] in _COMMUTES and phrasing.chance(history, "arith.asked.kind", 0.5):
        swapped = f"{n} {sym} {left}"
        text = phrasing.phrase(history, "arith.asked", _SWAPS, expr=swapped)
        return Action("solver", text, "calculator", {"expression": swapped})
    text = phrasing.phrase(history, "arith.asked", _RECHECKS, expr=expr)
    return Action("solver", text, "calculator", {"expression": expr})


_MISREAD_VERB = {"add": "sub", "sub": "add"}
_SLIP_UP = 0.75


def _slip_up(history: Sequence[Step], ops: list[tuple[str, int]]) -> int | None:
    """The operation (0-based) at which the solver, on its first attempt at some problems
    (a draw per task), reads a sentence's verb the wrong way round (gets for gives
    away): the verifier rejects the proposal and the solver redoes the work from there.
    Why: runs with a caught error and a redo, as real ones have, and the rejection that a
    false approval or an ignored message needs (no natural slip changes an operation). The
    last such verb, so the redo is short."""
    if not phrasing.task_chance(history, "arith.slipup", _SLIP_UP):
        return None
    return next((i for i in range(len(ops) - 1, -1, -1) if ops[i][0] in _MISREAD_VERB), None)


class SolverVerifierSystem(ScriptedSolverVerifier):
    """Two agents: the solver computes, checks in with the verifier now and then, and
    proposes; the verifier checks the operations against the problem and either answers
    or sends the solver back to redo the work. Along the way it confirms partial results,
    sometimes asks for a re-check of a step, or recomputes one itself. On some short
    problems the solver's first attempt reads one verb the wrong way round and is sent back.

    The verifier checks *which operation* each calculation uses when the solver proposes
    (a partial result gets a count, a spot check or a re-check request); its spot checks
    repeat the solver's own numbers: it catches a wrong operator (recovery) but not a wrong
    operand or a mistyped total.
    """

    def decide(self, history: Sequence[Step]) -> Action:
        last = _last_agent(history)
        if last is not None and last.actor == "verifier" and last.tool == "calculator":
            return self._after_self_check(history)
        return super().decide(history)

    def solver_turn(self, history: Sequence[Step], since: int) -> Action:
        _, ops = _problem(history)
        since = restart_point(history)
        done, offset = progress(history, "solver", since), redo_offset(history, since)
        last, mine = _last_agent(history), _last_agent(history, "solver")
        asked = _asked_step(last)
        if asked is not None:  # re-run the calculation asked for
            return _rerun(history, asked[1])
        ask = _asked_step(_last_agent(history, "verifier"))
        if ask is not None and mine is not None and mine.tool == "calculator":
            text = phrasing.phrase(history, "arith.report", _REPORTS, calc=ask[0], total=done.total)
            return Action("solver", text)  # the re-check the verifier asked for is in
        k = offset + len(done.steps)
        if k < len(ops):
            if (
                len(done.steps) >= 3
                and mine is not None
                and mine.step == done.steps[-1].step
                and not any(
                    s.actor == "solver" and s.tool is None for s in history[done.steps[-3].step :]
                )
                and phrasing.chance(history, "arith.checkin", 0.5)
            ):
                left = _words(len(ops) - k)
                text = phrasing.phrase(
                    history,
                    "arith.checkin",
                    _CHECKINS,
                    k=k,
                    n=len(ops),
                    total=done.total,
                    left=left,
                )
                return Action("solver", text)
            detour = _detour(history, "solver", done, len(ops))
            if detour is not None:
                return detour
            if k == _slip_up(history, ops) and not restart_point(history):
                op, n = ops[k]
                style = phrasing.choose(history, "arith.calc", range(_STYLES))
                return calc_action("solver", _MISREAD_VERB[op], done.total, str(n), style=style)
            return _next_operation(history, "solver", done, ops[offset:])
        detour = _detour(history, "solver", done, len(ops))
        if detour is not None and detour.tool is not None:
            return detour
        style = phrasing.choose(history, "arith.propose", range(len(PROPOSALS)))
        return proposal_action("solver", len(ops), done.total, style)

    def verify(self, history: Sequence[Step], since: int) -> Action:
        _, ops = _problem(history)
        since = restart_point(history)
        done, offset = progress(history, "solver", since), redo_offset(history, since)
        message = history[-1].content
        checkin = _CHECKIN_RE.match(message)
        partial = checkin is not None or _REPORT_RE.match(message) is not None
        count = offset + len(done.steps)
        if count > len(ops) or (not partial and count != len(ops)):
            text = phrasing.phrase(history, "arith.reject", _COUNT_REJECTS, k=len(ops), c=count)
            return Action("verifier", text)
        checked = [] if partial else done.steps  # partial results: the full check comes last
        pairs = zip(checked, ops[offset:], strict=False)
        for i, (step, (op, n)) in enumerate(pairs, start=offset + 1):
            parsed = parse_calc(step)
            if parsed is None or parsed[0] != op:
                used = OPS[parsed[0]][1] if parsed else "?"
                fields = {"i": i, "verb": OPS[op][2], "n": n, "used": used, "sym": OPS[op][1]}
                fields["a"] = parsed[1] if parsed else done.previous
                text = phrasing.phrase(history, "arith.reject", _OP_REJECTS, **fields)
                return Action("verifier", text)
        if not partial:
            proposed = parse_proposal(message)
            answer = proposed[1] if proposed else ""
            return approval_action(answer, len(ops), history)
        if checkin is not None and count:
            roll = phrasing.draw(history, "arith.review")
            last_op = parse_calc(done.steps[-1])
            assert last_op is not None
            expr = f"{last_op[3]} {OPS[last_op[0]][1]} {last_op[2]}"
            if roll < 0.3:
                text = phrasing.phrase(history, "arith.ask", _RECHECK_ASKS, calc=count, expr=expr)
                return Action("verifier", text)
            if roll < 0.55:
                text = phrasing.phrase(history, "arith.self", _SELF_CHECKS, expr=expr)
                return Action("verifier", text, "calculator", {"expression": expr})
        text = phrasing.phrase(history, "arith.ack", _ACKS, k=count, total=done.total)
        return Action("verifier", text)

    def _after_self_check(self, history: Sequence[Step]) -> Action:
        value = history[-1].content.strip() if history[-1].kind == "observation" else "?"
        return Action(
            "verifier", phrasing.phrase(history, "arith.selfnote", _SELF_CHECK_NOTES, value=value)
        )


POLICIES: dict[str, type] = {
    "react": ReactSystem,
    "solver_verifier": SolverVerifierSystem,
    "code_act": CodeActSystem,
    "expert_chat": ExpertChatSystem,
}
"""System name -> this benchmark's scripted reference policy."""
