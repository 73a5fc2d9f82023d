"""Coherent errors for HumanEval: no step may contradict itself.

`contradiction` reads ONE step (its text, tool and arguments, nothing before it) and says
why it contradicts itself: the text announces another tool than the one called (it submits
or saves without the call that does so, or the other way round), names another function
than the code defines, names a call the probe does not run, states a pass count at odds
with itself or with the examples the program checks, or the code reads a name it never
defines (a NameError the step alone shows). A tool-less step is a message (`To X: ...`)
or, for the lone code-act agent, a note on what it saw. Reference steps never do; if
injected steps did, an attributor could find the gold step without understanding the run.
"""

from __future__ import annotations

import ast
import builtins
import re

import pytest

from whowhen.benchmarks.humaneval.actions import kind_of, probe_program, program_for, split_program
from whowhen.benchmarks.humaneval.operators import OPERATORS as HUMANEVAL_OPERATORS
from whowhen.runtime import Action

from .coherence_checks import (
    direct_replacements,
    planned_replacements,
    reference_test,
    replacement_test,
    table,
)

BENCHMARK = "humaneval"
SYSTEMS = ("code_act", "pipeline")
N_TASKS = 15
N_DIRECT = 30
"""Tasks for the every-operator check: the verdict and coordination modes need a task whose
key line has subtle variants AND whose first draft fails an example (a failure report)."""
OPERATORS = table(HUMANEVAL_OPERATORS)

_MESSAGE = re.compile(r"^To (\w+): ")
_SUBMITS = re.compile(r"\bsubmit", re.I)
_SAVES = re.compile(r"\bsav(?:e|ing)\b", re.I)
_NAMED = re.compile(
    r"\b(?:implement|submit|submitting|fix|fixing|draft of|version of) "
    r"(?!(?:it|this|the|my|a|all)\b)(\w+)"
)
_COUNT = re.compile(r"\b(\d+)/(\d+) passed\b")
_N_EXAMPLES = re.compile(r"\b(\d+) docstring examples?\b")
_FAILED = re.compile(r"\bfail|\bwrong\b|\bOnly\b|\bnot passing\b|\bNot yet\b", re.I)
_CODE = {"write_code": "code", "run_python": "code", "final_answer": "answer"}


