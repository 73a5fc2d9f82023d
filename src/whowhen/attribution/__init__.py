"""Attribution stage: one prediction per (trajectory, attributor)."""

from __future__ import annotations

import json
import logging

import polars as pl

from whowhen.attribution.baselines import BASELINES, agent_steps
from whowhen.attribution.llm import LLMAttributor, attribute_llm
from whowhen.errors import WhowhenError
from whowhen.schema import PREDICTIONS, to_arrow

log = logging.getLogger(__name__)

__all__ = ["ATTRIBUTORS", "BASELINES", "LLMAttributor", "attribute", "attribute_llm"]

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
        )
    return out


def stage(params: dict, inputs: dict, outputs: dict, wildcards: dict) -> None:
    """Snakemake edge: one attributor over one dataset (built or imported)."""
    from whowhen.schema import RUNS, STEPS, read_table, write_table

    runs = read_table(inputs["runs"], RUNS)
    steps = read_table(inputs["steps"], STEPS)
    name = wildcards["attributor"]
    llm = llm_attributors(params["attribution"])
    if name in llm:
        from whowhen.models import make_runner
        from whowhen.taxonomy import load_taxonomy

        client = make_runner(llm[name].model, params["llm"], params["models"])
        modes = [m.id for m in load_taxonomy(params["taxonomy"]).modes]
        predictions = attribute_llm(runs, steps, llm[name], client, modes)
        log.info("%s: model calls %s", name, client.stats.as_dict())
    else:
        predictions = attribute(runs, steps, name, params["attribution"]["seed"])
    write_table(predictions, PREDICTIONS, outputs["predictions"])
