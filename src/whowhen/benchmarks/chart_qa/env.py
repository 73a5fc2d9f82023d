"""The chart QA environment: `read_chart` (bar heights from the PNG's pixels) and
`calculator`, and ChartQA's relaxed accuracy."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from whowhen.benchmarks.base import AnswerEnv, Observation, Tool
from whowhen.benchmarks.chart_qa.render import find_frame, read_bar_values
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
            "properties": {
                "image": {"type": "string", "description": "optional image ref"},
                "part": {
                    "type": "string",
                    "description": "optional: 'axis' for the scale, or a category's name "
                    "to measure that one bar",
                },
            },
        },
    },
    CALCULATOR_TOOL,
    FINAL_ANSWER_TOOL,
)


@lru_cache(maxsize=256)
def _measured(ref: str, ymax: int) -> tuple[tuple[int, ...] | None, float]:
    """(bar values, pixels per unit) of one stored chart: a run measures the same image
    many times (the axis, the whole chart, single bars), so the pixels are read once."""
    rgb = load_rgb(ref)
    values = read_bar_values(rgb, ymax)
    frame = find_frame(rgb)
    ppu = (frame[1] - frame[0]) / ymax if frame else 0.0
    return (tuple(values) if values else None), ppu


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
        values, ppu = _measured(ref, self.task.ymax)
        names, ymax = self.task.categories, self.task.ymax
        part = args.get("part")
        if part == "axis":
            step = max(1, ymax // 5)
            return (
                f"Axis: the y axis runs from 0 to {ymax} with ticks every {step}; the frame is "
                f"{ppu * ymax:.0f} px tall, so one unit is {ppu:.2f} px.\n"
                f"Under the x axis: {len(names)} labels, left to right: {', '.join(names)}."
            )
        if values is None or len(values) != len(names):
            found = len(values) if values else 0
            return f"Error: found {found} bars but the caption lists {len(names)}"
        if part is not None:
            if part not in names:
                return f"Error: no bar labelled {part!r} (the labels are {', '.join(names)})"
            i = names.index(str(part))
            near = [f"{names[j]} {values[j]}" for j in (i - 1, i + 1) if 0 <= j < len(names)]
            return (
                f"Bar {i + 1} of {len(names)}, {part}: {round(values[i] * ppu)} px tall at "
                f"{ppu:.2f} px per unit, so it reads {values[i]}.\n"
                f"Neighbouring bars for comparison: {', '.join(near)}."
            )
        pairs = list(zip(names, values, strict=True))
        lo, hi = min(values), max(values)
        return (
            f"Bars read from the image, left to right: {format_values(pairs)}.\n"
            f"{len(values)} bars found, as the caption lists; measured at {ppu:.2f} px per "
            f"unit. The tallest bar reads {hi}, the shortest {lo}."
        )

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        return relaxed(answer, gold)


Env = ChartQAEnv