def _undefined(tree: ast.Module) -> set[str]:
    """Names the program reads but never binds anywhere (nor are builtins)."""
    bound, read = set(dir(builtins)), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (read if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(n.name)
        elif isinstance(n, ast.alias):
            bound.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
        elif isinstance(n, ast.Global | ast.Nonlocal):
            bound.update(n.names)
    return read - bound


def _calls_in(text: str, name: str) -> list[str]:
    """The `name(...)` calls written in a text (balanced parentheses)."""
    found = []
    for m in re.finditer(rf"(?<![\w.]){re.escape(name)}\(", text):
        depth = 0
        for i in range(m.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                found.append(text[m.start() : i + 1])
                break
    return found


def _cases(tail: str) -> int | None:
    """How many examples the check at the end of a program runs (None: no such check)."""
    try:
        tree = ast.parse(tail)
    except SyntaxError:
        return None
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_CASES":
            return len(n.value.elts) if isinstance(n.value, ast.List) else None
    return None


def _code_contradiction(text: str, tool: str, code: str) -> str | None:
    """What the program of a code step contradicts: the function the text names, the
    calls the text says it runs, the example count the text states, or itself."""
    if not code.strip() and tool == "final_answer":
        return None  # an empty answer submits the saved draft
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return "the code does not parse"
    head, tail = split_program(code)
    entry = (re.findall(r"^def (\w+)\s*\(", head, re.M) or [None])[-1]
    if entry is not None:
        for name in _NAMED.findall(text):
            if name != entry:
                return f"the text names {name}, the code implements {entry}"
    if missing := _undefined(tree):
        return f"the code reads names it never defines: {sorted(missing)}"
    kind = kind_of(code)
    if tool == "run_python" and kind in ("probe", "inspect") and entry is not None:
        for call in _calls_in(text, entry):
            if call not in tail and repr(call) not in tail:
                return f"the text runs {call}, the code does not"
    cases = _cases(tail) if kind in ("examples", "survey") else None
    if cases is not None:
        counts = [int(n) for _, n in _COUNT.findall(text)]
        counts += [int(n) for n in _N_EXAMPLES.findall(text)]
        if any(n != cases for n in counts):
            return f"the text counts {counts} examples, the code checks {cases}"
    if kind in ("examples", "survey") and "example" not in text:
        return "the code runs the docstring examples, the text does not say so"
    return None


_QUOTED = re.compile(r"`[^`\n]+`")


def contradiction(action: Action) -> str | None:
    """Why this one step contradicts itself, or None when it reads as one decision. A
    line of code the text quotes (`...`) is code, not words: it is left out of the text's
    reading (a quoted `submit(x)` does not announce a submission)."""
    text, tool = _QUOTED.sub("`code`", action.content), action.tool
    if _MESSAGE.match(text):
        if tool is not None:
            return f"a message that also calls {tool}"
    elif tool is None and action.actor != "assistant":
        return "a tool-less step that is not addressed to anyone"
    message = _MESSAGE.match(text) is not None  # may speak of what someone does later
    if not message and bool(_SUBMITS.search(text)) != (tool == "final_answer"):
        return f"the text and the call ({tool}) disagree on submitting"
    if not message and bool(_SAVES.search(text)) != (tool == "write_code"):
        return f"the text and the call ({tool}) disagree on saving a draft"
    if tool == "run_tests" and "example" not in text:
        return "run_tests without saying it runs the examples"
    for passed, n in _COUNT.findall(text):
        p, n_ = int(passed), int(n)
        failed = _FAILED.search(text) is not None
        if p > n_ or (failed and p == n_) or (not failed and p != n_):
            return f"the text says {'fails' if failed else 'passes'} with {p}/{n_} passed"
    key = _CODE.get(tool or "")
    if key is not None:
        return _code_contradiction(text, tool or "", str((action.tool_args or {}).get(key, "")))
    return None


# --- (c) it is a real check ----------------------------------------------------------------

_PROGRAM = "def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize(
    "step",
    [
        # the text announces a run, the step submits
        Action(
            "assistant",
            "I will implement add and run it on the docstring examples.",
            "final_answer",
            {"answer": _PROGRAM},
        ),
        # the text announces the tests, the step submits
        Action(
            "tester",
            "I will run the docstring examples against the draft of add.",
            "final_answer",
            {"answer": ""},
        ),
        # a submission that does not say it submits
        Action(
            "assistant", "The draft of add looks complete.", "final_answer", {"answer": _PROGRAM}
        ),
        # the text names one function, the code another
        Action(
            "assistant",
            "All 2 docstring examples pass; I submit add.",
            "final_answer",
            {"answer": "def sub(a, b):\n    return a - b\n"},
        ),
        # a pass report with a failing count, and a failure report with a full count
        Action("tester", "To reviewer: The draft of add passes the visible examples (2/3 passed)."),
        Action(
            "reviewer",
            "To coder: The tester reports that the draft of add fails the "
            "visible examples (3/3 passed). Please fix it and save a new draft.",
        ),
        # the code reads a name it never binds (a mistyped variable)
        Action(
            "coder",
            "I will implement add from its docstring and save the draft.",
            "write_code",
            {"code": "def add(a, b):\n    return a + c\n"},
        ),
        # the text runs one input, the probe another
        Action(
            "assistant",
            "Now empty or zero inputs: add(0, 0).",
            "run_python",
            {"code": probe_program(_PROGRAM, ["add(1, 0)"])},
        ),
        # the text saves a draft, the step runs the tests
        Action("coder", "Saving a fixed draft of add.", "run_tests", {}),
        # a note that submits, without submitting
        Action("assistant", "Done: submitting add."),
        # a message that calls a tool
        Action(
            "coder",
            "To tester: I saved a draft of add with write_code.",
            "write_code",
            {"code": _PROGRAM},
        ),
    ],
)
def test_the_check_flags_contradictory_steps(step: Action) -> None:
    assert contradiction(step) is not None


def test_the_check_counts_the_examples_a_run_checks() -> None:
    program = program_for(_PROGRAM, (("add(1, 2)", "3"), ("add(0, 0)", "0")))
    ok = "The run shows failing examples (1/2 passed); I will fix add and run it again."
    wrong = "The run shows failing examples (1/3 passed); I will fix add and run it again."
    assert contradiction(Action("assistant", ok, "run_python", {"code": program})) is None
    assert contradiction(Action("assistant", wrong, "run_python", {"code": program}))


# --- (a) reference steps, (b) every injected replacement -----------------------------------


test_no_reference_step_is_flagged = reference_test(
    BENCHMARK, SYSTEMS, contradiction, at_least=2 * N_TASKS, n_tasks=N_TASKS
)
test_no_planned_injection_is_flagged = replacement_test(
    SYSTEMS,
    contradiction,
    lambda system: planned_replacements(
        BENCHMARK, system, OPERATORS, seeds=(1, 2), per_run=6, together=True, n_tasks=N_TASKS
    ),
    at_least=N_TASKS,
)


def test_no_operator_replacement_is_flagged() -> None:
    """Every operator of the package on every agent step of both systems' successful
    rollouts (with the history before the step), for a few seeds."""
    produced: dict[str, int] = dict.fromkeys(HUMANEVAL_OPERATORS, 0)
    flagged = []
    for system in SYSTEMS:
        made = direct_replacements(
            BENCHMARK, system, OPERATORS, seeds=(0, 1), successful_only=True, n_tasks=N_DIRECT
        )
        for mode, new in made:
            produced[mode] += 1
            if why := contradiction(new):
                flagged.append((mode, new, why))
    assert all(produced.values()), produced
    assert not flagged, flagged[:3]
