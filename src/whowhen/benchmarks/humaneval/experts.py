"""The expert group chat on HumanEval: a coding chat shaped like the AG2 group chats that
Who&When's Algorithm-Generated runs come from.

The Python_Expert states the plan and the key line (`variants`); the Testing_Expert names
the edge cases it will try. The Python_Expert writes the function and runs it on the
`Computer_terminal` (an observation, as AG2's executor prints it), the docstring examples
checked at the end of the program; on some tasks it starts from a buggy draft
(`steps.drafts`) that an example catches: the terminal shows the failure and it runs a
corrected version. A hasty Python_Expert (some tasks) starts from a buggy draft where the
task has one, tries it on one input of its own only, and asks the Testing_Expert to run
the examples. The Testing_Expert runs the code on its edge cases (and on the examples when
the Python_Expert did not run them) and reports to the Verification_Expert. A failure it
reports is sent back to the Python_Expert, who runs a corrected version and proposes it.
Otherwise the verifier may ask about an edge case that raised or about the code, and on
some tasks re-runs the examples itself; it approves with the code as `final_answer` and
TERMINATE.

Every step takes the key line from the most recent step that stated it
(`steps.believed`): a wrong line that the examples cannot show is what the verifier
approves. The verifier trusts the Testing_Expert's report and the Python_Expert's
proposal after a send-back; only its own re-run, on the careful tasks, looks again.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedExpertChat
from whowhen.benchmarks.humaneval.actions import (
    edge_rounds,
    kind_of,
    n_examples,
    probe_program,
    program_for,
)
from whowhen.benchmarks.humaneval.expert_forms import (
    ANSWER,
    ANSWER_CODE,
    APPROVE,
    CHECK,
    CHECKER,
    CODER,
    CODER_TO_TESTER,
    DRAFT,
    EDGES_OK,
    EDGES_RAISED,
    FAILURES,
    FIX,
    HANDOFF_ALL,
    HANDOFF_BARE,
    HANDOFF_QUICK,
    LOAD,
    PLAN,
    PROBE,
    PROBE_ALL,
    PROPOSE,
    QUESTION,
    QUESTION_CODE,
    QUICK,
    REDO,
    REJECT,
    REPORT_CRASH,
    REPORT_EDGES,
    REPORT_FAIL,
    REPORT_LOADS,
    REPORT_PASS,
    RERUN,
    TESTER,
    TESTER_PLAN,
    TESTER_PLAN_BARE,
    TESTER_REPORTS,
    crashed,
    current_solution,
    edge_summary,
    problem_of,
    program,
    reads_as,
    run_outcome,
    tester_program,
)
from whowhen.benchmarks.humaneval.steps import (
    _calls,
    _code,
    _feature,
    believed,
    drafts,
    entry_of,
    fixed_line,
    params_of,
    task_prompt,
    with_line,
)
from whowhen.benchmarks.humaneval.tasks import visible_examples
from whowhen.runtime import Action, Step
from whowhen.tools import TERMINAL, last_agent, output_after, programs

HASTY_P = 0.5
"""How often the Python_Expert is hasty (tasks with examples and edge cases): its first
draft is a buggy one where the task has one, and its first run only tries one input of
its own; the Testing_Expert runs the examples, and a bug they show is sent back (a
recovery)."""
CAREFUL_P = 0.35
"""How often the verifier re-runs the examples itself before approving (a per-task draw)."""
ASK_RAISED, ASK_CODE = 0.6, 0.2
"""How often the verifier asks the Python_Expert about an edge case that raised, or else
about how the code is written, before it approves (a per-task draw)."""
END = "\n\nTERMINATE"


def fields(history: Sequence[Step]) -> dict[str, object]:
    """What the steps of a task say: the entry function, its examples and the key line."""
    prompt = task_prompt(history)
    entry, n = entry_of(prompt), len(visible_examples(prompt))
    return {"entry": entry, "n": n, "count": n_examples(n), "line": believed(history)}


def edge_calls(history: Sequence[Step]) -> list[str]:
    """The Testing_Expert's inputs: the first call of each edge-case round (at most 3)."""
    return list(_edge_calls(task_prompt(history)))


@cache
def _edge_calls(prompt: str) -> tuple[str, ...]:
    rounds = edge_rounds(prompt, entry_of(prompt), visible_examples(prompt))
    return tuple(calls[0] for _, calls in rounds)[:3]


