"""Scripted reference policies for HumanEval: a code-as-action agent and a coder -> tester ->
reviewer pipeline, deciding only from the visible history.

The coders stand in for a competent programmer: they know the canonical solution of a
visible prompt (`reference_solution`, a lookup from the prompt text shown at step 0), so
with slips off every task is solved; what they write afterwards, and what the tester and
reviewer decide, comes from the observations. A logic bug that the docstring examples
catch is fixed (a recovery); one they miss reaches the hidden tests and fails the task.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents.scripted import ScriptedReact, ScriptedSystem, addressee, tell
from whowhen.benchmarks.humaneval.tasks import (
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
