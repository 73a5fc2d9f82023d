"""Tool code several benchmarks share: the calculator, number formatting, `final_answer`
and the sandboxed `run_python` (also as a group chat's `Computer_terminal`).

Why one module below the benchmark packages: arithmetic, table QA and chart QA all
format numbers and compute with the same calculator, and every environment offers
`final_answer` and `run_python`; a benchmark package may import this, never another
benchmark package.
"""

from __future__ import annotations

import ast
import hashlib
import operator
import re
from collections.abc import Mapping, Sequence
from typing import Any

from whowhen import program_cache
from whowhen.runtime import Action, Step
from whowhen.sandbox import Limits, run_program

_NUM = r"-?[0-9]+([.][0-9]+)?"  # [.]: llama.cpp grammars reject an escaped dot
ONE_OPERATION = rf"^{_NUM} ?[-+*/] ?{_NUM}$"
NUMBER = rf"^{_NUM}$"
"""Two numbers and one of + - * /: what a calculator call that applies one operation
at a time looks like (the arithmetic benchmark's tool says so in its schema)."""

CALCULATOR_TOOL = {
    "name": "calculator",
    "description": "Evaluate an arithmetic expression (+ - * / and "
    "parentheses) and return the number.",
    "parameters": {
        "type": "object",
        "required": ["expression"],
        "additionalProperties": False,
        "properties": {"expression": {"type": "string"}},
    },
}


def format_number(value: float) -> str:
    """Integers without a trailing '.0'; other values rounded to 6 significant decimals."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6g}"


_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def calculate(expression: str) -> str:
    """The calculator tool: + - * / and parentheses on numbers, nothing else is evaluated."""
    try:
        tree = ast.parse(expression, mode="eval")
        return format_number(_eval(tree.body))
    except ZeroDivisionError:
        return "Error: division by zero"
    except (SyntaxError, ValueError, TypeError):
        return f"Error: cannot evaluate {expression!r}"


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand)
    raise ValueError("unsupported expression")


FINAL_ANSWER_TOOL: dict[str, Any] = {
    "name": "final_answer",
    "description": "Give the final answer and end the task.",
    "parameters": {
        "type": "object",
        "required": ["answer"],
        "additionalProperties": False,
        "properties": {"answer": {"type": "string"}},
    },
}
"""Every benchmark's last tool (its schema, for LLM policies); handled by AnswerEnv.step."""

RUN_PYTHON_TOOL: dict[str, Any] = {
    "name": "run_python",
    "description": (
        "Run a Python program in a sandbox (no network, 10 s, 512 MB, its own temp dir) "
        "and return what it prints."
    ),
    "parameters": {
        "type": "object",
        "required": ["code"],
        "additionalProperties": False,
        "properties": {"code": {"type": "string"}},
    },
}
"""Code-as-action: offered by every environment, so a code agent can pair with any of them."""


TERMINAL_TOOL: dict[str, Any] = {
    **RUN_PYTHON_TOOL,
    "name": "Computer_terminal",
    "description": (
        "Run the Python program quoted in the message (sandboxed as run_python) and report "
        "its exit code and output, as a group chat's code executor does."
    ),
}
"""An expert group chat's code runner: run_python under the speaker name AG2 gives it."""

LEDGER_TERMINAL_TOOL: dict[str, Any] = {
    **RUN_PYTHON_TOOL,
    "name": "ComputerTerminal",
    "description": (
        "Run the Python script the team's coder wrote (sandboxed as run_python) and report "
        "its exit code and output, as a Magentic-One team's terminal does."
    ),
}
"""A ledger orchestrator's code runner, under the name Magentic-One gives it."""

_RUNS: dict[str, tuple[str, str, str]] = {}
"""Output of programs that ran to an end (ok or error) in this process, by their code: a
warm start replays a recorded prefix's programs, and each replay would otherwise start
the sandbox again for an output that is a function of the code alone."""
_MAX_RUNS = 8192


def run_python(args: dict[str, Any]) -> str:
    """The sandboxed `run_python` tool: stdout, or the error, plus the status if not ok.

    Only the standard library is importable (the sandbox runs `python -I -S`), which keeps
    the output a function of the code alone, so a program that ran to an end is run once
    per process. One stopped by a limit (time, memory, output) is run again each time."""
    status, out, tail = _run(str(args.get("code", "")))
    if status != "ok":
        out = f"{out}\n[{status}] {tail}".strip()
    return out or "(no output)"


DATA_DIR = "/sandbox"
"""Where a program finds the data files its environment gives it (read-only)."""
_LIMITS = Limits(wall_s=10.0, cpu_s=5, memory_mb=512)


