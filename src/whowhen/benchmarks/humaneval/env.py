"""The HumanEval environment: `write_code`, `run_tests` (the docstring examples) and
`run_python`, and the hidden-test evaluator run in the sandbox."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import secrets
from pathlib import Path
from typing import Any

from whowhen.benchmarks.base import AnswerEnv, Tool
from whowhen.benchmarks.humaneval.tasks import (
    BENCHMARK,
    CATEGORY,
    MODALITY,
    Problem,
    Task,
    _by_reference,
    example_script,
)
from whowhen.runtime import Action
from whowhen.sandbox import Limits, run_program
from whowhen.tools import FINAL_ANSWER_TOOL, RUN_PYTHON_TOOL
from whowhen.tools import run_python as _run_python_text

TOOL_SPECS = (
    {
        "name": "write_code",
        "description": "Save the full program (the prompt's code with the body filled in) "
        "as the current draft.",
        "parameters": {
            "type": "object",
            "required": ["code"],
            "additionalProperties": False,
            "properties": {"code": {"type": "string"}},
        },
    },
    {
        "name": "run_tests",
        "description": "Run the docstring examples of the prompt against the current draft "
        "and report which pass (the hidden tests are not shown).",
        "parameters": {"type": "object", "additionalProperties": False, "properties": {}},
    },
    RUN_PYTHON_TOOL,
    FINAL_ANSWER_TOOL,
)


# --- running code ------------------------------------------------------------------------

_RUNS: dict[str, str] = {}
_CHECKS: dict[str, bool] = {}


def run_code(code: str) -> str:
    """The sandboxed run_python text for `code`, memoized by the code's hash."""
    key = hashlib.sha256(code.encode()).hexdigest()
    if key not in _RUNS:
        _RUNS[key] = _run_python_text({"code": code})
    return _RUNS[key]


def strip_fences(code: str) -> str:
    """A program without the markdown code fence a model may wrap it in."""
    m = re.search(r"```(?:python|py)?\n(.*?)```", code, re.S)
    return m.group(1) if m else code


def candidate_program(answer: str, problem: Problem) -> str:
    """The candidate as a program; one that does not define the entry point is taken as
    a body and put after the prompt."""
    code = strip_fences(answer)
    if not re.search(rf"^\s*def {re.escape(problem.entry_point)}\s*\(", code, re.M):
        code = problem.prompt + code
    return code


_JUDGE = (Path(__file__).parent / "judge.py").read_text(encoding="utf-8")


def passes(answer: str, problem: Problem) -> bool:
    """Whether the candidate passes the hidden tests (10 s wall, 5 s CPU, 512 MB): only
    when the judge (`judge.py`), after `check` returned, prints this run's one-time
    token, which the candidate's process never sees."""
    program = candidate_program(answer, problem)
    key = hashlib.sha256(f"{problem.source_id}\0{program}".encode()).hexdigest()
    if key not in _CHECKS:
        token = secrets.token_hex(16)
        spec = {"prompt": problem.prompt, "test": problem.test, "entry": problem.entry_point}
        files = {"judge.py": _JUDGE, "problem.json": json.dumps(spec), "candidate.py": program}
        result = run_program(
            files,
            ["judge.py", "judge", "problem.json", "candidate.py"],
            Limits(wall_s=10.0, cpu_s=5, memory_mb=512),
            stdin=f"{token}\n".encode(),
        )
        _CHECKS[key] = result.ok and result.stdout.strip() == f"PASS {token}"
    return _CHECKS[key]


def describe_draft(code: str, entry: str) -> str:
    """write_code's confirmation: size, what it defines, or its syntax error."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return f"Draft saved, but it does not parse: SyntaxError at line {exc.lineno}: {exc.msg}"
    defs = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    lines = len(code.strip().splitlines())
    note = "" if entry in defs else f"; note: it does not define {entry}"
    return f"Draft saved ({lines} lines; defines {', '.join(defs) or 'no function'}){note}."


class HumanEvalEnv(AnswerEnv):
    """A draft to write and test; `final_answer` with an empty answer submits the draft."""

    benchmark, modality, category = BENCHMARK, MODALITY, CATEGORY

    def __init__(self, task: Task) -> None:
        super().__init__(task)
        self._draft: str | None = None

    def reset(self) -> str:
        self._start()
        self._draft = None
        return (
            "Complete the Python function below so that it passes the problem's hidden unit "
            "tests. Tools: write_code(code) saves the full program as your draft, run_tests() "
            "runs the docstring examples against the draft, run_python(code) runs a program "
            "in a sandbox, final_answer(answer) submits the full program (an empty answer "
            f"submits the draft).\n\nPrompt:\n```python\n{self.task.question.rstrip()}\n```"
        )

    def tools(self) -> dict[str, Tool]:
        task: Task = self.task

        def write_code(args: dict[str, Any]) -> str:
            self._draft = str(args.get("code", ""))
            return describe_draft(self._draft, task.entry_point)

        def run_tests(args: dict[str, Any]) -> str:
            if self._draft is None:
                return "Error: there is no draft yet; call write_code(code) first."
            return run_code(f"{self._draft.rstrip()}\n\n\n{example_script(task.examples)}")

        def run_python(args: dict[str, Any]) -> str:
            return run_code(str(args.get("code", "")))

        return {"write_code": write_code, "run_tests": run_tests, "run_python": run_python}

    def step(self, action: Action) -> tuple[str, str] | tuple[str, str, tuple[str, ...]] | None:
        args = action.tool_args or {}
        if action.tool == "final_answer" and not str(args.get("answer", "")).strip():
            self._answer, self._done = self._draft or "", True
            return None
        return super().step(action)

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        problem = _by_reference().get(gold)
        if answer is None or problem is None:
            return False
        return passes(answer, problem)


Env = HumanEvalEnv
