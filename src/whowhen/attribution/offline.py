"""The attributors that need no model and no environment (baselines, shortcut predictors,
heuristics), run by name: `ATTRIBUTORS` and `attribute()`.

Why apart from the factory: the analysis stage and the CLI need these names and this
function without loading the oracle, which replays agents in their environments.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import polars as pl

from whowhen.attribution.baselines import BASELINES, agent_steps, prediction_row
from whowhen.attribution.heuristics import HEURISTICS
from whowhen.attribution.shortcuts import SHORTCUTS, training_rows
from whowhen.errors import WhowhenError
from whowhen.schema import PREDICTIONS, to_arrow

log = logging.getLogger(__name__)

ATTRIBUTORS = (*BASELINES, *SHORTCUTS, *HEURISTICS)
"""Attributors `attribute()` runs; the oracle (needs the environment) and tracer-lite (needs
its fitted model) run in `stage()`."""


def attribute(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    attributor: str,
    seed: int,
    labels: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Predict (agent, step) for every run in `runs` with one attributor. The shortcut
    predictors are fitted on the train split of `labels` first (none: no predictions)."""
    if attributor not in ATTRIBUTORS:
        raise WhowhenError(
            f"unknown attributor {attributor!r}; known: {', '.join(ATTRIBUTORS)}",
            field="attribution.attributors",
        )
    candidates = agent_steps(steps)
    by_run = {key[0]: frame for key, frame in candidates.group_by("run_id")}
    all_by_run = {key[0]: frame for key, frame in steps.group_by("run_id")}
    if attributor in SHORTCUTS:
        predict = _shortcut(attributor, labels, runs, candidates)
    elif attributor in BASELINES:
        predict = BASELINES[attributor]
    rows = []
    for run_id in sorted(runs["run_id"]):
        frame = by_run.get(run_id, candidates.clear())
        reason = None
        if attributor in HEURISTICS:
            found = HEURISTICS[attributor](frame, all_by_run.get(run_id, steps.clear()))
            answer, reason = (found[:2], found[2]) if found is not None else (None, None)
        else:
            answer = predict(frame, seed)
        agent, step = answer if answer is not None else (None, None)
        rows.append(
            prediction_row(
                run_id,
                attributor,
                agent=agent,
                step=step,
                reason=reason,
                raw_output=json.dumps({"agent": agent, "step": step}),
                parse_ok=answer is not None,
            )
        )
    log.info("attribution %s: %d predictions", attributor, len(rows))
    return pl.from_arrow(to_arrow(rows, PREDICTIONS))


def _shortcut(
    attributor: str, labels: pl.DataFrame | None, runs: pl.DataFrame, candidates: pl.DataFrame
) -> Callable[..., tuple[str, int] | None]:
    """A shortcut predictor fitted on the train split of `labels` (none: it predicts
    nothing), as a baseline-style `predict(frame, seed)`."""
    system_of = dict(zip(runs["run_id"], runs["system"], strict=True))
    train = training_rows(
        labels
        if labels is not None
        else pl.DataFrame(
            {"run_id": [], "split": [], "decisive_agent": [], "decisive_step": []},
            schema={
                "run_id": pl.String,
                "split": pl.String,
                "decisive_agent": pl.String,
                "decisive_step": pl.Int64,
            },
        ),
        runs,
        candidates,
    )
    fitted = SHORTCUTS[attributor](train) if train.height else None
    if fitted is None:
        log.warning("%s: no train split to fit on; no predictions", attributor)

    def predict(frame: pl.DataFrame, seed: int, run_id: str = "") -> tuple[str, int] | None:
        if fitted is None or frame.height == 0:
            return None
        return fitted(frame, system_of[frame["run_id"][0]])

    return predict
