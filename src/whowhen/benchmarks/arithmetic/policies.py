"""Scripted reference policies for the arithmetic benchmark.

Every system decides *only* from the visible history: it re-reads the problem from
step 0 and takes the running total from the observation of its last operation step. So
an injected wrong number propagates to the end, exactly as it would for a model, unless
the verifier notices it (a recovery).

Runs read like an agent's (issue 19): a plan first, one calculation per operation in one
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
from dataclasses import dataclass

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedReact, ScriptedSolverVerifier
from whowhen.benchmarks.arithmetic.tasks import OPS, SYMBOL_TO_OP, parse_problem, parse_story
from whowhen.runtime import Action, Step

_NUM = r"-?\d+(?:\.\d+)?"

_TEMPLATES: dict[str, tuple[str, ...]] = {
    "add": (
        "Next, add {n} to the running total of {a}.",
        "The running total is {a}; the next sentence adds {n} to it, so I compute the sum.",
        "Adding {n} to {a} gives the new total.",
        "Now {a} plus {n}: the problem puts {n} more on the pile here.",
    ),
    "sub": (
        "Next, subtract {n} from the running total of {a}.",
        "The running total is {a}; the next sentence takes {n} away, so I subtract.",
        "Subtracting {n} from {a} gives the new total.",
        "Now {a} minus {n}: the problem removes {n} from the pile here.",
    ),
    "mul": (
        "Next, multiply the running total of {a} by {n}.",
        "The running total is {a}; the next sentence makes it {n} times as large, so I multiply.",
        "Multiplying {a} by {n} gives the new total.",
        "Now {a} times {n}: the problem scales the pile by {n} here.",
    ),
    "div": (
        "Next, divide the running total of {a} by {n}.",
        "The running total is {a}; the next sentence splits it into {n} equal groups, so I divide.",
        "Dividing {a} by {n} gives the new total.",
        "Now {a} divided by {n}: the problem keeps one of {n} equal groups here.",
    ),
}
"""Op -> the wordings of an operation step (the same count per op: an operator that
changes the op keeps the step's wording)."""


def _pattern(template: str) -> re.Pattern[str]:
    """A template read back: {a} and {n} become number groups (a repeat must match)."""
    out, seen = re.escape(template), set()
    for name in ("a", "n"):
        while f"\\{{{name}\\}}" in out:
            group = f"(?P={name})" if name in seen else f"(?P<{name}>{_NUM})"
            out = out.replace(f"\\{{{name}\\}}", group, 1)
            seen.add(name)
    return re.compile(f"^{out}$")


_PATTERNS = {op: tuple(_pattern(t) for t in ts) for op, ts in _TEMPLATES.items()}
_STYLES = len(_TEMPLATES["add"])

PROPOSALS = (
    "I have applied all {n} operations. Proposed answer: {total}.",
    "All {n} operations are done and the last result is {total}. Proposed answer: {total}.",
    "That was the last of the {n} operations; please check my work. Proposed answer: {total}.",
)
PROPOSAL = PROPOSALS[0]
_PROPOSAL_RES = tuple(
    re.compile(
        "^"
        + re.escape(p)
        .replace(r"\{n\}", r"(?P<n>\d+)")
        .replace(r"\{total\}", rf"(?P<total>{_NUM})", 1)
        .replace(r"\{total\}", "(?P=total)")
        + "$"
    )
    for p in PROPOSALS
)

_ANSWERS = (
    "All operations are done; the answer is {answer}.",
    "Every operation has been applied, so the answer is {answer}.",
    "Nothing is left to apply: {name} ends up with {answer} {item}, so the answer is {answer}.",
)
_APPROVALS = (
    "I checked all {k} calculations against the problem; they use the right operations. "
    "Final answer: {answer}.",
    "Each of the {k} calculations uses the operation its sentence asks for. "
    "Final answer: {answer}.",
    "The {k} operations match the problem one by one, and the proposal is the last "
    "result. Final answer: {answer}.",
)


def _words(k: int) -> str:
    names = [
        "no",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
    ]
    return names[k] if 0 <= k < len(names) else str(k)


# --- step builders and readers (shared with the operators) ----------------------------


def calc_action(
    actor: str, op: str, a: str, n: str, expr_a: str | None = None, style: int = 0
) -> Action:
    """An operation step: the stated intent in wording `style`, and the expression sent.

    `expr_a` differs from `a` only for an action error (right intent, wrong argument).
    """
    sym = OPS[op][1]
    return Action(
        actor,
        _TEMPLATES[op][style % _STYLES].format(n=n, a=a),
        "calculator",
        {"expression": f"{expr_a if expr_a is not None else a} {sym} {n}"},
    )


def _stated(text: str) -> tuple[str, str, str, int] | None:
    """(op, a, n, style) an operation step's text states, or None."""
    for op, patterns in _PATTERNS.items():
        for style, pattern in enumerate(patterns):
            m = pattern.match(text)
            if m:
                return op, m.group("a"), m.group("n"), style
    return None


_EXPR = re.compile(rf"^\s*({_NUM})\s*([-+*/])\s*({_NUM})\s*$")


def _is_check(text: str) -> bool:
    """A re-check or spot check of an earlier step (by its wording), not an operation."""
    return text.startswith(_CHECK_STARTS)


def parse_calc(action: Action | Step) -> tuple[str, str, str, str] | None:
    """(op, a, n, expr_a) of an operation step, read back from its text and expression
    (the total from the expression when the text states none); None for any other
    calculator call (a re-check, a retry)."""
    if action.tool != "calculator" or not action.tool_args or _is_check(action.content):
        return None
    m = _EXPR.match(str(action.tool_args.get("expression", "")))
    if not m:
        return None
    expr_a, sym, n = m.groups()
    stated = _stated(action.content)
    return SYMBOL_TO_OP[sym], stated[1] if stated else expr_a, n, expr_a


def step_style(action: Action | Step) -> int:
    """The wording an operation step uses (0 when it is not one)."""
    stated = _stated(action.content)
    return stated[3] if stated else 0


def proposal_action(actor: str, n: int | str, total: str, style: int = 0) -> Action:
    """The solver's proposal to the verifier, in wording `style`."""
    return Action(actor, PROPOSALS[style % len(PROPOSALS)].format(n=n, total=total))


def parse_proposal(text: str) -> tuple[str, str, int] | None:
    """(operation count, proposed total, wording) of a proposal, or None."""
    for style, pattern in enumerate(_PROPOSAL_RES):
        m = pattern.match(text)
        if m:
            return m.group("n"), m.group("total"), style
    return None


def answer_action(actor: str, answer: str, history: Sequence[Step]) -> Action:
    """The single agent's answer, worded by the draw at this step."""
    name, item = parse_story(_task_text(history))
    text = phrasing.phrase(history, "arith.answer", _ANSWERS, answer=answer, name=name, item=item)
    return Action(actor, text, "final_answer", {"answer": answer})


def approval_action(answer: str, k: int, history: Sequence[Step]) -> Action:
    """The verifier's approval, worded by the draw at this step."""
    text = phrasing.phrase(history, "arith.approve", _APPROVALS, answer=answer, k=k)
    return Action("verifier", text, "final_answer", {"answer": answer})


def _task_text(history: Sequence[Step]) -> str:
    return history[0].content.split("Problem: ", 1)[-1] if history else ""


def _problem(history: Sequence[Step]) -> tuple[int, list[tuple[str, int]]]:
    return parse_problem(_task_text(history))


# --- what the history says so far ----------------------------------------------------


@dataclass
class Progress:
    """An agent's operation steps since `since` and what they left: the running total
    (the output of the last one) and the total before it."""

    steps: list[Step]
    outputs: list[str]
    total: str
    previous: str


def _output(history: Sequence[Step], step: Step) -> str | None:
    """The observation that answered `step` (None if it was not answered)."""
    index = next((i for i, s in enumerate(history) if s.step == step.step), None)
    if index is None or index + 1 >= len(history):
        return None
    nxt = history[index + 1]
    return nxt.content.strip() if nxt.kind == "observation" else None


def progress(
    history: Sequence[Step], actor: str, since: int = 0, tool: str = "calculator"
) -> Progress:
    """The operation steps `actor` made after index `since` (calculator or code steps)."""
    start, _ = _problem(history)
    read = parse_calc if tool == "calculator" else parse_code
    steps, outputs = [], []
    for i in range(since, len(history)):
        s = history[i]
        if s.actor == actor and s.tool == tool and read(s) is not None:
            steps.append(s)
            out = history[i + 1] if i + 1 < len(history) else None
            outputs.append(
                out.content.strip() if out is not None and out.kind == "observation" else ""
            )
    totals = [str(start), *[o for o in outputs if o]]
    return Progress(steps, outputs, totals[-1], totals[-2] if len(totals) > 1 else totals[-1])


def _last_agent(history: Sequence[Step], actor: str | None = None) -> Step | None:
    for s in reversed(history):
        if s.is_agent_step and (actor is None or s.actor == actor):
            return s
    return None


# --- detours: plans, notes, re-checks, retries, recaps -------------------------------

_PLANS = (
    "{name} starts with {start} {item} and the story has {k} operations. I will apply "
    "them one at a time and keep a running total.",
    "Plan: read the {k} changes to {name}'s {item} in order, compute each with the "
    "calculator, and carry the total forward from {start}.",
    "There are {k} steps after the start of {start} {item}. Doing them in one go is "
    "error-prone, so I will do one calculation per sentence.",
)
_NOTES_UP = (
    "The total went up to {total} because {name} gained {item}; {left} operations to go.",
    "{total} is larger than {previous}, as expected after that step. That leaves {left} "
    "operations.",
    "Good, {total} now. The pile grew, so the next sentences start from a bigger number; "
    "{left} still to apply.",
)
_NOTES_DOWN = (
    "The total dropped to {total} because {name} has fewer {item} now; {left} operations to go.",
    "{total} is smaller than {previous}, which fits the sentence. That leaves {left} operations.",
    "Down to {total}. The next sentences start from this smaller number; {left} still to apply.",
)
_RECHECKS = (
    "Let me re-check that step: {expr} again.",
    "Before going on I recompute the last step as {expr} to be sure.",
    "A quick check of the previous calculation: {expr}.",
)
_SWAPS = (
    "To be safe I check the last step the other way round: {expr}.",
    "Checking with the operands swapped: {expr} should match.",
    "Same step, other order: {expr}.",
)
_UNDOS = (
    "Checking by undoing the last step: {expr} should give back {previous}.",
    "If that was right, {expr} returns {previous}. Let me confirm.",
    "Reverse check: {expr} ought to be {previous} again.",
)
_CONFIRMS = (
    "That matches, so {total} stands.",
    "Confirmed: the running total is {total}.",
    "The check agrees; I continue from {total}.",
)
_RETRIES = (
    "Let me try {a} x {n} on the calculator.",
    "Computing {a} x {n} now.",
    "I enter {a} x {n}.",
)
_RETRY_NOTES = (
    "The calculator does not take x for multiplication; I will use * instead.",
    "That failed because x is not an operator here. Retrying with *.",
    "Wrong symbol: the tool wants *, not x.",
)
_RECAPS = (
    "Recap: {name} started with {start} {item}; after {k} operations the running total is {total}.",
    "To sum up, {k} operations took the count from {start} to {total}.",
    "Looking back over the work: start {start}, {k} steps, last result {total}. Every "
    "sentence of the problem has been used.",
)
_INVERSE = {"add": "-", "sub": "+", "mul": "/", "div": "*"}
_SELF_CHECKS = (
    "I recompute the solver's last step myself: {expr}.",
    "Spot check of the latest calculation: {expr}.",
    "Let me verify the last result independently with {expr}.",
)
_CHECK_STARTS = tuple(t.split("{")[0] for t in (*_RECHECKS, *_SWAPS, *_UNDOS, *_SELF_CHECKS))
_COMMUTES = ("add", "mul")


def _check_expression(history: Sequence[Step], op_step: Step, key: str) -> tuple[str, str, str]:
    """(kind, expression, wording) of a re-check of `op_step` with its own numbers: the
    same sum again, the operands swapped, or the step undone from its result."""
    parsed = parse_calc(op_step) or parse_code(op_step)
    assert parsed is not None
    op, _, n, left = parsed
    out = _output(history, op_step) or ""
    kinds = ["again", "undo"] + (["swap"] if op in _COMMUTES else [])
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
        return Action(actor, phrasing.phrase(history, "arith.why", _RETRY_NOTES))
    style = phrasing.choose(history, "arith.calc", range(_STYLES))
    return calc_action(actor, op, done.total, str(n), style=style)


def _plan(history: Sequence[Step], actor: str) -> Action:
    start, ops = _problem(history)
    name, item = parse_story(_task_text(history))
    text = phrasing.phrase(
        history, "arith.plan", _PLANS, name=name, item=item, start=start, k=_words(len(ops))
    )
    return Action(actor, text)


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
            return _plan(history, "assistant")
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

_CHECKINS = (
    "Progress report: {k} of {n} operations done, running total {total}.",
    "Checking in after {k} operations: the total is {total} so far, {left} to go.",
    "Partial result for review: the first {k} operations give {total}.",
)
_CHECKIN_RE = re.compile(
    r"^(?:Progress report: (?P<a>\d+) of|Checking in after (?P<b>\d+) operations"
    r"|Partial result for review: the first (?P<c>\d+) operations)"
)
_REPORTS = (
    "Re-checked: the calculation gives {total} again, so the running total stands.",
    "I redid it and got {total} once more; no change.",
    "The re-check confirms {total}.",
)
_REPORT_RE = re.compile(r"^(?:Re-checked:|I redid it and got|The re-check confirms)")
_ACKS = (
    "Confirmed so far: the first {k} calculations use the operations the problem asks for. Go on.",
    "Looks right up to here ({k} calculations checked). Continue.",
    "The {k} calculations match the problem's sentences. Carry on from {total}.",
)
_RECHECK_ASKS = (
    "Before you go on, please re-check calculation {i}: I want that number confirmed.",
    "Calculation {i} deserves a second look; re-run it and tell me what you get.",
    "Please recompute step {i} once more before continuing.",
)
_RECHECK_ASK_RE = re.compile(
    r"^(?:Before you go on, please re-check calculation (\d+)|Calculation (\d+) deserves"
    r"|Please recompute step (\d+))"
)


def _asked_step(step: Step | None) -> int | None:
    """The calculation (1-based) a verifier's message asks the solver to re-check."""
    if step is None or step.actor != "verifier" or step.tool is not None:
        return None
    m = _RECHECK_ASK_RE.match(step.content)
    return int(next(g for g in m.groups() if g)) if m else None


_SELF_CHECK_NOTES = (
    "My spot check gives {value} as well. Confirmed so far; go on.",
    "Same value, {value}. The work up to here holds; continue.",
    "{value} again, matching your result. Carry on.",
)
_COUNT_REJECTS = (
    "Check failed: the problem has {k} operations but I count {c} calculations. Please redo "
    "the calculation from the start.",
    "Check failed: the problem lists {k} operations, yet there are {c} calculations. Please "
    "start over.",
    "Check failed: the problem needs {k} calculations and I see {c}. Redo it from the "
    "beginning, please.",
)
_OP_REJECTS = (
    "Check failed at calculation {i}: the problem asks to {verb} {n}, but the calculation "
    "uses '{used}'. Please redo the calculation from the start.",
    "Check failed at calculation {i}: the problem says {verb} {n}; the calculation uses "
    "'{used}' instead. Please start over.",
    "Check failed at calculation {i}: the problem wants '{sym}' here ({verb} {n}), not "
    "'{used}'. Redo from the beginning, please.",
)
REJECTION_RE = re.compile(r"^Check failed(?: at calculation \d+)?: the problem ")


def restart_point(history: Sequence[Step]) -> int:
    """Index of the verifier's last send-back (0 if none): the solver starts over there."""
    for i in range(len(history) - 1, 0, -1):
        s = history[i]
        if s.actor == "verifier" and s.tool is None and REJECTION_RE.match(s.content):
            return i
    return 0


class SolverVerifierSystem(ScriptedSolverVerifier):
    """Two agents: the solver computes, checks in with the verifier now and then, and
    proposes; the verifier checks the operations against the problem and either answers
    or sends the solver back to redo the work. Along the way it confirms partial results,
    sometimes asks for a re-check of a step, or recomputes one itself.

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
        done = progress(history, "solver", restart_point(history))
        last, mine = _last_agent(history), _last_agent(history, "solver")
        asked = _asked_step(last)
        if asked is not None and 1 <= asked <= len(done.steps):  # re-run the step asked
            _, expr, text = _check_expression(history, done.steps[asked - 1], "arith.asked")
            return Action("solver", text, "calculator", {"expression": expr})
        ask = _last_agent(history, "verifier")
        if _asked_step(ask) is not None and mine is not None and mine.tool == "calculator":
            text = phrasing.phrase(history, "arith.report", _REPORTS, total=done.total)
            return Action("solver", text)  # the re-check the verifier asked for is in
        k = len(done.steps)
        if k < len(ops):
            if (
                k >= 3
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
            return _detour(history, "solver", done, len(ops)) or _next_operation(
                history, "solver", done, ops
            )
        detour = _detour(history, "solver", done, len(ops))
        if detour is not None and detour.tool is not None:
            return detour
        style = phrasing.choose(history, "arith.propose", range(len(PROPOSALS)))
        return proposal_action("solver", len(ops), done.total, style)

    def verify(self, history: Sequence[Step], since: int) -> Action:
        _, ops = _problem(history)
        done = progress(history, "solver", restart_point(history))
        message = history[-1].content
        checkin = _CHECKIN_RE.match(message)
        partial = checkin is not None or _REPORT_RE.match(message) is not None
        count = len(done.steps)
        if count > len(ops) or (not partial and count != len(ops)):
            text = phrasing.phrase(history, "arith.reject", _COUNT_REJECTS, k=len(ops), c=count)
            return Action("verifier", text)
        checked = [] if partial else done.steps  # partial results: the full check comes last
        for i, (step, (op, n)) in enumerate(zip(checked, ops, strict=False), start=1):
            parsed = parse_calc(step)
            if parsed is None or parsed[0] != op:
                used = OPS[parsed[0]][1] if parsed else "?"
                fields = {"i": i, "verb": OPS[op][2], "n": n, "used": used, "sym": OPS[op][1]}
                text = phrasing.phrase(history, "arith.reject", _OP_REJECTS, **fields)
                return Action("verifier", text)
        if not partial:
            proposed = parse_proposal(message)
            answer = proposed[1] if proposed else ""
            return approval_action(answer, len(ops), history)
        if checkin is not None and count:
            roll = phrasing.draw(history, "arith.review")
            if roll < 0.3:
                i = 1 + int(phrasing.draw(history, "arith.which") * count)
                text = phrasing.phrase(history, "arith.ask", _RECHECK_ASKS, i=i)
                return Action("verifier", text)
            if roll < 0.55:
                parsed = parse_calc(done.steps[-1])
                assert parsed is not None
                expr = f"{parsed[3]} {OPS[parsed[0]][1]} {parsed[2]}"
                text = phrasing.phrase(history, "arith.self", _SELF_CHECKS, expr=expr)
                return Action("verifier", text, "calculator", {"expression": expr})
        text = phrasing.phrase(history, "arith.ack", _ACKS, k=count, total=done.total)
        return Action("verifier", text)

    def _after_self_check(self, history: Sequence[Step]) -> Action:
        value = history[-1].content.strip() if history[-1].kind == "observation" else "?"
        return Action(
            "verifier", phrasing.phrase(history, "arith.selfnote", _SELF_CHECK_NOTES, value=value)
        )


POLICIES: dict[str, type] = {"react": ReactSystem, "solver_verifier": SolverVerifierSystem}
"""System name -> this benchmark's scripted reference policy."""


# --- code as action: one `print(<total> <op> <n>)` program per operation -------------------

_PY_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "//"}
_PY_OP = {sym: op for op, sym in _PY_SYMBOL.items()}
_CODE = re.compile(rf"^print\(({_NUM}) (\+|-|\*|//) ({_NUM})\)$")


