"""Attribution stage: one prediction per (trajectory, attributor) over one dataset, and
the tracer-lite fit every dataset's predictions share."""

from __future__ import annotations

import logging
import time

import polars as pl

from whowhen.attribution import tracer
from whowhen.attribution.factory import Attributors
from whowhen.sampling import stratified_sample
from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, read_table, write_table

log = logging.getLogger(__name__)


def stage(params: dict, inputs: dict, outputs: dict, wildcards: dict) -> None:
    """Snakemake edge: one attributor over one dataset (built or imported)."""
    runs = read_table(inputs["runs"], RUNS)
    steps = read_table(inputs["steps"], STEPS)
    labels = read_table(inputs["labels"], LABELS)
    name = wildcards["attributor"]
    configured = Attributors(params, inputs.get("tracer_model") or None, labels)
    run = configured.make(name)
    size = params["attribution"]["llm_sample"]
    if size and name in configured.llm:
        runs = sample_runs(runs, labels, size, params["attribution"]["seed"])
        log.info("%s: a sample of %d items (attribution.llm_sample)", name, runs.height)
    write_table(run(runs, steps), PREDICTIONS, outputs["predictions"])


def sample_runs(runs: pl.DataFrame, labels: pl.DataFrame, size: int, seed: int) -> pl.DataFrame:
    """A seeded sample of `size` runs for a paid or slow attributor: from the test split
    (every run when the test split is empty), stratified by benchmark."""
    split = runs.join(labels.select("run_id", "split"), on="run_id", how="left")
    pool = split.filter(pl.col("split") == "test")
    pool = pool if not pool.is_empty() else split
    keep = stratified_sample(pool, size, seed)["run_id"].to_list()
    return runs.filter(pl.col("run_id").is_in(keep))


def tracer_fit(params: dict, inputs: dict, outputs: dict, wildcards: dict) -> None:
    """Snakemake edge: fit tracer-lite on the built dataset's train split and save it, so
    every dataset (imports too) is predicted by the same model."""
    started = time.perf_counter()
    model = tracer.fit(
        read_table(inputs["runs"], RUNS),
        read_table(inputs["steps"], STEPS),
        read_table(inputs["labels"], LABELS),
        tracer.TracerConfig.of(params.get("tracer")),
    )
    model.save(outputs["model"])
    log.info("%s: fitted in %.1f s", tracer.NAME, time.perf_counter() - started)
