"""The chart QA environment: `read_chart` (bar heights from the PNG's pixels) and
`calculator`, and ChartQA's relaxed accuracy."""

from __future__ import annotations

from typing import Any

from whowhen.benchmarks.base import AnswerEnv, Observation, Tool
from whowhen.benchmarks.chart_qa.render import read_bar_values
from whowhen.benchmarks.chart_qa.tasks import (
    BENCHMARK,
    CATEGORY,
    MODALITY,
    ensure_media,
    format_values,
    task_text,
)
from whowhen.benchmarks.scoring import relaxed
from whowhen.media import load_rgb
from whowhen.tools import CALCULATOR_TOOL, FINAL_ANSWER_TOOL, calculate

TOOL_SPECS = (
    {
        "name": "read_chart",
        "description": "Measure the bars of the task's bar chart from its pixels and return "
        "their values, left to right, labelled with the caption's categories.",
        "parameters": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"image": {"type": "string", "description": "optional image ref"}},
        },
    },
    CALCULATOR_TOOL,
    FINAL_ANSWER_TOOL,
)


class ChartQAEnv(AnswerEnv):
    benchmark, modality, category = BENCHMARK, MODALITY, CATEGORY

    def reset(self) -> str:
        self._start()
        ensure_media(self.task)
        return task_text(self.task)

    def tools(self) -> dict[str, Tool]:
        return {
            "read_chart": self._read_chart,
            "calculator": lambda args: calculate(str(args.get("expression", ""))),
        }

    def _read_chart(self, args: dict[str, Any]) -> Observation:
        ref = str(args.get("image") or self.task.media[0])
        if ref not in self.task_media:
            return f"Error: no image {ref!r} in this task"
        values = read_bar_values(load_rgb(ref), self.task.ymax)
        if values is None or len(values) != len(self.task.categories):
            found = len(values) if values else 0
            return f"Error: found {found} bars but the caption lists {len(self.task.categories)}"
        pairs = list(zip(self.task.categories, values, strict=True))
        return f"Bars read from the image, left to right: {format_values(pairs)}."

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        return relaxed(answer, gold)


Env = ChartQAEnv
