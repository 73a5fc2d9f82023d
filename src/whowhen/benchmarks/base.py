"""What every benchmark environment shares: the `final_answer` tool, `done`, dispatch of
tool calls to the environment's own tools, and scoring with the benchmark's rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from whowhen.runtime import Action, Verdict

Tool = Callable[[dict[str, Any]], str]

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


class AnswerEnv:
    """Subclasses set benchmark/modality/category, implement `reset()` (calling `_start()`),
    `tools()` (name -> function of the call's arguments) and `score(answer, gold)`."""

    benchmark: str
    modality: str
    category: str

    def __init__(self, task: Any) -> None:
        self.task = task
        self.task_id: str = task.task_id
        self._answer: str | None = None
        self._done = False

    def _start(self) -> None:
        self._answer, self._done = None, False

    def tools(self) -> dict[str, Tool]:
        raise NotImplementedError

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        raise NotImplementedError

    def step(self, action: Action) -> tuple[str, str] | None:
        if action.tool is None:  # a message between agents: nothing to execute
            return None
        args = action.tool_args or {}
        if action.tool == "final_answer":
            self._answer, self._done = str(args.get("answer", "")), True
            return None
        tool = self.tools().get(action.tool)
        if tool is None:
            return action.tool, f"Error: unknown tool {action.tool!r}"
        return action.tool, tool(args)

    @property
    def done(self) -> bool:
        return self._done

    def evaluate(self) -> Verdict:
        ok = self.score(self._answer, str(self.task.answer))
        return Verdict(ok, 1.0 if ok else 0.0, self._answer)
