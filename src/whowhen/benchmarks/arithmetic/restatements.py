"""Error operators for the arithmetic steps that state or act on the running total without
being an operation: plans, notes, confirmations, recaps and answers of a lone agent; the
check-ins, reports, acknowledgements, re-check requests and spot-check notes the solver
and verifier exchange; re-checks, retries and test programs.

Why: the policies read the running total back from the last step that stated it
(`actions.belief`), so a wrong total stated at any of these steps is carried to the answer
as a wrong operation would be, and every kind of agent step can be the decisive one. Each
replacement re-says the step in its own wording (the `Form` it was written in, same
wording index) with the wrong total in the text and in the tool arguments alike, and
keeps what the step derives from it consistent (the total an undo check expects back, the
old total a test program asserts), so it reads as a decision taken on a wrong belief,
never as a step that contradicts itself (tests/test_coherence_arithmetic.py).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.arithmetic.actions import (
    _EXPR,
    answer_action,
    progress,
)
from whowhen.benchmarks.arithmetic.experts import CODER, PLANNER
from whowhen.benchmarks.arithmetic.phrases import (
    _NUM,
    ACK,
    ASK,
    CHECKIN,
    CODE_CHECK,
    CODE_NOTE,
    CODE_RECAP,
    CONFIRM,
    NOTE_DOWN,
    NOTE_UP,
    PLAN,
    RECAP,
    RECHECK,
    REPORT,
    RETRY,
    RETRY_NOTE,
    SELF_CHECK,
    SELF_NOTE,
    SWAP,
    UNDO,
)
from whowhen.benchmarks.arithmetic.tasks import shown_problem
from whowhen.benchmarks.base import covers
from whowhen.runtime import Action, Step
from whowhen.slips import typo
from whowhen.tools import calculate

_SOLO = ((PLAN, "start"), (CONFIRM, "total"), (RETRY_NOTE, "a"), (RECAP, "total"))
_SOLO += ((CODE_NOTE, "total"), (CODE_RECAP, "total"))
"""A lone agent's messages that state the running total (notes apart: they keep a
direction), and the field that holds it."""
_HANDOFFS = {
    "solver": ((CHECKIN, "total"), (REPORT, "total")),
    "verifier": ((ACK, "total"), (SELF_NOTE, "value")),
    CODER: ((CHECKIN, "total"),),
    PLANNER: ((ACK, "total"),),
}
"""Per agent, the messages to the other agent that pass the running total on."""


def _wrong(value: str, rng: random.Random, ok: Callable[[float], bool] = lambda v: True) -> str:
    """A mistyped or misread total (`typo`): the first of a few draws that `ok` accepts
    (a total that still divides evenly, keeps its direction), else the last draw."""
    wrong = value
    for _ in range(8):
        wrong = typo(value, rng)
        if wrong != value and float(wrong) > 0 and ok(float(wrong)):
            return wrong
    return wrong if wrong != value else str(int(float(value)) + 1)


def _resay(form: Form, action: Action, field: str, rng: random.Random) -> Action | None:
    """`action` re-said in its own wording with another value in `field`, or None when it
    is not in `form`."""
    found = form.read(action.content)
    if found is None or field not in found[1]:
        return None
    index, fields = found
    fields[field] = _wrong(fields[field], rng)
    return Action(action.actor, form.at(index, **fields), action.tool, action.tool_args)


def _note(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """A note on the running total, with a misread total on the same side of the total
    before the last step (a note says whether the pile grew or shrank)."""
    for form, up in ((NOTE_UP, True), (NOTE_DOWN, False)):
        found = form.read(action.content)
        if found is None:
            continue
        index, fields = found
        previous = float(fields.get("previous") or progress(history, action.actor).previous)
        keep = lambda v, up=up, previous=previous: (v >= previous) == up  # noqa: E731
        fields["total"] = _wrong(fields["total"], rng, keep)
        same = (float(fields["total"]) >= previous) == up
        other = form if same else (NOTE_DOWN if up else NOTE_UP)
        return Action(action.actor, other.at(index, **fields))
    return None


@covers("react", "code_act", "expert_chat")
def misread_total(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """perception.misread_value: a lone agent's (or the group chat's planner's) plan, note,
    confirmation, recap or answer states a misread running total (the plan a misread
    start); the next steps work from it."""
    problem = shown_problem(history)
    if problem is None or action.actor not in ("assistant", PLANNER):
        return None
    if action.tool == "final_answer":
        answer = str((action.tool_args or {}).get("answer", ""))
        if not re.fullmatch(_NUM, answer) or answer_action("assistant", answer, history) != action:
            return None
        return answer_action("assistant", _wrong(answer, rng), history)
    if action.tool is not None:
        return None
    for form, field in _SOLO:
        replaced = _resay(form, action, field, rng)
        if replaced is not None:
            return replaced
    return _note(action, rng, history)


@covers("solver_verifier", "expert_chat")
def distorted_total(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """coordination.distorted_handoff: a check-in or report of the solver, or the
    verifier's acknowledgement or spot-check note, passes on another running total than the
    one found; or the verifier's re-check request quotes the calculation with a miscopied
    total. The other agent works from what it was told."""
    if shown_problem(history) is None or action.tool is not None:
        return None
    for form, field in _HANDOFFS.get(action.actor, ()):
        replaced = _resay(form, action, field, rng)
        if replaced is not None:
            return replaced
    found = ASK.read(action.content) if action.actor == "verifier" else None
    if found is None:
        return None
    index, fields = found
    fields["expr"] = _mistyped_expr(fields["expr"], 0, rng)
    return Action("verifier", ASK.at(index, **fields))


def _mistyped_expr(expr: str, position: int, rng: random.Random) -> str:
    """`expr` (`a op b`) with the operand at `position` (the running total) mistyped; a
    divided total stays divisible when it can."""
    parts = expr.split()
    sym, other = parts[1], parts[2 - position]
    ok: Callable[[float], bool] = lambda v: True  # noqa: E731
    if sym == "/" and position == 0:
        ok = lambda v: v % float(other) == 0  # noqa: E731
    parts[2 * position] = _wrong(parts[2 * position], rng, ok)
    return " ".join(parts)


_CHECKS = ((RECHECK, 0), (SWAP, 2), (SELF_CHECK, 0))
"""Re-checks that repeat a calculation, and which operand of it is the running total."""
_CODE_CHECK = re.compile(
    rf"^total = (?P<total>{_NUM})\nprevious = total (?P<sym>[-+*]|//) (?P<n>{_NUM})\n"
    rf"assert previous == (?P<previous>{_NUM}), previous\nprint\(previous\)$"
)
_PY = {"-": int.__sub__, "+": int.__add__, "*": int.__mul__, "//": int.__floordiv__}


@covers("react", "solver_verifier", "code_act")
def mistyped_check(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """action.wrong_tool_argument: a re-check, spot check, retry or test program typed on a
    mistyped running total, which the step takes for the right one: a re-check computes
    from it, an undo check or a test program expects back what undoing it gives, a retry
    multiplies it. Its result is the running total from then on."""
    if shown_problem(history) is None:
        return None
    if action.tool == "run_python":
        return _mistyped_test(action, rng)
    expression = str((action.tool_args or {}).get("expression", ""))
    if action.tool != "calculator":
        return None
    for form, position in _CHECKS:
        found = form.read(action.content)
        if found is not None and found[1]["expr"] == expression:
            expr = _mistyped_expr(expression, position // 2, rng)
            return _calc(action, form.at(found[0], expr=expr), expr)
    found = UNDO.read(action.content)
    if found is not None and found[1]["expr"] == expression and _EXPR.match(expression):
        out, sym, n = expression.split()
        if "." in out:  # a rounded total: the undo would not give a whole number back
            return None
        ok = (lambda v: v % float(n) == 0) if sym == "/" else (lambda v: True)
        expr = f"{_wrong(out, rng, ok)} {sym} {n}"
        back = calculate(expr)
        if not re.fullmatch(r"-?\d+", back):  # a rounded claim would not match its sum
            return None
        return _calc(action, UNDO.at(found[0], expr=expr, previous=back), expr)
    found = RETRY.read(action.content)
    if found is not None and expression == f"{found[1]['a']} x {found[1]['n']}":
        a = _wrong(found[1]["a"], rng)
        return _calc(action, RETRY.at(found[0], a=a, n=found[1]["n"]), f"{a} x {found[1]['n']}")
    return None


def _calc(action: Action, text: str, expression: str) -> Action:
    return Action(action.actor, text, "calculator", {"expression": expression})


def _mistyped_test(action: Action, rng: random.Random) -> Action | None:
    """A test program (undo the last step, assert the old total) written on a mistyped
    total, asserting the old total that undoing it gives: it passes, and the agent goes on
    from the mistyped total."""
    found = CODE_CHECK.read(action.content)
    m = _CODE_CHECK.match(str((action.tool_args or {}).get("code", "")))
    if found is None or m is None or "." in m.group("total") + m.group("n"):
        return None
    n = int(m.group("n"))
    total = int(_wrong(m.group("total"), rng))
    previous = _PY[m.group("sym")](total, n)
    code = (
        f"total = {total}\nprevious = total {m.group('sym')} {n}\n"
        f"assert previous == {previous}, previous\nprint(previous)"
    )
    fields = {"total": total, "previous": previous}
    return Action(action.actor, CODE_CHECK.at(found[0], **fields), "run_python", {"code": code})
