"""What the HumanEval expert group chat says and runs, and how each step is read back: the
forms of its messages, the programs its experts quote for the `Computer_terminal`, and
readers of the history (the last program, its output, the code under review).

Why a module of its own: the policy (`experts`) and its error operators
(`expert_operators`) must say a step the same way; an operator re-says a step with these
builders, so an injected step reads like the policy's.

Every message quotes the task's key line (`variants`) in backticks, and nothing else: the
key-line readers (`steps.believed`) and operators (`operators._restate`) take the first
quote of a message for it. A program step states the line in its code, never in its text.
"""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.humaneval.actions import (
    Examples,
    first_failure,
    probe_program,
    program_for,
    read_probe,
    read_run,
    solution_of,
)
from whowhen.benchmarks.humaneval.steps import _code, _got, task_prompt, with_line
from whowhen.runtime import Action, Step
from whowhen.tools import TERMINAL, code_output, programs

CODER, TESTER, CHECKER = "Python_Expert", "Testing_Expert", "Verification_Expert"
_FIELDS = {
    "entry": r"\w+",
    "line": r"[^`\n]+",
    "n": r"\d+",
    "passed": r"\d+",
    "edges": r".*?",
}


def _form(key: str, *variants: str) -> Form:
    return Form(f"he.expert.{key}", variants, **_FIELDS)


# --- Python_Expert -----------------------------------------------------------------------

PLAN = _form(
    "plan",
    "The task is to complete {entry}({params}); the docstring gives {count}. The core of the "
    "body will be a line like `{line}`. Plan:\n1. Write {entry} and run it on the docstring "
    "examples.\n2. Testing_Expert tries inputs the docstring skips.\n3. Verification_Expert "
    "reviews the final code.",
    "Let's solve this step by step. {entry} takes {params}, and its key step is `{line}`. I "
    "will write the function and run what the docstring shows ({count}); Testing_Expert, "
    "please prepare a few edge cases, and Verification_Expert will review the result.",
)
DRAFT = _form(
    "draft",
    "Here is my implementation of {entry}, followed by a check of the docstring examples "
    "({count}):",
    "First version of {entry}; the program below runs it on every docstring example ({count}):",
)
QUICK = _form(
    "quick",
    "Here is my implementation of {entry}. A quick run on an input of my own, {call}, to see "
    "that it works:",
    "First version of {entry}; let me just try it on {call}:",
)
FIX = _form(
    "fix",
    "The run shows that {problem}. Here is the corrected {entry}, checked on every "
    "docstring example:",
    "Not right yet: {problem}. I have corrected {entry}; running every docstring example again:",
)
REDO = _form(
    "redo",
    "Thanks, Verification_Expert. Here is the corrected {entry}, with every docstring "
    "example checked:",
    "Understood. The corrected {entry}, run on the {count} again:",
)
HANDOFF_ALL = _form(
    "handoff",
    "Every docstring example passes with `{line}` ({n}/{n}). Testing_Expert, please try "
    "some inputs the docstring does not show.",
    "{n}/{n} examples pass, so `{line}` does what the docstring asks. Testing_Expert, over "
    "to you for edge cases.",
)
HANDOFF_BARE = _form(
    "handoffbare",
    "{entry} loads and runs with `{line}`; the docstring has no examples to check. "
    "Testing_Expert, please try it on inputs of your own.",
    "No docstring examples here, but {entry} runs cleanly with `{line}`. Testing_Expert, "
    "your edge cases are the real test.",
)
HANDOFF_QUICK = _form(
    "handoffquick",
    "{entry} runs with `{line}`: {seen}. Testing_Expert, please run the docstring examples "
    "({count}) and a few edge cases.",
    "A first run works ({seen}), with `{line}` at the core. Testing_Expert, can you check "
    "{entry} against the {count} and some edge cases?",
)
PROPOSE = _form(
    "propose",
    "{entry} passes every docstring example with `{line}` ({n}/{n}). Verification_Expert, "
    "please review it.",
    "With `{line}` every docstring example of {entry} passes ({n}/{n}). Verification_Expert, "
    "could you take another look?",
)
ANSWER_CODE = _form(
    "answercode",
    "Yes, deliberate: `{line}` follows the docstring directly, and the examples cover it.",
    "That is intended. `{line}` is the simplest form that fits the docstring, and every "
    "example passes with it.",
)
ANSWER = _form(
    "answer",
    "That input is outside what the docstring promises ({bad}), so `{line}` is left as it "
    "is; every documented case passes.",
    "It is acceptable: the docstring never passes such an input ({bad}), and guarding it "
    "would change nothing it asks for. I would keep `{line}`.",
)