def hasty(history: Sequence[Step]) -> bool:
    """Whether the Python_Expert of this task is hasty (a per-task draw, see `HASTY_P`)."""
    examples = visible_examples(task_prompt(history))
    if not examples or not edge_calls(history):
        return False
    return phrasing.task_chance(history, "he.expert.hasty", HASTY_P)


def versions(history: Sequence[Step]) -> tuple[str, ...]:
    """The versions the Python_Expert writes in turn (`steps.drafts`: buggy drafts, then
    the reference; a hasty one starts from a buggy draft)."""
    return drafts(history, at_least=1 if hasty(history) else 0)


def next_version(history: Sequence[Step]) -> str:
    """The version the Python_Expert writes next, with the key line a fix keeps
    (`steps.fixed_line`)."""
    written = versions(history)
    k = min(len(programs(history, CODER)), len(written) - 1)
    return with_line(written[k], history, fixed_line(history))


def after_pass(history: Sequence[Step]) -> Action:
    """What the Python_Expert says after a run in which the examples passed: to the
    verifier after a send-back, else the hand-off to the Testing_Expert."""
    f = fields(history)
    if any(s.actor == CHECKER and s.is_agent_step for s in history):
        return Action(CODER, PROPOSE.say(history, **f))
    if not visible_examples(task_prompt(history)):
        return Action(CODER, HANDOFF_BARE.say(history, **f))
    return Action(CODER, HANDOFF_ALL.say(history, **f))


def tester_run(history: Sequence[Step], with_examples: bool) -> Action:
    """The Testing_Expert's program on the code under review: its edge cases, and the
    docstring examples when `with_examples` (or when it has no edge cases)."""
    f = fields(history)
    examples = visible_examples(task_prompt(history))
    calls = edge_calls(history)
    solution = current_solution(history)
    checks = examples if with_examples or not calls else ()
    if calls:
        form = PROBE_ALL if checks else PROBE
        text = form.say(history, **f, calls=_calls(calls))
        return program(TESTER, text, tester_program(solution, checks, calls))
    form = RERUN if checks else LOAD
    return program(TESTER, form.say(history, **f), tester_program(solution, checks, ()))


def report(history: Sequence[Step], run: Step, read_as_passing: bool = False) -> Action:
    """The Testing_Expert's report on its program `run` (a failure read as a pass when
    `read_as_passing`)."""
    f = fields(history)
    examples = visible_examples(task_prompt(history))
    out = output_after(history, run)
    code = _code(run)
    ok, passed, checked, _ = run_outcome(out)
    sample, raised = edge_summary(out)
    if read_as_passing:
        checked = checked or (len(examples) if kind_of(code) == "examples" else 0)
        ok, passed = True, checked
    if kind_of(code) == "examples" and not ok:
        problem = problem_of(out, examples)
        text = REPORT_FAIL.say(history, **{**f, "n": checked}, passed=passed, problem=problem)
        return Action(TESTER, text)
    if crashed(out) and not read_as_passing:
        return Action(TESTER, REPORT_CRASH.say(history, **f, problem=problem_of(out, examples)))
    if kind_of(code) == "examples" and checked:
        edges = ""
        if raised or sample:
            words = EDGES_RAISED if raised else EDGES_OK
            edges = phrasing.phrase(history, "he.expert.edges", words, bad=raised, sample=sample)
        return Action(TESTER, REPORT_PASS.say(history, **{**f, "n": checked}, edges=edges))
    if kind_of(code) == "probe":
        edges = f"{sample}, but {raised}" if sample and raised else raised or sample or "no output"
        return Action(TESTER, REPORT_EDGES.say(history, **f, edges=edges))
    return Action(TESTER, REPORT_LOADS.say(history, **f))


def approval(history: Sequence[Step]) -> Action:
    """The verifier's approval: the code under review as the answer, and TERMINATE."""
    text = APPROVE.say(history, **fields(history)) + END
    return Action(CHECKER, text, "final_answer", {"answer": current_solution(history)})


def rejection(history: Sequence[Step], problem: str) -> Action:
    return Action(CHECKER, REJECT.say(history, **fields(history), problem=problem))


