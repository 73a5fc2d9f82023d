"""Scripted reference policies for HumanEval: a code-as-action agent and a coder -> tester ->
reviewer pipeline, deciding only from the visible history.

The coders stand in for a competent programmer: they know the canonical solution of a
visible prompt (`reference_solution`, a lookup from the prompt text shown at step 0), so
with slips off every task is solved; what they write afterwards, and what the tester and
reviewer decide, comes from the observations. A logic bug that the docstring examples
catch is fixed (a recovery); one they miss reaches the hidden tests and fails the task.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from whowhen.agents.humaneval_mutate import mutate_code, transcription_typo, truncate_body
from whowhen.agents.scripted import ScriptedReact, ScriptedSystem, addressee, tell
from whowhen.benchmarks.humaneval import (
    EXAMPLES_MARKER,
    SUMMARY,
    example_script,
    reference_solution,
    visible_examples,
)
from whowhen.runtime import Action, Step

_PROMPT = re.compile(r"```python\n(.*)\n```", re.S)


def task_prompt(history: Sequence[Step]) -> str:
    """The prompt shown in the task text (step 0)."""
    m = _PROMPT.search(history[0].content)
    return m.group(1) + "\n" if m else history[0].content


def entry_of(code: str) -> str:
    """The function a program is about: its last top-level `def`."""
    names = re.findall(r"^def (\w+)\s*\(", code, re.M)
    return names[-1] if names else "the function"


def program_for(solution: str, examples: tuple[tuple[str, str], ...]) -> str:
    """A solution followed by the docstring-example check (what run_tests also runs)."""
    return f"{solution.rstrip()}\n\n\n{example_script(examples)}"


def solution_of(code: str) -> str:
    """The solution part of a program that ends with the docstring-example check."""
    return code.split(EXAMPLES_MARKER, 1)[0].rstrip() + "\n"


def read_run(text: str, n_examples: int) -> tuple[bool, int, int, list[str]]:
    """(all passed, passed, n, failure lines) from the output of an example check."""
    found = SUMMARY.findall(text)
    passed, n = (int(found[-1][0]), int(found[-1][1])) if found else (0, n_examples)
    bad = [ln for ln in text.splitlines() if ln.startswith(("FAIL", "ERROR", "[", "Error:"))]
    return bool(found) and passed == n and not bad, passed, n, bad[:5]


def _reference(history: Sequence[Step]) -> tuple[str, tuple[tuple[str, str], ...]]:
    prompt = task_prompt(history)
    solution = reference_solution(prompt)
    if solution is None:
        raise ValueError("the prompt is not a known HumanEval problem")
    return solution, visible_examples(prompt)


class CodeActSystem(ScriptedReact):
    """One agent whose actions are programs: solution + example check, then the answer."""

    name = "code_act"

    def act(self, history: Sequence[Step]) -> Action:
        reference, examples = _reference(history)
        entry = entry_of(reference)
        runs = [s for s in history if s.actor == "assistant" and s.tool == "run_python"]
        if not runs:
            return Action(
                "assistant",
                f"I will implement {entry} and run it on the docstring examples.",
                "run_python",
                {"code": program_for(reference, examples)},
            )
        outputs = [s for s in history if s.kind == "observation" and s.actor == "run_python"]
        ok, passed, n, _ = read_run(outputs[-1].content if outputs else "", len(examples))
        solution = solution_of(str((runs[-1].tool_args or {}).get("code", "")))
        if not ok and len(runs) < 3:
            return Action(
                "assistant",
                f"The run shows failing examples ({passed}/{n} passed); I will fix {entry} "
                "and run it again.",
                "run_python",
                {"code": program_for(reference, examples)},
            )
        text = f"All {n} docstring examples pass" if n else "The program runs cleanly"
        return Action(
            "assistant", f"{text}; I submit {entry}.", "final_answer", {"answer": solution}
        )


# --- pipeline: coder -> tester -> reviewer -------------------------------------------------

_HANDOFF = "I saved a draft of {entry} with write_code; please run the docstring examples."
_WRITE = "I will implement {entry} from its docstring and save the draft."
_FIX = "The reviewer says the draft of {entry} fails the visible examples; I will fix it."
_RUN = "I will run the docstring examples against the draft of {entry}."
_PASS = "The draft of {entry} passes the visible examples ({n}/{n} passed)."
_NONE = "The draft of {entry} runs cleanly; the prompt has no docstring examples to check."
_FAIL = "The draft of {entry} fails the visible examples ({passed}/{n} passed):\n{details}"
_APPROVE = "The tester reports that the draft of {entry} passes; I approve and submit it."
_REJECT = (
    "The tester reports that the draft of {entry} fails the visible examples "
    "({passed}/{n} passed). Please fix it and save a new draft.\n{details}"
)
_ASK = "Please run the docstring examples against the draft of {entry} and report."
_PASS_RE = re.compile(r"^To reviewer: The draft of (\w+) (passes the visible|runs cleanly)")
_FAIL_RE = re.compile(
    r"^To (reviewer|coder): (?:The tester reports that )?the draft of (\w+) "
    r"fails the visible examples \((\d+)/(\d+) passed\)",
    re.I,
)
_FIX_RE = re.compile(r"^The reviewer says the draft of (\w+) fails")
_RUN_RE = re.compile(r"against the draft of (\w+)\.$")


class PipelineSystem(ScriptedSystem):
    """Coder writes the draft and hands it to the tester; the tester runs the visible
    examples and reports to the reviewer; the reviewer submits the last draft if they all
    pass, else sends the coder back (who rewrites the function)."""

    name, topology = "pipeline", "multi"
    agents = ("coder", "tester", "reviewer")

    def speaker(self, history: Sequence[Step]) -> str:
        steps = [s for s in history if s.is_agent_step]
        if not steps:
            return "coder"
        if steps[-1].kind == "action":  # a tool call: the same agent goes on
            return steps[-1].actor
        to = addressee(steps[-1])
        return to if to in self.agents else "coder"

    def decide(self, history: Sequence[Step]) -> Action:
        who = self.speaker(history)
        turn = {"coder": self.code, "tester": self.test, "reviewer": self.review}[who]
        return turn(history)

    def code(self, history: Sequence[Step]) -> Action:
        reference, _ = _reference(history)
        entry = entry_of(reference)
        last = [s for s in history if s.is_agent_step][-1:]
        if last and last[0].actor == "coder" and last[0].tool == "write_code":
            return tell("coder", "tester", _HANDOFF.format(entry=entry))
        text = (_FIX if last else _WRITE).format(entry=entry)
        return Action("coder", text, "write_code", {"code": reference})

    def test(self, history: Sequence[Step]) -> Action:
        prompt = task_prompt(history)
        entry = entry_of(prompt)
        last = [s for s in history if s.is_agent_step][-1]
        if last.tool != "run_tests":
            return Action("tester", _RUN.format(entry=entry), "run_tests", {})
        output = history[-1].content if history[-1].kind == "observation" else ""
        ok, passed, n, bad = read_run(output, len(visible_examples(prompt)))
        if ok:
            return tell("tester", "reviewer", (_PASS if n else _NONE).format(entry=entry, n=n))
        details = "\n".join(bad) or output.strip()[-300:]
        text = _FAIL.format(entry=entry, passed=passed, n=n, details=details)
        return tell("tester", "reviewer", text)

    def review(self, history: Sequence[Step]) -> Action:
        reports = [s for s in history if s.actor == "tester" and s.kind == "message"]
        drafts = [s for s in history if s.tool == "write_code"]
        entry = entry_of(task_prompt(history))
        if not reports:  # asked too early: the draft has not been tested yet
            return tell("reviewer", "tester", _ASK.format(entry=entry))
        report = reports[-1]
        if _PASS_RE.match(report.content) and drafts:
            code = str((drafts[-1].tool_args or {}).get("code", ""))
            return Action(
                "reviewer", _APPROVE.format(entry=entry), "final_answer", {"answer": code}
            )
        m = _FAIL_RE.match(report.content)
        passed, n = (m.group(3), m.group(4)) if m else ("0", "?")
        details = report.content.split("\n", 1)[1] if "\n" in report.content else ""
        text = _REJECT.format(entry=entry, passed=passed, n=n, details=details).rstrip()
        return tell("reviewer", "coder", text)


POLICIES: dict[str, type] = {"code_act": CodeActSystem, "pipeline": PipelineSystem}
"""System name -> this benchmark's scripted reference policy."""

PROMPTS: dict[str, dict[str, str]] = {
    "code_act": {
        "assistant": "You solve a Python coding task by writing programs: run your solution on "
        "the docstring examples with run_python, then submit the full program with "
        "final_answer."
    },
    "pipeline": {
        "coder": "You are the coder: write the full program with write_code, then ask the "
        "tester (`To tester: ...`) to run it; fix the draft when the reviewer sends it back.",
        "tester": "You are the tester: run the docstring examples with run_tests and report "
        "exactly which pass or fail to the reviewer (`To reviewer: ...`).",
        "reviewer": "You are the reviewer: if the tester reports that every example passes, "
        "submit the last draft with final_answer; otherwise send it back (`To coder: ...`).",
    },
}
"""System name -> agent -> the role prompt an LLM playing that agent gets."""


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


def logic_bug(action: Action, rng: random.Random) -> Action | None:
    """reasoning.logic_bug: the code written, run or submitted has a bug (the check that a
    code action runs after its solution stays as it was)."""
    return _rewrite_solution(action, lambda head: mutate_code(head, rng))


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