# --- Testing_Expert ----------------------------------------------------------------------

TESTER_PLAN = _form(
    "testerplan",
    "Once {entry} is written I will try inputs the docstring skips: {calls}. They will "
    "show whether `{line}` copes with them.",
    "For testing I have these edge cases ready: {calls}. Python_Expert, go ahead with "
    "`{line}` and the rest of {entry}.",
)
TESTER_PLAN_BARE = _form(
    "testerplanbare",
    "Once {entry} is written I will run the docstring examples again on my side, to check "
    "`{line}` independently.",
    "I will re-run the examples of {entry} myself when the code is ready; `{line}` is the "
    "line to watch.",
)
PROBE = _form(
    "probe",
    "Trying {entry} on inputs the docstring does not show: {calls}.",
    "Now some edge cases for {entry}: {calls}.",
)
PROBE_ALL = _form(
    "probeall",
    "Running every docstring example of {entry} ({count}), then the edge cases {calls}.",
    "The full set of docstring examples for {entry} ({count}), plus {calls}:",
)
LOAD = _form(
    "load",
    "Checking that {entry} loads and is callable on my side:",
    "Let me make sure {entry} is defined and loads:",
)
RERUN = _form(
    "rerun",
    "Running the docstring examples of {entry} ({count}) on my side.",
    "My own run of the {count} of {entry}:",
)
REPORT_PASS = _form(
    "reportpass",
    "Every docstring example passes ({n}/{n}){edges}. `{line}` holds up. "
    "Verification_Expert, please review.",
    "{n}/{n} docstring examples pass on my side{edges}. Nothing to flag with `{line}`; "
    "Verification_Expert, over to you.",
)
REPORT_EDGES = _form(
    "reportedges",
    "Edge cases for {entry}: {edges}. I see no problem with `{line}`. Verification_Expert, "
    "please review.",
    "Edge cases done: {edges}. `{line}` handles them; Verification_Expert, over to you.",
)
REPORT_FAIL = _form(
    "reportfail",
    "Only {passed}/{n} docstring examples pass: {problem}. `{line}` needs another look. "
    "Verification_Expert, please decide.",
    "Not passing: {passed} of {n} examples. {problem}; something around `{line}` is off. "
    "Verification_Expert, please take a look.",
)
REPORT_CRASH = _form(
    "reportcrash",
    "The test program does not finish: {problem}. `{line}` needs another look. "
    "Verification_Expert, please decide.",
    "My run crashed ({problem}), so the code with `{line}` is not ready. "
    "Verification_Expert, please take a look.",
)
REPORT_LOADS = _form(
    "reportloads",
    "{entry} loads and is callable with `{line}`. With no docstring examples and no typed "
    "inputs to try, I have nothing to flag. Verification_Expert, please review.",
    "The code defines {entry} and runs cleanly with `{line}`; there is nothing in the "
    "docstring to test it against. Verification_Expert, over to you.",
)
EDGES_OK = (
    " and the edge cases run cleanly, e.g. {sample}",
    " and my edge cases look fine ({sample})",
)
EDGES_RAISED = (" and on the edge cases {bad}", " and one edge case raises: {bad}")

# --- Verification_Expert -----------------------------------------------------------------

