"""The arithmetic steps that the policies and the operators both build and read back (an
operation step, a `print(a op b)` program, a proposal, an answer, an approval) and what
the visible history says so far (the problem, the running total, the last send-back), so
that an operator's replacement is built the way the policy builds its own steps.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from whowhen.agents import phrasing
from whowhen.benchmarks.arithmetic.phrases import (
    _ANSWERS,
    _APPROVALS,
    _CHECK_STARTS,
    _NUM,
    _PATTERNS,
    _PLANS,
    _PROPOSAL_RES,
    _STYLES,
    _TEMPLATES,
    PROPOSALS,
    REDO_RE,
    REJECTION_RE,
    STATEMENTS,
    UNDO,
    _words,
)
from whowhen.benchmarks.arithmetic.tasks import OPS, SYMBOL_TO_OP, parse_problem, parse_story
from whowhen.runtime import Action, Step
from whowhen.tools import TERMINAL, code_output

CODE_TOOLS = ("run_python", TERMINAL)
"""The tools that run a program: code-as-action's, and a group chat's terminal."""

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


def said(content: str) -> str:
    """A step's words without the program it quotes (a group chat's expert writes its
    code into the message, as a fenced block under the words)."""
    return content.split("\n```", 1)[0]


def step_style(action: Action | Step) -> int:
    """The wording an operation step uses (0 when it is not one)."""
    stated = _stated(said(action.content))
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


def plan_action(history: Sequence[Step], actor: str) -> Action:
    """A lone agent's plan: it names the start, which the first operation works from."""
    start, ops = _problem(history)
    name, item = parse_story(_task_text(history))
    text = phrasing.phrase(
        history, "arith.plan", _PLANS, name=name, item=item, start=start, k=_words(len(ops))
    )
    return Action(actor, text)


def approval_action(
    answer: str, k: int, history: Sequence[Step], actor: str = "verifier", end: str = ""
) -> Action:
    """The verifier's approval, worded by the draw at this step (`end`: a closing word
    after it, such as a group chat's TERMINATE)."""
    text = phrasing.phrase(history, "arith.approve", _APPROVALS, answer=answer, k=k)
    return Action(actor, f"{text}{end}", "final_answer", {"answer": answer})


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
    return code_output(nxt.content) if nxt.kind == "observation" else None


def progress(
    history: Sequence[Step], actor: str, since: int = 0, tool: str = "calculator"
) -> Progress:
    """The operation steps `actor` made after index `since` (calculator or code steps), and
    the running total as the agents last stated it there (`belief`): what the next step
    works from. `previous` is the total the last operation step said it started from."""
    start, _ = _problem(history)
    read = parse_calc if tool == "calculator" else parse_code
    steps, outputs = [], []
    for i in range(since, len(history)):
        s = history[i]
        parsed = read(s) if s.actor == actor and s.tool == tool else None
        if parsed is not None:
            steps.append(s)
            out = history[i + 1] if i + 1 < len(history) else None
            outputs.append(
                code_output(out.content) if out is not None and out.kind == "observation" else ""
            )
    last = read(steps[-1]) if steps else None
    previous = last[1] if last is not None else str(start)
    return Progress(steps, outputs, belief(history, since), previous)


# --- the belief: the running total the last statement gave -----------------------------

_CODE_TOTAL = re.compile(rf"^total = ({_NUM})\n")
_RETRY_EXPR = re.compile(rf"^({_NUM}) x ({_NUM})$")


def _number(text: str | None) -> str | None:
    return text if text is not None and re.fullmatch(_NUM, text) else None


def stated_total(history: Sequence[Step], index: int) -> str | None:
    """The running total that the agent step at `index` states, or None when it states
    none: a calculation's or re-check's printed result (the agent reads it), the total an
    undo check or a test program starts from, the total a retry is typed on, and the total
    a message names (a plan's start, a note, a check-in, an acknowledgement, a proposal)."""
    step = history[index]
    nxt = history[index + 1] if index + 1 < len(history) else None
    out = code_output(nxt.content) if nxt is not None and nxt.kind == "observation" else None
    args = step.tool_args or {}
    if step.tool == "calculator":
        expr = str(args.get("expression", "")).strip()
        retry = _RETRY_EXPR.match(expr)
        if retry:
            return retry.group(1)
        undo = _EXPR.match(expr) if UNDO.read(step.content) else None
        return undo.group(1) if undo else _number(out)
    if step.tool in CODE_TOOLS:
        if parse_code(step) is not None:
            return _number(out)
        check = _CODE_TOTAL.match(str(args.get("code", "")))
        return check.group(1) if check else None
    if step.tool is None:
        redo = REDO_RE.match(step.content)
        if redo:
            return redo.group("a")
        for form, field in STATEMENTS:
            fields = form.fields(step.content)
            if fields is not None:
                return fields[field]
    return None


def belief(history: Sequence[Step], since: int = 0) -> str:
    """The running total as the agents last stated it after index `since` (the problem's
    start when none did): later steps work from what an agent said, so a wrong number
    said anywhere is carried to the answer."""
    for i in range(len(history) - 1, max(since, 1) - 1, -1):
        if history[i].is_agent_step:
            total = stated_total(history, i)
            if total is not None:
                return total
    return str(_problem(history)[0])


def _last_agent(history: Sequence[Step], actor: str | None = None) -> Step | None:
    for s in reversed(history):
        if s.is_agent_step and (actor is None or s.actor == actor):
            return s
    return None


def redo_offset(history: Sequence[Step], since: int) -> int:
    """How many calculations stand before the restart at `since`: a rejection of
    calculation i keeps the i - 1 before it; a rejection of the count keeps none."""
    redo = REDO_RE.match(history[since].content) if since else None
    return int(redo.group("i")) - 1 if redo else 0


def restart_point(history: Sequence[Step], verifier: str = "verifier") -> int:
    """Index of the verifier's last send-back (0 if none): the solver starts over there."""
    for i in range(len(history) - 1, 0, -1):
        s = history[i]
        if s.actor == verifier and s.tool is None and REJECTION_RE.match(s.content):
            return i
    return 0


# --- code as action: one `print(<total> <op> <n>)` program per operation -------------------

_PY_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "//"}
_PY_OP = {sym: op for op, sym in _PY_SYMBOL.items()}
_CODE = re.compile(rf"^print\(({_NUM}) (\+|-|\*|//) ({_NUM})\)$")


def code_action(
    actor: str,
    op: str,
    a: str,
    n: str,
    code_a: str | None = None,
    style: int = 0,
    tool: str = "run_python",
) -> Action:
    """A code step: the stated intent, and the program actually run (`code_a` differs from
    `a` only for an action error: right intent, mistyped total). Division is exact in this
    benchmark, so the program uses `//` and prints an integer. For the terminal, the
    message also quotes the program, as a group chat's expert writes it."""
    code = f"print({code_a if code_a is not None else a} {_PY_SYMBOL[op]} {n})"
    text = _TEMPLATES[op][style % _STYLES].format(n=n, a=a)
    if tool == TERMINAL:
        text = f"{text}\n```python\n{code}\n```"
    return Action(actor, text, tool, {"code": code})


def parse_code(action: Action | Step) -> tuple[str, str, str, str] | None:
    """(op, a, n, code_a) of a code step in the form `code_action` writes, else None."""
    if action.tool not in CODE_TOOLS or not action.tool_args:
        return None
    m = _CODE.match(str(action.tool_args.get("code", "")).strip())
    stated = _stated(said(action.content))
    if not m or not stated:
        return None
    code_a, sym, n = m.groups()
    return _PY_OP[sym], stated[1], n, code_a
