"""Chart QA (image): bar charts rendered from generated data, questions on the largest and
smallest bar, the difference between two named bars, and the trend from left to right.

The task text states the y range and lists the categories left to right (the caption);
the values exist only in the image. `read_chart` measures the bars from the pixels
(chart_render.read_bar_values), never from the hidden data, and `calculator` does the
arithmetic. Scoring is ChartQA's relaxed accuracy (numbers within 5%, names exact).
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass
from functools import lru_cache

from whowhen.benchmarks.base import integer, section_schema
from whowhen.benchmarks.chart_qa.render import BAR_COLOURS, chart_png
from whowhen.media import media_path, put_bytes
from whowhen.schema import stable_id

BENCHMARK = "chart_qa"
MODALITY = "image"
CATEGORY = "chart_qa"
CONFIG_SCHEMA = section_schema(
    ymax=integer(20, 200, 100), min_bars=integer(3, 14, 8), max_bars=integer(3, 14, 12)
)
"""JSON Schema of this benchmark's section under `benchmarks:` in the config."""
CITIES = (
    "Porto",
    "Lyon",
    "Graz",
    "Tartu",
    "Bergen",
    "Ghent",
    "Turin",
    "Split",
    "Oslo",
    "Riga",
    "Bonn",
    "Cork",
    "Nice",
    "Bern",
)
KINDS = ("max", "min", "diff", "trend")
TRENDS = ("rise", "fall", "neither")
QUESTIONS = {
    "max": "Which city has the highest value?",
    "min": "Which city has the lowest value?",
    "diff": "How much higher is the value for {a} than the value for {b}?",
    "trend": "From left to right, do the values rise, fall or neither? "
    "Answer rise, fall or neither.",
}
_CAPTION = re.compile(
    r"y axis runs from 0 to (\d+)\. Caption: the bars are, left to right, (.+?)\."
)
_DIFF = re.compile(r"How much higher is the value for (\w+) than the value for (\w+)\?")


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str
    answer: str
    media: tuple[str, ...]
    categories: tuple[str, ...]
    values: tuple[int, ...]  # hidden: only the image shows them
    kind: str
    pair: tuple[str, str] | None
    ymax: int
    colour: str


@dataclass(frozen=True)
class TaskInfo:
    """What a solver can read from the task text."""

    categories: tuple[str, ...]
    ymax: int
    kind: str
    pair: tuple[str, str] | None
    question: str


def trend_of(values: list[int] | tuple[int, ...]) -> str:
    """rise (each value above the last), fall (each below), else neither."""
    steps = [b - a for a, b in itertools.pairwise(values)]
    if all(s > 0 for s in steps):
        return "rise"
    if all(s < 0 for s in steps):
        return "fall"
    return "neither"


def _values(rng: random.Random, n: int, ymax: int, trend: str | None) -> list[int]:
    values = rng.sample(range(5, ymax - 4), n)  # distinct: max and min are unique
    if trend == "rise":
        return sorted(values)
    if trend == "fall":
        return sorted(values, reverse=True)
    if trend == "neither":  # a steady run with one dip: every pair of neighbours matters
        values = sorted(values, reverse=rng.random() < 0.5)
        i = rng.randrange(1, n)
        values[i - 1], values[i] = values[i], values[i - 1]
        return values
    while trend_of(values) != "neither":
        rng.shuffle(values)
    return values


@lru_cache(maxsize=64)
def _generate(
    n_tasks: int, seed: int, ymax: int, min_bars: int = 8, max_bars: int = 12
) -> tuple[Task, ...]:
    tasks = []
    for index in range(n_tasks):
        rng = random.Random(f"{seed}:chart:{index}")
        n = rng.randint(min_bars, max(min_bars, max_bars))
        categories = tuple(rng.sample(CITIES, n))
        kind = KINDS[index % len(KINDS)] if index < len(KINDS) else rng.choice(KINDS)
        trend = rng.choice(TRENDS) if kind == "trend" else None
        values = tuple(_values(rng, n, ymax, trend))
        colour = rng.choice(BAR_COLOURS)
        by_name = dict(zip(categories, values, strict=True))
        pair = None
        if kind == "diff":
            a, b = rng.sample(categories, 2)
            pair = (a, b) if by_name[a] > by_name[b] else (b, a)
            answer = str(by_name[pair[0]] - by_name[pair[1]])
        elif kind == "trend":
            answer = trend_of(values)
        else:
            pick = max if kind == "max" else min
            answer = pick(categories, key=by_name.__getitem__)
        question = QUESTIONS[kind].format(a=pair[0], b=pair[1]) if pair else QUESTIONS[kind]
        ref = put_bytes(chart_png(values, categories, colour, ymax), "png")
        task_id = f"chart-{stable_id(BENCHMARK, seed, index)[:10]}"
        tasks.append(
            Task(task_id, question, answer, (ref,), categories, values, kind, pair, ymax, colour)
        )
    return tuple(tasks)


def ensure_media(task: Task) -> None:
    """Write the task's image into the current media store if it is not there (the store
    can change between make_tasks and reset, e.g. per test); the bytes are cached."""
    if not media_path(task.media[0]).exists():
        put_bytes(chart_png(task.values, task.categories, task.colour, task.ymax), "png")


def generate_tasks(
    n_tasks: int, seed: int, ymax: int = 100, min_bars: int = 8, max_bars: int = 12
) -> list[Task]:
    """The tasks (8 to 12 bars by default: a run reads the bars one by one, so more bars
    make longer runs)."""
    tasks = list(_generate(n_tasks, seed, ymax, min_bars, max_bars))
    for task in tasks:
        ensure_media(task)
    return tasks


def task_text(task: Task) -> str:
    return (
        "Answer the question about the bar chart in the image. It shows one value per "
        f"city; the y axis runs from 0 to {task.ymax}. Caption: the bars are, left to "
        f"right, {', '.join(task.categories)}. Tools: read_chart(), calculator(expression), "
        f"final_answer(answer).\n\nQuestion: {task.question}"
    )


def parse_task(text: str) -> TaskInfo:
    """The categories, y range, question kind and named pair, from the task text."""
    m = _CAPTION.search(text)
    if not m:
        raise ValueError("cannot find the chart caption in the task")
    question = text.split("Question: ", 1)[-1].strip()
    diff = _DIFF.search(question)
    kind = next(
        (k for k, q in QUESTIONS.items() if k != "diff" and q == question),
        "diff" if diff else "",
    )
    if not kind:
        raise ValueError("cannot parse the question")
    pair = (diff.group(1), diff.group(2)) if diff else None
    return TaskInfo(tuple(m.group(2).split(", ")), int(m.group(1)), kind, pair, question)


def format_values(values: list[tuple[str, int]]) -> str:
    return ", ".join(f"{name} {value}" for name, value in values)


def make_tasks(cfg: dict, seed: int) -> list[Task]:
    """The registry's entry point: tasks from the benchmark's config section."""
    return generate_tasks(
        cfg["n_tasks"],
        seed,
        int(cfg.get("ymax", 100)),
        int(cfg.get("min_bars", 8)),
        int(cfg.get("max_bars", 12)),
    )
