"""Multi-step arithmetic word problems (text, STEM): the task generator and the problem reader.

A task is a start quantity and a chain of operations told as sentences. The gold
answer comes from the hidden chain; agents only see the text, so a policy must
*read* the problem (`parse_problem`) like any solver would.
"""

from __future__ import annotations

import operator
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from whowhen.benchmarks.base import integer, section_schema
from whowhen.schema import stable_id

BENCHMARK = "arithmetic"
MODALITY = "text"
CATEGORY = "stem"
MIN_OPS, MAX_OPS = 5, 20
"""Default chain lengths: runs of realistic length (median 12+ agent steps, a tail
past 40), from short problems to long ones."""
CONFIG_SCHEMA = section_schema(min_ops=integer(1, 30, MIN_OPS), max_ops=integer(1, 30, MAX_OPS))
"""JSON Schema of this benchmark's section under `benchmarks:` in the config."""


def check_config(cfg: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What the schema cannot say: the operation counts must make a range."""
    if cfg["min_ops"] > cfg["max_ops"]:
        return [("min_ops", "min_ops is larger than max_ops")]
    return []


NAMES = ("Ava", "Ben", "Chloe", "Dev", "Elif", "Femi", "Grace", "Hiro", "Ines", "Jon")
ITEMS = ("apples", "stickers", "marbles", "coins", "books", "shells", "cards", "pencils")

# op -> (sentence template, symbol, verb used in reasoning text)
OPS: dict[str, tuple[str, str, str]] = {
    "add": ("Then {name} gets {n} more {item}.", "+", "add"),
    "sub": ("Then {name} gives away {n} {item}.", "-", "subtract"),
    "mul": ("Then the number of {item} {name} has becomes {n} times as large.", "*", "multiply by"),
    "div": (
        "Then {name} splits the {item} into {n} equal groups and keeps one group.",
        "/",
        "divide by",
    ),
}
SYMBOL_TO_OP = {sym: op for op, (_, sym, _) in OPS.items()}
_START = "{name} has {n} {item}."
_QUESTION = "How many {item} does {name} have now?"


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str
    start: int
    ops: tuple[tuple[str, int], ...]
    answer: int


def generate_tasks(n_tasks: int, seed: int, min_ops: int = 3, max_ops: int = 5) -> list[Task]:
    """`n_tasks` problems from one seed; every intermediate value is a positive integer."""
    tasks = []
    for index in range(n_tasks):
        rng = random.Random(f"{seed}:{index}")
        name, item = rng.choice(NAMES), rng.choice(ITEMS)
        value = rng.randint(5, 60)
        start, ops = value, []
        for _ in range(rng.randint(min_ops, max_ops)):
            op, n = _pick_op(rng, value)
            ops.append((op, n))
            value = _APPLY[op](value, n)
        text = " ".join(
            [_START.format(name=name, n=start, item=item)]
            + [OPS[op][0].format(name=name, n=n, item=item) for op, n in ops]
            + [_QUESTION.format(item=item, name=name)]
        )
        task_id = f"arith-{stable_id(BENCHMARK, seed, index)[:10]}"
        tasks.append(Task(task_id, text, start, tuple(ops), value))
    return tasks


_APPLY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.floordiv}


def _pick_op(rng: random.Random, value: int) -> tuple[str, int]:
    divisors = [d for d in range(2, 10) if value % d == 0 and value // d >= 2]
    choices = (
        ["add", "add", "mul"]
        + (["sub", "sub"] if value > 3 else [])
        + (["div"] if divisors else [])
    )
    if value > 500:
        choices = [c for c in choices if c != "mul"]
    op = rng.choice(choices)
    if op == "add":
        return op, rng.randint(2, 40)
    if op == "sub":
        return op, rng.randint(1, value - 1)
    if op == "mul":
        return op, rng.randint(2, 5)
    return op, rng.choice(divisors)


_PATTERNS = [
    (
        re.compile(
            re.escape(tpl)
            .replace(r"\{name\}", r"\w+")
            .replace(r"\{n\}", r"(\d+)")
            .replace(r"\{item\}", r"\w+")
        ),
        op,
    )
    for op, (tpl, _, _) in OPS.items()
]
_START_RE = re.compile(r"^(\w+) has (\d+) (\w+)\.")


def parse_problem(text: str) -> tuple[int, list[tuple[str, int]]]:
    """Read start value and operation chain from a problem text (what a solver sees)."""
    m = _START_RE.match(text)
    if not m:
        raise ValueError("cannot find the starting quantity in the problem")
    found = []
    for pattern, op in _PATTERNS:
        found += [(hit.start(), op, int(hit.group(1))) for hit in pattern.finditer(text)]
    return int(m.group(2)), [(op, n) for _, op, n in sorted(found)]


def parse_story(text: str) -> tuple[str, str]:
    """(name, item) of a problem text: who the story is about and what is counted."""
    m = _START_RE.match(text)
    return (m.group(1), m.group(3)) if m else ("they", "items")


def make_tasks(cfg: dict, seed: int) -> list[Task]:
    """The registry's entry point: tasks from the benchmark's config section."""
    return generate_tasks(
        cfg["n_tasks"], seed, cfg.get("min_ops", MIN_OPS), cfg.get("max_ops", MAX_OPS)
    )


def shown_problem(history: Sequence[Any]) -> tuple[int, list[tuple[str, int]]] | None:
    """The problem shown at step 0 of a run's history, or None when the history is not an
    arithmetic task (operators are registered for every benchmark)."""
    if not history or "Problem: " not in history[0].content:
        return None
    try:
        return parse_problem(history[0].content.split("Problem: ", 1)[-1])
    except ValueError:
        return None
