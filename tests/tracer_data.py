"""Hand-built runs for the attribution heuristics and tracer-lite: a steps table from
(actor, kind, content) rows, and runs with a planted signal the tracer can learn."""

from __future__ import annotations

import json
import random
from typing import Any

import polars as pl

from whowhen.schema import LABELS, RUNS, STEPS, to_arrow


def steps_table(run_id: str, rows: list[tuple[Any, ...]]) -> pl.DataFrame:
    """(actor, kind, content[, tool, tool_args]) rows -> a valid steps table, step 0 the task."""
    out = []
    for i, (actor, kind, content, *rest) in enumerate(rows):
        tool, args = [*rest, None, None][:2]
        out.append(
            {
                "run_id": run_id,
                "step": i,
                "actor": actor,
                "role": None,
                "kind": kind,
                "content": content,
                "tool": tool,
                "tool_args": json.dumps(args, sort_keys=True) if args is not None else None,
                "media": [],
            }
        )
    return pl.from_arrow(to_arrow(out, STEPS))


def run_row(run_id: str, benchmark: str, task_id: str) -> dict[str, Any]:
    """A failed 7-step run of a two-agent system."""
    return {
        "run_id": run_id,
        "benchmark": benchmark,
        "task_id": task_id,
        "modality": "text",
        "system": "duo",
        "topology": "multi",
        "policy": "scripted",
        "seed": 0,
        "origin": "imported",
        "success": False,
        "n_steps": 7,
    }


WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "theta",
    "kappa",
    "lambda",
    "sigma",
    "omega",
]


def synthetic_runs(n_runs: int, seed: int = 0) -> dict[str, pl.DataFrame]:
    """Runs of 6 agent steps of random words; the gold step (at a random position, by a
    random agent) alone says "zorblax". Half the runs train, a quarter dev, a quarter test."""
    rng = random.Random(seed)
    runs, steps, labels = [], [], []
    for k in range(n_runs):
        run_id = f"run{k:03d}"
        gold = rng.randrange(1, 7)
        rows = [("user", "message", "Solve the task.")]
        for i in range(1, 7):
            words = rng.sample(WORDS, 4) + (["zorblax"] if i == gold else [])
            rng.shuffle(words)
            rows.append((rng.choice(["planner", "solver"]), "message", " ".join(words)))
        steps.append(steps_table(run_id, rows))
        runs.append(run_row(run_id, "synthetic", f"t{k}"))
        split = "train" if k % 4 < 2 else ("dev" if k % 4 == 2 else "test")
        labels.append(
            {
                "run_id": run_id,
                "decisive_agent": rows[gold][0],
                "decisive_step": gold,
                "source": "imported",
                "split": split,
            }
        )
    return {
        "runs": pl.from_arrow(to_arrow(runs, RUNS)),
        "steps": pl.concat(steps),
        "labels": pl.from_arrow(to_arrow(labels, LABELS)),
    }


def positional_runs(n_runs: int, prefix: str, gold_first: bool, seed: int = 0) -> dict[str, Any]:
    """Runs of 6 agent steps of random words whose gold step is always the first agent
    step (`gold_first`) or always the last: only the position tells."""
    rng = random.Random(seed)
    runs, steps, labels = [], [], []
    for k in range(n_runs):
        run_id = f"{prefix}{k:03d}"
        rows = [("user", "message", "Solve the task.")]
        rows += [(rng.choice(["planner", "solver"]), "message", " ".join(rng.sample(WORDS, 4)))]
        rows += [(rng.choice(["planner", "solver"]), "message", " ".join(rng.sample(WORDS, 4)))]
        rows += [("solver", "message", " ".join(rng.sample(WORDS, 4))) for _ in range(4)]
        gold = 1 if gold_first else 6
        steps.append(steps_table(run_id, rows))
        runs.append(run_row(run_id, prefix, f"{prefix}-t{k}"))
        labels.append(
            {
                "run_id": run_id,
                "decisive_agent": rows[gold][0],
                "decisive_step": gold,
                "source": "imported",
                "split": "train" if prefix == "built" and k % 2 == 0 else "test",
            }
        )
    return {
        "runs": pl.from_arrow(to_arrow(runs, RUNS)),
        "steps": pl.concat(steps),
        "labels": pl.from_arrow(to_arrow(labels, LABELS)),
    }