CHECK = _form(
    "check",
    "Before I approve, let me run the final {entry} on the {count} myself:",
    "I will re-run every docstring example on the final version of {entry}:",
)
REJECT = _form(
    "reject",
    "The tests show that {problem}. Python_Expert, please fix {entry} (keep `{line}` if it "
    "is right) and run every docstring example again.",
    "This is not ready: {problem}. Python_Expert, please correct {entry} around `{line}` "
    "and re-run the {count}.",
)
QUESTION = _form(
    "question",
    "Testing_Expert reports that {bad}. Python_Expert, is that acceptable for {entry} with "
    "`{line}`?",
    "One question before I approve `{line}`: {bad}. Python_Expert, is that intended?",
)
QUESTION_CODE = _form(
    "questioncode",
    "Reading {entry}: the key line is `{line}`, and the function {feature}. Python_Expert, "
    "is that what the docstring needs?",
    "A question on `{line}` before I approve: {entry} {feature}. Python_Expert, is that "
    "choice deliberate?",
)
APPROVE = _form(
    "approve",
    "The final {entry} passes the docstring examples and behaves sensibly on the edge cases. "
    "The code is approved.",
    "Verified: {entry} does what the docstring asks in every documented case. Final code approved.",
)

CODER_TO_TESTER = (PLAN, HANDOFF_ALL, HANDOFF_BARE, HANDOFF_QUICK)
TESTER_REPORTS = (REPORT_PASS, REPORT_EDGES, REPORT_LOADS, REPORT_FAIL, REPORT_CRASH)
FAILURES = (REPORT_FAIL, REPORT_CRASH)


def reads_as(step: Step | Action, *forms: Form) -> Form | None:
    """The first of `forms` a step's message is in (None for a program or another form)."""
    if step.tool is not None:
        return None
    return next((f for f in forms if f.read(step.content) is not None), None)


# --- programs ------------------------------------------------------------------------------


def program(actor: str, text: str, code: str) -> Action:
    """A program step: the message, the program quoted in it, run on the terminal."""
    return Action(actor, f"{text}\n```python\n{code.rstrip()}\n```", TERMINAL, {"code": code})


def tester_program(solution: str, examples: Examples, calls: Sequence[str]) -> str:
    """The solution, the docstring-example check (if `examples`, or if there are no
    `calls`: then it shows the code loads), then the edge cases: the tester's program."""
    code = program_for(solution, examples) if examples or not calls else solution
    return code.rstrip() + "\n" + probe_program("", calls) if calls else code


def run_outcome(out: str) -> tuple[bool, int, int, list[str]]:
    """(all passed, passed, checked, failure lines) of an example check's output; a
    program that stopped with an error has not passed."""
    ok, passed, n, bad = read_run(code_output(out), 0)
    return ok and not crashed(out), passed, n, bad


def crashed(out: str) -> bool:
    """Whether the terminal reports that the program stopped with an error."""
    return out.startswith("exitcode: 1")


def edge_summary(out: str) -> tuple[str, str]:
    """(a result sample, the first raising call and its error) of the edge cases' output."""
    _, _, ok, bad = read_probe(code_output(out))
    sample = ok[0] if ok else ""
    first_bad = ""
    if bad:
        call, _, err = bad[0].partition(" raises ")
        first_bad = f"{call} raises {err.split(':')[0]}"
    return unquoted(sample), unquoted(first_bad)


def problem_of(out: str, examples: Examples) -> str:
    """What a failed run shows, in words: the first failing example, or the error that
    stopped the program."""
    fail = first_failure(run_outcome(out)[3])
    if fail is None:
        last = out.strip().splitlines()[-1][:160] if out.strip() else "no output"
        return unquoted(f"the program stops with {last}")
    call, want, got = fail
    want = want or dict(examples).get(call, "another value")
    return unquoted(f"{call} {_got(got)}, but the docstring expects {want}")


def unquoted(text: str) -> str:
    """Printed text without backticks, which in a message quote the key line only."""
    return text.replace("`", "'")


# --- reading the history -------------------------------------------------------------------


def current_solution(history: Sequence[Step]) -> str:
    """The code under review: the Python_Expert's last program without its checks, with
    the key line as the team last stated it (the bare prompt if it wrote none)."""
    mine = programs(history, CODER)
    if not mine:
        return task_prompt(history)
    return with_line(solution_of(_code(mine[-1])), history)
