"""Taxonomy stage: the validated taxonomy, the natural-failure overview, the mode overview
of the decisive errors (from replay, or from an LLM annotator when one is configured), the
replay and classifier checks against the slip log, and candidate new modes."""

from __future__ import annotations

import logging
from typing import Any

import polars as pl
import yaml

from whowhen.attribution.llm import LLMAttributor
from whowhen.attribution.llm_protocols import attribute_llm
from whowhen.io import write_text
from whowhen.models import make_client
from whowhen.sampling import stratified_sample
from whowhen.schema import (
    AGREEMENT,
    CANDIDATES,
    DECISIVE,
    MODE_OVERVIEW,
    OVERVIEW,
    PREDICTIONS,
    PROBES,
    REPLAY_CHECK,
    RUNS,
    SLIPS,
    STEPS,
    empty,
    read_tables,
    write_table,
)
from whowhen.taxonomy import Taxonomy, load_taxonomy
from whowhen.taxonomy.overview import agreement, failure_overview, mode_overview, replay_check
from whowhen.taxonomy.propose import propose_modes

log = logging.getLogger(__name__)


def annotate_failures(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    taxonomy: Taxonomy,
    client: Any,
    sample: tuple[int, int] | None = None,
) -> pl.DataFrame:
    """LLM annotator: the decisive agent, step and mode of each failed rollout (or of a
    seeded sample of `sample` = (size, seed), stratified by benchmark), with the taxonomy
    (ids and definitions) in the prompt and the mode constrained to it."""
    failed = runs.filter(~pl.col("success"))
    if sample is not None:
        failed = stratified_sample(failed, *sample)
        log.info("annotator: a sample of %d failed runs (taxonomy.annotator_sample)", failed.height)
    annotator = LLMAttributor(f"annotator:{client.spec.model_id}", client.spec.model_id)
    modes = {m.id: m.definition for m in taxonomy.modes}
    return attribute_llm(failed, steps, annotator, client, modes)


def stage(params: dict[str, Any], inputs: Any, outputs: Any, wildcards: Any) -> None:
    """Snakemake edge: every summary of the natural failures, for the report and for the
    injection stage (which draws modes in proportion to the mode overview)."""
    taxonomy = load_taxonomy(inputs["taxonomy"])
    write_text(outputs["taxonomy"], yaml.safe_dump(taxonomy.to_dict(), sort_keys=False))
    runs = read_tables(list(inputs["runs"]), RUNS)
    slips = read_tables(list(inputs["slips"]), SLIPS)
    decisive = read_tables(list(inputs["decisive"]), DECISIVE)
    probes = read_tables(list(inputs["probes"]), PROBES)
    write_table(failure_overview(runs, slips), OVERVIEW, outputs["overview"])
    annotations = empty(PREDICTIONS)
    modes, source = decisive.select("run_id", "mode"), "replay"
    model = params["taxonomy"].get("annotator")
    if model:
        client = make_client(model, {**params["llm"], "progress": False}, params["models"])
        size = params["taxonomy"].get("annotator_sample")
        annotations = annotate_failures(
            runs, read_tables(list(inputs["steps"]), STEPS), taxonomy, client,
            (size, params["seed"]) if size else None,
        )  # fmt: skip
        modes, source = annotations.select("run_id", "mode"), f"annotator:{model}"
    write_table(annotations, PREDICTIONS, outputs["annotations"])
    write_table(mode_overview(modes, runs, source), MODE_OVERVIEW, outputs["mode_overview"])
    check = replay_check(decisive, slips, probes)
    write_table(check, REPLAY_CHECK, outputs["replay_check"])
    write_table(agreement(decisive, slips), AGREEMENT, outputs["agreement"])
    write_table(propose_modes(decisive), CANDIDATES, outputs["candidates"])
    total = check.filter(pl.col("benchmark") == "all").to_dicts()
    if total:
        log.info(
            "replay: %d failures, %d decisive; one-slip failures found %d/%d",
            total[0]["n_failed"],
            total[0]["n_decisive"],
            total[0]["n_one_slip_found"],
            total[0]["n_one_slip"],
        )
