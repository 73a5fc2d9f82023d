"""Attribution stage: one prediction per (trajectory, attributor)."""

from __future__ import annotations

import json
import logging

import polars as pl

from whowhen.attribution.baselines import BASELINES, agent_steps
from whowhen.errors import WhowhenError
from whowhen.schema import PREDICTIONS, to_arrow

log = logging.getLogger(__name__)

__all__ = ["ATTRIBUTORS", "BASELINES", "attribute"]

ATTRIBUTORS = tuple(BASELINES)


def attribute(runs: pl.DataFrame, steps: pl.DataFrame, attributor: str, seed: int) -> pl.DataFrame:
    """Predict (agent, step) for every run in `runs` with one attributor."""
    if attributor not in BASELINES:
        raise WhowhenError(
            f"unknown attributor {attributor!r}; known: {', '.join(ATTRIBUTORS)}",
            field="attribution.attributors",
        )
    predict = BASELINES[attributor]
    candidates = agent_steps(steps)
    by_run = {key[0]: frame for key, frame in candidates.group_by("run_id")}
    rows = []
    for run_id in sorted(runs["run_id"]):
        frame = by_run.get(run_id, candidates.clear())
        answer = predict(frame, seed)
        agent, step = answer if answer is not None else (None, None)
        rows.append(
            {
                "run_id": run_id,
                "attributor": attributor,
                "agent": agent,
                "step": step,
                "mode": None,
                "reason": None,
                "raw_output": json.dumps({"agent": agent, "step": step}),
                "parse_ok": answer is not None,
                "calls": 0,
                "tokens_in": 0,
                "tokens_out": 0,
                "cost_usd": 0.0,
                "latency_s": 0.0,
            }
        )
    log.info("attribution %s: %d predictions", attributor, len(rows))
    return pl.from_arrow(to_arrow(rows, PREDICTIONS))


def stage(params: dict, inputs: object, outputs: object, wildcards: object) -> None:
    """Snakemake edge: one attributor over the labelled dataset."""
    from whowhen.schema import RUNS, STEPS, read_table, write_table

    predictions = attribute(
        read_table(inputs["runs"], RUNS),
        read_table(inputs["steps"], STEPS),
        wildcards["attributor"],
        params["attribution"]["seed"],
    )
    write_table(predictions, PREDICTIONS, outputs["predictions"])
