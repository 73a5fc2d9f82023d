"""What every benchmark environment shares: the `final_answer` and `run_python` tools,
`done`, dispatch of tool calls to the environment's own tools, and scoring with the
benchmark's rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from whowhen.runtime import Action, Verdict

Observation = str | tuple[str, tuple[str, ...]]
"""A tool's result: its text, or (text, media references) when it shows images."""
Tool = Callable[[dict[str, Any]], Observation]

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


def run_python(args: dict[str, Any]) -> str:
    """The sandboxed `run_python` tool: stdout, or the error, plus the status if not ok.

    Only the standard library is importable (the sandbox runs `python -I -S`), which keeps
    the output a function of the code alone."""
    from whowhen.sandbox import Limits
    from whowhen.sandbox import run_python as sandboxed

    result = sandboxed(str(args.get("code", "")), Limits(wall_s=10.0, cpu_s=5, memory_mb=512))
    text = result.stdout.rstrip()
    if result.status != "ok":
        tail = result.stderr.strip().splitlines()[-1:] or [result.status]
        text = f"{text}\n[{result.status}] {tail[0]}".strip()
    return text or "(no output)"


class AnswerEnv:
    """Subclasses set benchmark/modality/category, implement `reset()` (calling `_start()`),
    `tools()` (name -> function of the call's arguments) and `score(answer, gold)`."""

    benchmark: str
    modality: str
    category: str

    def __init__(self, task: Any) -> None:
        self.task = task
        self.task_id: str = task.task_id
        self.task_media: tuple[str, ...] = tuple(getattr(task, "media", ()))
        self._answer: str | None = None
        self._done = False

    def _start(self) -> None:
        self._answer, self._done = None, False

    def tools(self) -> dict[str, Tool]:
        raise NotImplementedError

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        raise NotImplementedError

    def step(self, action: Action) -> tuple[str, str] | tuple[str, str, tuple[str, ...]] | None:
        if action.tool is None:  # a message between agents: nothing to execute
            return None
        args = action.tool_args or {}
        if action.tool == "final_answer":
            self._answer, self._done = str(args.get("answer", "")), True
            return None
        tool = {"run_python": run_python, **self.tools()}.get(action.tool)
        if tool is None:
            return action.tool, f"Error: unknown tool {action.tool!r}"
        result = tool(args)
        if isinstance(result, tuple):
            return action.tool, result[0], tuple(result[1])
        return action.tool, result

    @property
    def done(self) -> bool:
        return self._done

    def evaluate(self) -> Verdict:
        ok = self.score(self._answer, str(self.task.answer))
        return Verdict(ok, 1.0 if ok else 0.0, self._answer)
