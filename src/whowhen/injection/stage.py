"""Injection stage: plan one taxonomy-grounded error per planned trajectory of one
(benchmark, system) shard."""

from __future__ import annotations

import logging
from typing import Any

import polars as pl

from whowhen.defaults import filled
from whowhen.injection import plan as plan_module
from whowhen.injection.llm_generator import LLMErrorGenerator
from whowhen.injection.plan import plan_injections
from whowhen.models import make_client
from whowhen.sampling import stratified_sample
from whowhen.schema import INJECTIONS, MODE_OVERVIEW, RUNS, STEPS, read_table, write_table
from whowhen.taxonomy import load_taxonomy

log = logging.getLogger(__name__)


def mode_weights(overview: object, calibrate: float) -> dict[tuple[str, str], dict[str, float]]:
    """(benchmark, system) -> mode -> 1 + calibrate * (natural failures with that mode)."""
    weights: dict[tuple[str, str], dict[str, float]] = {}
    for row in overview.iter_rows(named=True):  # type: ignore[attr-defined]
        pair = weights.setdefault((row["benchmark"], row["system"]), {})
        pair[row["mode"]] = 1.0 + calibrate * row["count"]
    return weights


def _weights(inputs: dict[str, Any], calibrate: float) -> dict[tuple[str, str], dict[str, float]]:
    """The mode weights; uniform at calibrate 0, where the overview is not an input (so
    the paper-scale build needs no replay or taxonomy stage)."""
    if calibrate <= 0 or "mode_overview" not in inputs:
        return {}
    return mode_weights(read_table(inputs["mode_overview"], MODE_OVERVIEW), calibrate)


class ForRuns:
    """A generator for some runs (`runs`), the programmatic operators for the others: a
    slow or paid model writes the errors of a sample (`injection.generator_sample`)."""

    def __init__(self, generator: Any, runs: frozenset[str]) -> None:
        self.generator, self.runs = generator, runs

    def __call__(self, original: Any, mode: Any, context: list[dict[str, Any]], rng: Any) -> Any:
        run = context[0]["run_id"] if context else None
        chosen = self.generator if run in self.runs else plan_module.programmatic
        return chosen(original, mode, context, rng)


def stage(
    params: dict[str, Any], inputs: dict[str, Any], outputs: dict[str, Any], wildcards: object
) -> None:
    """Snakemake edge: plan the injections of one (benchmark, system) shard."""
    cfg = filled("injection", params["injection"])  # the schema's defaults, one source
    runs = read_table(inputs["runs"], RUNS)
    generator: Any = plan_module.programmatic
    if cfg["generator"] != "programmatic":
        generator = LLMErrorGenerator(
            make_client(cfg["generator"], {**params["llm"], "progress": False}, params["models"])
        )
        if cfg.get("generator_sample"):
            chosen = stratified_sample(
                runs.filter(pl.col("success")), cfg["generator_sample"], cfg["seed"]
            )
            log.info("the LLM generator writes the errors of %d runs", chosen.height)
            generator = ForRuns(generator, frozenset(chosen["run_id"]))
    planned = plan_injections(
        runs,
        read_table(inputs["steps"], STEPS),
        load_taxonomy(inputs["taxonomy"]),
        cfg["seed"],
        cfg["per_run"],
        cfg["modes"] or None,
        generator,
        _weights(inputs, cfg["calibrate"]),
        {
            b: (cfg.get("benchmarks") or {}).get(b, {}).get("steps", cfg["steps"])
            for b in params["benchmarks"]
        },
        cfg["terminal_share"],
        cfg["min_per_mode"],
    )
    write_table(planned, INJECTIONS, outputs["injections"])