def code_action(
    actor: str, op: str, a: str, n: str, code_a: str | None = None, style: int = 0
) -> Action:
    """A code step: the stated intent, and the program actually run (`code_a` differs from
    `a` only for an action error: right intent, mistyped total). Division is exact in this
    benchmark, so the program uses `//` and prints an integer."""
    code = f"print({code_a if code_a is not None else a} {_PY_SYMBOL[op]} {n})"
    text = _TEMPLATES[op][style % _STYLES].format(n=n, a=a)
    return Action(actor, text, "run_python", {"code": code})


def parse_code(action: Action | Step) -> tuple[str, str, str, str] | None:
    """(op, a, n, code_a) of a code step in the form `code_action` writes, else None."""
    if action.tool != "run_python" or not action.tool_args:
        return None
    m = _CODE.match(str(action.tool_args.get("code", "")).strip())
    stated = _stated(action.content)
    if not m or not stated:
        return None
    code_a, sym, n = m.groups()
    return _PY_OP[sym], stated[1], n, code_a


_CODE_CHECKS = (
    "A small test of the last step: undo it and compare with {previous}.",
    "Let me assert that the last step can be reversed to {previous}.",
    "Sanity check in code: going back from {total} must give {previous}.",
)
_CODE_INVERSE = {"add": "-", "sub": "+", "mul": "//", "div": "*"}
_CODE_NOTES = (
    "The check passed, {total} stands; {left} operations left.",
    "Assertion held. Continuing from {total} with {left} operations to go.",
    "Good: the reverse step gives back the old total, so {total} is what the program computed.",
)
_CODE_RECAPS = (
    "Recap: {k} programs, one per operation, took the count from {start} to {total}.",
    "Every sentence of the problem has a program now; the last one printed {total}.",
    "Summing up the runs: start {start}, {k} operations, final output {total}.",
)


