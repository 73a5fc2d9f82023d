"""The arithmetic environment: the calculator tool and the exact-number evaluator."""

from __future__ import annotations

from whowhen.benchmarks.arithmetic.tasks import BENCHMARK, CATEGORY, MODALITY
from whowhen.benchmarks.base import AnswerEnv, Tool
from whowhen.tools import (
    CALCULATOR_TOOL,
    FINAL_ANSWER_TOOL,
    NUMBER,
    ONE_OPERATION,
    calculate,
    format_number,
)

TOOLS = ("calculator", "final_answer")
ONE_STEP_CALCULATOR = {
    **CALCULATOR_TOOL,
    "description": "Apply one operation (+ - * /) to two numbers and return the result.",
    "parameters": {
        **CALCULATOR_TOOL["parameters"],
        # what the role asks for (one operation at a time), in the schema: a server with
        # grammars (llama.cpp) then holds even a tiny model to it
        "properties": {"expression": {"type": "string", "pattern": ONE_OPERATION}},
    },
}
NUMBER_ANSWER = {
    **FINAL_ANSWER_TOOL,
    "parameters": {
        **FINAL_ANSWER_TOOL["parameters"],
        "properties": {"answer": {"type": "string", "pattern": NUMBER}},
    },
}
TOOL_SPECS = (ONE_STEP_CALCULATOR, NUMBER_ANSWER)
"""Tool schemas (JSON Schema parameters), for LLM policies: native tool calls or text."""


def normalize_answer(answer: str | None) -> str | None:
    """Exact-match normalisation: trim, drop thousands separators and a trailing '.0'."""
    if answer is None:
        return None
    text = str(answer).strip().replace(",", "")
    try:
        return format_number(float(text))
    except ValueError:
        return text


class ArithmeticEnv(AnswerEnv):
    """Calculator environment. Deterministic: the same actions give the same observations."""

    benchmark, modality, category = BENCHMARK, MODALITY, CATEGORY

    def reset(self) -> str:
        self._start()
        return (
            "Solve the word problem. Tools: calculator(expression), "
            f"final_answer(answer).\n\nProblem: {self.task.question}"
        )

    def tools(self) -> dict[str, Tool]:
        return {"calculator": lambda args: calculate(str(args.get("expression", "")))}

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        return normalize_answer(answer) == gold


Env = ArithmeticEnv
