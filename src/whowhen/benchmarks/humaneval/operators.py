"""Error operators for the HumanEval steps and messages, one per taxonomy mode.

Every replacement is a step the reference policy could have written with a wrong belief
(issue 19, coherent errors): it is built from the policy's own builders and phrasings
(drawn for the same step index, so it uses the same wording family), and what its text
says agrees with what it does. A code step's text never restates the code, so a code with
a bug or a copy slip is what the agent believes the solution is, and the text stays the
policy's; the copy slip never reads a name the program does not define (a NameError the
step alone would show). A report, approval or hand-off uses the policy's own message for
the wrong belief (the draft passes; the draft is ready); a premature submission says it
submits and why.

Dropped (mode, system) pairs: none (no mode here needs a step that contradicts itself).
Not covered: `planning.premature_finish` on `pipeline`: only the reviewer submits there,
and its only premature move would be to submit before the tester reports, which the
pipeline's turn order never gives it; a tester that submits is a role the reference
tester never plays (its role alone would mark the step), so that branch was removed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from whowhen.agents.scripted import addressee
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.humaneval.actions import kind_of, split_program
from whowhen.benchmarks.humaneval.mutate import mutate_code, transcription_typo, truncate_body
from whowhen.benchmarks.humaneval.steps import (
    approval,
    early_submission,
    entry_of,
    handoff,
    pass_report,
    report_counts,
    report_passes,
    task_prompt,
)
from whowhen.benchmarks.humaneval.tasks import visible_examples
from whowhen.runtime import Action, Step

_CODE_ARG = {"write_code": "code", "run_python": "code", "final_answer": "answer"}


def _rewrite_solution(action: Action, change: Callable[[str], str | None]) -> Action | None:
    """The code action with its solution part changed (the check that a code action runs
    after it stays as it was); None when there is no code or no change."""
    key = _CODE_ARG.get(action.tool or "")
    code = str((action.tool_args or {}).get(key, "")) if key else ""
    if "def " not in code or kind_of(code) == "survey":
        return None
    head, tail = split_program(code)
    changed = change(head)
    if changed is None:
        return None
    return Action(action.actor, action.content, action.tool, {key: changed + tail})


@covers("code_act", "pipeline")
def logic_bug(action: Action, rng: random.Random) -> Action | None:
    """reasoning.logic_bug: the code written, run or submitted has a bug (the check that a
    code action runs after its solution stays as it was)."""
    return _rewrite_solution(action, lambda head: mutate_code(head, rng))


@covers("pipeline")
def false_approval(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """verification.false_approval: the tester reports a failing draft as passing (its
    own pass report), or the reviewer, reading the failure report as a pass, approves and
    submits the last draft (its own approval, with the draft as the answer)."""
    if action.tool is not None or not history or report_counts(action.content) is None:
        return None
    if report_passes(action.content):
        return None
    step = Step(len(history), action.actor, "message", action.content)
    entry = entry_of(task_prompt(history))
    if action.actor == "tester" and addressee(step) == "reviewer":
        return pass_report(history, entry, len(visible_examples(task_prompt(history))))
    if action.actor == "reviewer" and addressee(step) == "coder":
        return approval(history, entry)
    return None


def _sent_back(history: Sequence[Step]) -> bool:
    """Whether the reviewer's last message sent the coder back with failing examples and
    the coder has not saved a new draft since."""
    agent = [s for s in history if s.is_agent_step]
    backs = [
        i
        for i, s in enumerate(agent)
        if s.actor == "reviewer" and addressee(s) == "coder" and report_counts(s.content)
    ]
    return bool(backs) and not any(s.tool == "write_code" for s in agent[backs[-1] :])


def ignored_message(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """coordination.ignored_message: sent back by the reviewer, the coder re-sends its
    hand-off as if the feedback had not come, without reproducing or fixing the failure
    (its own hand-off: it believes the saved draft is the one to test)."""
    if action.actor != "coder" or action.tool not in ("run_python", "write_code"):
        return None
    if not history or not _sent_back(history):
        return None
    return handoff(history, entry_of(task_prompt(history)))


@covers("code_act")
def premature_finish(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """planning.premature_finish: (code as action) a draft or a fix is submitted, cut
    short, instead of run on the examples; the text says it submits without a run."""
    if action.tool != "run_python" or action.actor != "assistant":
        return None
    code = str((action.tool_args or {}).get("code", ""))
    if kind_of(code) != "examples" or "def " not in code:
        return None
    solution = split_program(code)[0].rstrip() + "\n"
    partial = truncate_body(solution, rng)
    if partial is None:
        return None
    return early_submission(history, entry_of(solution), partial)


@covers("pipeline")
def wrong_tool_argument(action: Action, rng: random.Random) -> Action | None:
    """action.wrong_tool_argument: the program written, run or submitted is a copy of the
    intended one with one transcription error (a line left out, two digits swapped, a short
    name written as another short local name); the copy defines every name it reads, and
    the text stays the policy's (it never restates the code)."""
    return _rewrite_solution(action, lambda head: transcription_typo(head, rng))


OPERATORS = {
    "reasoning.logic_bug": logic_bug,
    "verification.false_approval": false_approval,
    "coordination.ignored_message": ignored_message,
    "planning.premature_finish": premature_finish,
    "action.wrong_tool_argument": wrong_tool_argument,
}
"""Taxonomy mode -> operator for this benchmark's code actions and pipeline messages."""
