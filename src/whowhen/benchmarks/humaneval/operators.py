"""Error operators for the HumanEval steps and messages, one per taxonomy mode."""

from __future__ import annotations

import random
from collections.abc import Callable

from whowhen.agents.scripted import tell
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.humaneval.mutate import mutate_code, transcription_typo, truncate_body
from whowhen.benchmarks.humaneval.policies import (
    _APPROVE,
    _FAIL_RE,
    _FIX_RE,
    _HANDOFF,
    _NONE,
    _PASS,
    _RUN_RE,
    entry_of,
    solution_of,
)
from whowhen.benchmarks.humaneval.tasks import (
    EXAMPLES_MARKER,
)
from whowhen.runtime import Action

# --- operators -----------------------------------------------------------------------------

_CODE_ARG = {"write_code": "code", "run_python": "code", "final_answer": "answer"}


def _rewrite_solution(action: Action, change: Callable[[str], str | None]) -> Action | None:
    """The code action with its solution part changed (the example check that a code
    action runs after it stays as it was); None when there is no code or no change."""
    key = _CODE_ARG.get(action.tool or "")
    code = str((action.tool_args or {}).get(key, "")) if key else ""
    if "def " not in code:
        return None
    head, sep, tail = code.partition(EXAMPLES_MARKER)
    changed = change(head)
    if changed is None:
        return None
    return Action(action.actor, action.content, action.tool, {key: changed + sep + tail})


@covers("code_act", "pipeline")
def logic_bug(action: Action, rng: random.Random) -> Action | None:
    """reasoning.logic_bug: the code written, run or submitted has a bug (the check that a
    code action runs after its solution stays as it was)."""
    return _rewrite_solution(action, lambda head: mutate_code(head, rng))


@covers("pipeline")
def false_approval(action: Action, rng: random.Random) -> Action | None:
    """verification.false_approval: the tester reports a failing draft as passing, or the
    reviewer submits the draft the tester reported failing."""
    m = _FAIL_RE.match(action.content) if action.tool is None else None
    if m is None:
        return None
    role, entry, _, n = m.groups()
    if action.actor == "tester" and role == "reviewer":
        text = (_PASS if int(n) else _NONE).format(entry=entry, n=n)
        return tell("tester", "reviewer", text)
    if action.actor == "reviewer" and role == "coder":
        return Action("reviewer", _APPROVE.format(entry=entry), "final_answer", {"answer": ""})
    return None


def ignored_message(action: Action, rng: random.Random) -> Action | None:
    """coordination.ignored_message: sent back by the reviewer, the coder re-sends its
    hand-off as if the feedback had not come, without fixing the draft."""
    m = _FIX_RE.match(action.content) if action.tool == "write_code" else None
    if m is None or action.actor != "coder":
        return None
    return tell("coder", "tester", _HANDOFF.format(entry=m.group(1)))


@covers("code_act")
def premature_finish(action: Action, rng: random.Random) -> Action | None:
    """planning.premature_finish: the draft is submitted before the examples are run, or
    (code as action) the function is submitted before its body is finished."""
    if action.tool == "run_python" and action.actor == "assistant":
        return _submit_unfinished(action, rng)
    if action.tool != "run_tests":
        return None
    m = _RUN_RE.search(action.content)
    what = f"the draft of {m.group(1)}" if m else "the draft"
    text = f"{what[0].upper()}{what[1:]} looks complete; I will submit it."
    return Action(action.actor, text, "final_answer", {"answer": ""})


def _submit_unfinished(action: Action, rng: random.Random) -> Action | None:
    """The solution of a code step (solution + example check), cut short and submitted."""
    code = str((action.tool_args or {}).get("code", ""))
    if EXAMPLES_MARKER not in code or "def " not in code:
        return None
    solution = solution_of(code)
    partial = truncate_body(solution, rng)
    if partial is None:
        return None
    entry = entry_of(solution)
    text = f"I will implement {entry} and submit it."  # the policy's words, no run first
    return Action(action.actor, text, "final_answer", {"answer": partial})


@covers("pipeline")
def wrong_tool_argument(action: Action, rng: random.Random) -> Action | None:
    """action.wrong_tool_argument: the program written, run or submitted is a copy of the
    intended one with one transcription error (a line left out, two digits swapped, a short
    name mistyped)."""
    return _rewrite_solution(action, lambda head: transcription_typo(head, rng))


OPERATORS = {
    "reasoning.logic_bug": logic_bug,
    "verification.false_approval": false_approval,
    "coordination.ignored_message": ignored_message,
    "planning.premature_finish": premature_finish,
    "action.wrong_tool_argument": wrong_tool_argument,
}
"""Taxonomy mode -> operator for this benchmark's code actions and pipeline messages."""