class ExpertChatSystem(ScriptedExpertChat):
    agents = (CODER, TESTER, CHECKER)
    end = END

    def speaker(self, history: Sequence[Step]) -> str:
        last = last_agent(history)
        if last is None:
            return CODER
        if last.tool == TERMINAL:  # the expert who ran the program reads its output
            return last.actor
        if last.actor == CODER:
            return TESTER if reads_as(last, *CODER_TO_TESTER) else CHECKER
        if last.actor == TESTER:
            return CODER if reads_as(last, TESTER_PLAN, TESTER_PLAN_BARE) else CHECKER
        return CODER

    def speak(self, who: str, history: Sequence[Step]) -> Action:
        turn = {CODER: self._code, TESTER: self._test, CHECKER: self._verify}[who]
        return turn(history)

    def _code(self, history: Sequence[Step]) -> Action:
        f = fields(history)
        prompt = task_prompt(history)
        examples = visible_examples(prompt)
        last = last_agent(history)
        if last is None:
            params = params_of(prompt, str(f["entry"]))
            return Action(CODER, PLAN.say(history, **f, params=params))
        if last.actor == CHECKER and last.tool is None:
            asked = QUESTION.fields(last.content)
            if asked is not None:
                return Action(CODER, ANSWER.say(history, **f, bad=asked["bad"]))
            if reads_as(last, QUESTION_CODE):
                return Action(CODER, ANSWER_CODE.say(history, **f))
            code = program_for(next_version(history), examples)
            return program(CODER, REDO.say(history, **f), code)
        mine = programs(history, CODER)
        if not mine:  # the first draft
            solution = with_line(versions(history)[0], history)
            if hasty(history):
                call = edge_calls(history)[0]
                text = QUICK.say(history, **f, call=call)
                return program(CODER, text, probe_program(solution, [call]))
            return program(CODER, DRAFT.say(history, **f), program_for(solution, examples))
        out = output_after(history, mine[-1])
        if kind_of(_code(mine[-1])) == "probe" and not crashed(out):  # a quick run: hand on
            sample, raised = edge_summary(out)
            seen = raised or sample or "no output"
            return Action(CODER, HANDOFF_QUICK.say(history, **f, seen=seen))
        if not run_outcome(out)[0]:
            text = FIX.say(history, **f, problem=problem_of(out, examples))
            return program(CODER, text, program_for(next_version(history), examples))
        return after_pass(history)

    def _test(self, history: Sequence[Step]) -> Action:
        last = last_agent(history)
        if last is not None and last.actor == TESTER and last.tool == TERMINAL:
            return report(history, last)
        if last is not None and reads_as(last, PLAN):
            calls = edge_calls(history)
            f = fields(history)
            if calls:
                return Action(TESTER, TESTER_PLAN.say(history, **f, calls=_calls(calls)))
            return Action(TESTER, TESTER_PLAN_BARE.say(history, **f))
        full = last is not None and reads_as(last, HANDOFF_ALL, HANDOFF_BARE) is not None
        return tester_run(history, with_examples=not full)

    def _verify(self, history: Sequence[Step]) -> Action:
        examples = visible_examples(task_prompt(history))
        coder = last_agent(history, CODER)
        since = coder.step if coder is not None else 0
        written = programs(history, CODER)
        q = written[-1].step if written else 0
        checks = programs(history, CHECKER, q)
        if checks:  # its own re-run of the examples
            out = output_after(history, checks[-1])
            if run_outcome(out)[0]:
                return approval(history)
            return rejection(history, problem_of(out, examples))
        reports = [s for s in history[since:] if reads_as(s, *TESTER_REPORTS)]
        if reports and (failed := reads_as(reports[-1], *FAILURES)) is not None:
            found = failed.fields(reports[-1].content) or {}
            return rejection(history, found.get("problem", "the tests fail"))
        tests = programs(history, TESTER, q)
        raised = edge_summary(output_after(history, tests[-1]))[1] if tests else ""
        asked = any(reads_as(s, QUESTION, QUESTION_CODE) for s in history[q:])
        if not asked and phrasing.task_chance(
            history, "he.expert.ask", ASK_RAISED if raised else ASK_CODE
        ):
            f = fields(history)
            if raised:
                return Action(CHECKER, QUESTION.say(history, **f, bad=raised))
            feature = _feature(_code(written[-1])) if written else "is compact"
            return Action(CHECKER, QUESTION_CODE.say(history, **f, feature=feature))
        if examples and phrasing.task_chance(history, "he.expert.careful", CAREFUL_P):
            code = program_for(current_solution(history), examples)
            return program(CHECKER, CHECK.say(history, **fields(history)), code)
        return approval(history)