class CodeActSystem(ScriptedReact):
    """Single agent acting in code: a plan, one small program per operation, each reading
    the running total from the last program's output, now and then a test program that
    undoes the last step and asserts the old total, then a recap and the answer."""

    name = "code_act"

    def act(self, history: Sequence[Step]) -> Action:
        if len(history) <= 1:
            return _plan(history, "assistant")
        start, ops = _problem(history)
        done = progress(history, "assistant", tool="run_python")
        last = _last_agent(history, "assistant")
        name, item = parse_story(_task_text(history))
        fields = {"total": done.total, "previous": done.previous, "start": start}
        last_op = done.steps[-1] if done.steps else None
        if (
            last is not None
            and last_op is not None
            and last.step == last_op.step
            and phrasing.chance(history, "code.check", 0.25)
        ):
            op, _, n, left = parse_code(last_op) or ("add", "", "0", "")
            code = (
                f"total = {done.total}\nprevious = total {_CODE_INVERSE[op]} {n}\n"
                f"assert previous == {left}, previous\nprint(previous)"
            )
            text = phrasing.phrase(
                history, "code.check", _CODE_CHECKS, **{**fields, "previous": left}
            )
            return Action("assistant", text, "run_python", {"code": code})
        if (
            last is not None
            and last.tool == "run_python"
            and parse_code(last) is None
            and phrasing.chance(history, "code.note", 0.6)
        ):
            left = _words(len(ops) - len(done.steps))
            text = phrasing.phrase(history, "code.note", _CODE_NOTES, left=left, **fields)
            return Action("assistant", text)
        if len(done.steps) < len(ops):
            op, n = ops[len(done.steps)]
            style = phrasing.choose(history, "arith.calc", range(_STYLES))
            return code_action("assistant", op, done.total, str(n), style=style)
        if (
            last is not None
            and last.tool is None
            and last.content.startswith(("Recap:", "Every sentence", "Summing up"))
        ):
            return answer_action("assistant", done.total, history)
        text = phrasing.phrase(
            history, "code.recap", _CODE_RECAPS, k=len(ops), name=name, item=item, **fields
        )
        return Action("assistant", text)


POLICIES["code_act"] = CodeActSystem