def _run(code: str, files: Mapping[str, str] | None = None) -> tuple[str, str, str]:
    """(status, stdout, last line of stderr) of a sandboxed program, cached by its code
    and its data files (`files`: name -> text, read-only under `DATA_DIR`), in this
    process and, where the build keeps them, on disk (`program_cache`)."""
    data = dict(files or {})
    if "main.py" in data:
        raise ValueError("a data file may not be named main.py (the program's own name)")
    key = code
    if data:
        digest = hashlib.sha256(repr(sorted(data.items())).encode()).hexdigest()
        key = f"{digest}\x00{code}"
    if key in _RUNS:
        return _RUNS[key]
    kept = program_cache.key(code, data, _LIMITS)
    ran = program_cache.get(kept)
    if ran is None:
        result = run_program({**data, "main.py": code}, ["main.py"], _LIMITS)
        tail = result.stderr.strip().splitlines()[-1:] or [result.status]
        ran = (result.status, result.stdout.rstrip(), tail[0])
        program_cache.put(kept, ran)
    if ran[0] in ("ok", "error") and len(_RUNS) < _MAX_RUNS:
        _RUNS[key] = ran
    return ran


TERMINAL = TERMINAL_TOOL["name"]
"""The speaker that runs an expert group chat's code, as AG2's group chats (and the
Who&When runs recorded from them) name it: its output is an observation, not a turn."""
LEDGER_TERMINAL = LEDGER_TERMINAL_TOOL["name"]
_EXIT = re.compile(
    r"^(?:exitcode: -?[0-9]+ \([^)]*\)\nCode output: ?"
    r"|The script ran, then exited with Unix exit code: -?[0-9]+\nIts output was:\n?)",
    re.S,
)


def computer_terminal(args: dict[str, Any], files: Mapping[str, str] | None = None) -> str:
    """`run_python` as AG2's code executor reports it: the exit code, then the output (the
    error's last line on a failure), so built group chats read like recorded ones. An
    environment with data (a table) passes it as `files`, found under `DATA_DIR`."""
    status, out, tail = _run(str(args.get("code", "")), files)
    if status == "ok":
        return f"exitcode: 0 (execution succeeded)\nCode output: {out}"
    reason = "execution failed" if status == "error" else f"execution stopped: {status}"
    return f"exitcode: 1 ({reason})\nCode output: {out}\n{tail}".rstrip()


def ledger_terminal(args: dict[str, Any]) -> str:
    """`run_python` as Magentic-One's ComputerTerminal reports it (the exit code, then the
    output; the error's last line on a failure), so built ledger runs read like recorded
    ones."""
    status, out, tail = _run(str(args.get("code", "")))
    code = 0 if status == "ok" else 1
    text = f"The script ran, then exited with Unix exit code: {code}\nIts output was:\n{out}"
    return (text if status == "ok" else f"{text}\n{tail}").rstrip()


def code_output(text: str) -> str:
    """What a program printed, from either code tool's observation (the terminal's exit
    code line dropped): policies read results the same way whichever tool ran them."""
    return _EXIT.sub("", text, count=1).strip()


# A group chat's programs as its scripted experts read them: shared by every benchmark
# whose group chat writes programs for the `Computer_terminal`.


def program(actor: str, text: str, code: str) -> Action:
    """A program step: the message, the program quoted in it, run on the terminal."""
    return Action(actor, f"{text}\n```python\n{code}\n```", TERMINAL, {"code": code})


def said(step: Step | Action) -> str:
    """The message of a step without the program it quotes."""
    return step.content.split("\n```python", 1)[0]


def code_of(step: Step | Action) -> str:
    """The program a step runs on the terminal ('' for any other step)."""
    return str((step.tool_args or {}).get("code", "")) if step.tool == TERMINAL else ""


def programs(history: Sequence[Step], actor: str, since: int = 0) -> list[Step]:
    """`actor`'s program steps from index `since` on."""
    return [s for s in history[since:] if s.actor == actor and s.tool == TERMINAL]


def output_after(history: Sequence[Step], step: Step) -> str:
    """What the terminal printed for `step`'s program ('' if it has not run)."""
    nxt = step.step + 1
    if nxt < len(history) and history[nxt].kind == "observation":
        return history[nxt].content
    return ""


def failed(text: str) -> bool:
    """Whether the terminal reported the program as failed."""
    return text.startswith("exitcode: 1")


def last_agent(history: Sequence[Step], actor: str | None = None) -> Step | None:
    """The latest agent step (of `actor`, if given)."""
    for step in reversed(history):
        if step.is_agent_step and (actor is None or step.actor == actor):
            return step
    return None


def final_action(actor: str, answer: str, verified_steps: int | None = None) -> Action:
    text = (
        f"I checked all {verified_steps} calculations against the problem; they use the "
        f"right operations. Final answer: {answer}."
        if verified_steps is not None
        else f"All operations are done; the answer is {answer}."
    )
    return Action(actor, text, "final_answer", {"answer": answer})
