"""Attribution stage: one prediction per (trajectory, attributor)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import polars as pl

from whowhen.attribution.baselines import BASELINES, agent_steps, prediction_row
from whowhen.attribution.heuristics import HEURISTICS
from whowhen.attribution.llm import LLMAttributor
from whowhen.attribution.llm_protocols import attribute_llm
from whowhen.attribution.oracle import NAME as ORACLE
from whowhen.attribution.oracle import oracle_attribute
from whowhen.attribution.shortcuts import SHORTCUTS, training_rows
from whowhen.attribution.tracer import NAME as TRACER
from whowhen.attribution.tracer import TracerModel
from whowhen.attribution.tracer import predict as tracer_predict
from whowhen.errors import WhowhenError
from whowhen.schema import PREDICTIONS, to_arrow

log = logging.getLogger(__name__)

__all__ = [
    "ATTRIBUTORS",
    "BASELINES",
    "Attributor",
    "LLMAttributor",
    "attribute",
    "attribute_llm",
    "make_attributor",
]

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
    system_of = dict(zip(runs["run_id"], runs["system"], strict=True))
    if attributor in SHORTCUTS:
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


def llm_attributors(attribution_cfg: dict) -> dict[str, LLMAttributor]:
    """The configured LLM attributors by name."""
    out = {}
    for item in attribution_cfg.get("llm", []):
        out[item["name"]] = LLMAttributor(
            item["name"],
            item["model"],
            item.get("protocol", "all_at_once"),
            item.get("with_gold_answer", False),
            item.get("max_step_chars", 2000),
            item.get("with_media", False),
        )
    return out


Attributor = Callable[[pl.DataFrame, pl.DataFrame], pl.DataFrame]
"""(runs, steps) -> PREDICTIONS: one configured attributor, ready to run."""


def llm_runner(spec: LLMAttributor, params: dict) -> Attributor:
    """An LLM attributor with its model client (cache, usage, cost) and the taxonomy's modes."""
    from whowhen.models import make_runner
    from whowhen.taxonomy import load_taxonomy

    client = make_runner(spec.model, params["llm"], params["models"])
    modes = [m.id for m in load_taxonomy(params["taxonomy"]).modes]

    def run(runs: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
        predictions = attribute_llm(runs, steps, spec, client, modes)
        log.info("%s: model calls %s", spec.name, client.stats.as_dict())
        return predictions

    return run


def make_attributor(
    name: str,
    params: dict,
    tracer_model: str | None = None,
    labels: pl.DataFrame | None = None,
) -> Attributor:
    """The configured attributor `name`, as the attribution stage runs it on a dataset and
    the feedback stage on failed reruns. `params` holds the config sections attribution,
    llm, models, taxonomy (file), benchmarks, seed and replay."""
    llm = llm_attributors(params["attribution"])
    if name in llm:
        return llm_runner(llm[name], params)
    if name == ORACLE:
        return lambda runs, steps: oracle_attribute(
            runs,
            steps,
            params["benchmarks"],
            params["seed"],
            params["replay"]["max_probes"],
            params["replay"]["max_steps"],
        )
    if name == TRACER:
        if tracer_model is None:
            raise WhowhenError("tracer_lite needs its fitted model", field="tracer_model")
        model = TracerModel.load(tracer_model)
        return lambda runs, steps: tracer_predict(model, runs, steps)
    seed = params["attribution"]["seed"]
    return lambda runs, steps: attribute(runs, steps, name, seed, labels)


def stage(params: dict, inputs: dict, outputs: dict, wildcards: dict) -> None:
    """Snakemake edge: one attributor over one dataset (built or imported)."""
    from whowhen.schema import LABELS, RUNS, STEPS, read_table, write_table

    runs = read_table(inputs["runs"], RUNS)
    steps = read_table(inputs["steps"], STEPS)
    labels = read_table(inputs["labels"], LABELS)
    name = wildcards["attributor"]
    run = make_attributor(name, params, inputs.get("tracer_model") or None, labels)
    write_table(run(runs, steps), PREDICTIONS, outputs["predictions"])
