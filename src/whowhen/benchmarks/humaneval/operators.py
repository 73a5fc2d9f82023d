"""Error operators for the HumanEval steps and messages, per taxonomy mode.

Every kind of agent step must be a place where a coherent, decisive error can
go, with a similar chance per step. Every step of the reference policies states or acts
on the task's key line (`variants`): plans, notes, hand-offs, reports, requests, questions
and answers quote it, every program contains it, and every later program takes it from
the most recent step that stated it (`steps.believed`). The key-line operators replace the
line a step states with one of the task's subtle variants (a wrong line that keeps the
docstring examples passing and fails the hidden tests): in the quote of a message or note,
or in the program of a code step. The rest of the step is the policy's own (its phrasing,
and a code step's text never restates the code), so the step reads as one decision, wrong
only given the task, and the wrong line is what the run submits.

Where each mode applies:

- `reasoning.logic_bug` (write_code, run_python, final_answer): the program's key line is
  a logic variant (a comparison, bound, operator, `and`/`or`, `not`, `min`/`max`, a return
  value or a number).
- `action.wrong_tool_argument` (the same code steps): the key line miscopied (a short name
  or two digits swapped, a number one off).
- `reasoning.wrong_operand` (run_python): the key line uses another local variable, its
  operands swapped, or a number one off.
- `perception.misread_value` (a message, a note, or the survey's text): the line quoted is
  a variant (the agent reads its own line wrongly).
- `reasoning.wrong_operator` (a message or note): the quoted line applies another operator.
- `coordination.distorted_handoff` (a message between agents): the line passed on differs.
- `action.wrong_tool` (the tester's run_tests): it runs the examples with a program of its
  own, the draft as it believes it is, typed with a wrong key line, instead of run_tests.
- `verification.false_approval` (the tester's failure report): reported as a pass.
- `coordination.ignored_message` (the reviewer after a failure report): it approves and
  submits as if the report had not been sent (its own step when no report has come).
- `planning.premature_finish` (code as action, a run of the examples): the draft is
  submitted, cut short, instead of run.

Every operator applies only in tasks whose key line has subtle variants (`_key`), the
premature finish included, so no mode favours its own kinds of step; the exceptions are
the false approval and the ignored message, which need a failure report (a buggy first
draft that the coder's own try missed: a few runs in ten) and would otherwise almost
never apply, and whose steps are rare enough not to tilt the kinds.

Dropped (mode, system) pairs: none (no mode here needs a step that contradicts itself).
Not covered: `planning.premature_finish` on `pipeline`: only the reviewer submits there,
and its only premature move would be to submit before the tester reports, which the
pipeline's turn order never gives it; a tester that submits is a role the reference
tester never plays (its role alone would mark the step).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.agents.scripted import addressee
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.humaneval.actions import kind_of, program_for, split_program
from whowhen.benchmarks.humaneval.mutate import truncate_body
from whowhen.benchmarks.humaneval.steps import (
    CODE_TOOLS,
    _code,
    _line_at,
    approval,
    believed,
    early_submission,
    entry_of,
    pass_report,
    quoted,
    report_counts,
    report_passes,
    task_prompt,
    with_line,
)
from whowhen.benchmarks.humaneval.tasks import visible_examples
from whowhen.benchmarks.humaneval.variants import KeyLine, key_line
from whowhen.runtime import Action, Step

_CODE_ARG = {"write_code": "code", "run_python": "code", "final_answer": "answer"}
LOGIC = (
    "arith",
    "bool",
    "boolop",
    "clause",
    "compare",
    "constant",
    "name",
    "negation",
    "off_by_one",
    "operands",
    "return",
    "swap",
)
"""Variant kinds that are a wrong idea (a logic bug)."""
COPY = ("constant", "off_by_one", "typo")
"""Variant kinds that are a wrong copy (a miscopied name or number)."""
OPERATOR = ("arith", "bool", "boolop", "compare", "negation", "swap")
"""Variant kinds that apply another operation to the same operands."""
OPERAND = ("constant", "name", "off_by_one", "operands")
"""Variant kinds that apply the same operation to another quantity."""
ANY = tuple(sorted({*LOGIC, *COPY}))


def _key(history: Sequence[Step]) -> KeyLine | None:
    """The task's key line, when the history is a HumanEval run with subtle variants.
    Every operator applies only in those tasks, so that in a run every kind of step has
    the same chance to hold the decisive error (a mode that could also apply elsewhere
    would favour its own kinds of step)."""
    if not history:
        return None
    key = key_line(task_prompt(history))
    return key if key is not None and key.variants else None


def _pick(key: KeyLine, current: str, kinds: Sequence[str], rng: random.Random) -> str | None:
    """A variant of the key line of one of `kinds`, other than the line stated now."""
    options = sorted({v for v, kind in key.variants if kind in kinds and v != current})
    return rng.choice(options) if options else None


def _restate(
    action: Action, history: Sequence[Step], kinds: Sequence[str], rng: random.Random
) -> Action | None:
    """The step with the key line its text quotes replaced by a variant (nothing else in
    the step depends on it); None for a program, which states the line in its code."""
    key, line = _key(history), quoted(action.content)
    code_step = action.tool in CODE_TOOLS and "def " in _code_of(action)
    if key is None or line is None or code_step:
        return None
    new = _pick(key, line, kinds, rng)
    if new is None:
        return None
    text = action.content.replace(f"`{line}`", f"`{new}`", 1)
    return Action(action.actor, text, action.tool, action.tool_args)


def varied(
    code: str, history: Sequence[Step], kinds: Sequence[str], rng: random.Random
) -> str | None:
    """`code` with its solution's key line replaced by a subtle variant of `kinds` (the
    checks the program runs after the solution kept), or None where there is none."""
    key = _key(history)
    if key is None or "def " not in code:
        return None
    head, tail = split_program(code)
    line = _line_at(head, key)
    new = _pick(key, line, kinds, rng) if line is not None else None
    if new is None:
        return None
    solution = with_line(head, history, new)
    return f"{solution.rstrip()}\n\n\n{tail}" if tail else solution


def _code_of(action: Action) -> str:
    key = _CODE_ARG.get(action.tool or "")
    return str((action.tool_args or {}).get(key, "")) if key else ""


def _recode(
    action: Action, history: Sequence[Step], kinds: Sequence[str], rng: random.Random
) -> Action | None:
    """The code step with its program's key line replaced by a variant (a check that the
    program runs after the solution stays as it was)."""
    code = _code_of(action)
    program = varied(code, history, kinds, rng) if kind_of(code) != "survey" else None
    if program is None:
        return None
    arg = _CODE_ARG[str(action.tool)]
    return Action(action.actor, action.content, action.tool, {arg: program})


@covers("code_act", "pipeline")
def logic_bug(action: Action, rng: random.Random, history: Sequence[Step] = ()) -> Action | None:
    """reasoning.logic_bug: the program written, run or submitted has a wrong key line
    (a subtle logic variant), which every later program keeps."""
    return _recode(action, history, LOGIC, rng)


@covers("code_act", "pipeline")
def wrong_tool_argument(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """action.wrong_tool_argument: the program written, run or submitted is the intended
    one with its key line miscopied (a short name or two digits swapped, a number one
    off); the copy defines every name it reads, and the text stays the policy's."""
    return _recode(action, history, COPY, rng)


@covers("code_act", "pipeline")
def wrong_operand(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """reasoning.wrong_operand: the program run has its key line apply the right operation
    to a wrong quantity (another local variable, the operands swapped, a number off)."""
    return _recode(action, history, OPERAND, rng)


@covers("code_act", "pipeline")
def misread_value(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """perception.misread_value: a plan, note or message quotes the key line wrongly (the
    agent reads its own line as a variant), and every later step works from that."""
    return _restate(action, history, ANY, rng)


@covers("code_act", "pipeline")
def wrong_operator(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """reasoning.wrong_operator: a plan, note or message states the key line with another
    operator (comparison, arithmetic, `and`/`or`, `not`, `min`/`max`)."""
    return _restate(action, history, OPERATOR, rng)


@covers("pipeline")
def distorted_handoff(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """coordination.distorted_handoff: a message to another agent passes the key line on
    as a variant; the receiver writes, runs or submits that line."""
    if action.tool is not None or not action.content.startswith("To "):
        return None
    return _restate(action, history, ANY, rng)


@covers("pipeline")
def wrong_tool(action: Action, rng: random.Random, history: Sequence[Step] = ()) -> Action | None:
    """action.wrong_tool: instead of run_tests on the saved draft, the tester runs the
    docstring examples with run_python on the draft as it believes it is, typed with a
    wrong key line (the way some reference testers run them, so the form is no tell); it
    reports on (and the reviewer submits) that line."""
    key = _key(history)
    if action.tool != "run_tests" or action.actor != "tester" or key is None:
        return None
    saved = [s for s in history if s.tool == "write_code"]
    new = _pick(key, believed(history), ANY, rng) if saved else None
    if new is None:
        return None
    draft = with_line(_code(saved[-1]), history, new)
    examples = visible_examples(task_prompt(history))
    return Action("tester", action.content, "run_python", {"code": program_for(draft, examples)})


@covers("pipeline")
def false_approval(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """verification.false_approval: the tester reports a failing draft as passing (its
    own pass report); the reviewer approves it unless it asks for a re-run first."""
    if action.tool is not None or not history or action.actor != "tester":
        return None
    if report_counts(action.content) is None or report_passes(action.content):
        return None
    if addressee(Step(len(history), "tester", "message", action.content)) != "reviewer":
        return None
    if key_line(task_prompt(history)) is None:  # not a HumanEval run
        return None
    prompt = task_prompt(history)
    return pass_report(history, entry_of(prompt), len(visible_examples(prompt)))


@covers("pipeline")
def ignored_message(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """coordination.ignored_message: the reviewer, given the tester's failure report,
    acts as if it had not been sent: it approves and submits the saved draft, as it does
    when no report has come (its own approval)."""
    if action.actor != "reviewer" or action.tool is not None or not history:
        return None
    step = Step(len(history), "reviewer", "message", action.content)
    if addressee(step) != "coder" or report_counts(action.content) is None:
        return None
    if key_line(task_prompt(history)) is None:  # not a HumanEval run
        return None
    reports = [s for s in history if s.actor == "tester" and addressee(s) == "reviewer"]
    if not reports or report_passes(reports[-1].content):
        return None
    return approval(history, entry_of(task_prompt(history)))


@covers("code_act")
def premature_finish(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """planning.premature_finish: (code as action) a draft or a fix is submitted, cut
    short, instead of run on the examples; the text says it submits without a run."""
    if action.tool != "run_python" or action.actor != "assistant" or _key(history) is None:
        return None
    code = str((action.tool_args or {}).get("code", ""))
    if kind_of(code) != "examples" or "def " not in code:
        return None
    solution = split_program(code)[0].rstrip() + "\n"
    partial = truncate_body(solution, rng)
    if partial is None:
        return None
    return early_submission(history, entry_of(solution), partial)


OPERATORS = {
    "reasoning.logic_bug": logic_bug,
    "action.wrong_tool_argument": wrong_tool_argument,
    "reasoning.wrong_operand": wrong_operand,
    "perception.misread_value": misread_value,
    "reasoning.wrong_operator": wrong_operator,
    "coordination.distorted_handoff": distorted_handoff,
    "action.wrong_tool": wrong_tool,
    "verification.false_approval": false_approval,
    "coordination.ignored_message": ignored_message,
    "planning.premature_finish": premature_finish,
}
"""Taxonomy mode -> operator for this benchmark's code actions and pipeline messages."""
