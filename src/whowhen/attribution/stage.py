"""Attribution stage: one prediction per (trajectory, attributor) over one dataset, and
the tracer-lite fit every dataset's predictions share."""

from __future__ import annotations

import logging
import time

import polars as pl

from whowhen.attribution import tracer, tracer_train
from whowhen.attribution.factory import Attributors
from whowhen.defaults import filled
from whowhen.sampling import stratified_sample
from whowhen.schema import LABELS, LIFTS, PREDICTIONS, RUNS, STEPS, read_table, write_table

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
    """Snakemake edge: fit tracer-lite on the built train split and the labels of the
    imports marked `train`, the built-only model beside it, the imported training runs'
    out-of-fold predictions and the features' means (LIFTS); every dataset is predicted
    by the same model."""
    started = time.perf_counter()
    section = filled("attribution.tracer", params.get("tracer"))
    imported = {
        name: tracer_train.Tables(
            read_table(runs, RUNS), read_table(steps, STEPS), read_table(labels, LABELS)
        )
        for name, runs, steps, labels in zip(
            params.get("imported", []),
            _paths(inputs.get("imported_runs", [])),
            _paths(inputs.get("imported_steps", [])),
            _paths(inputs.get("imported_labels", [])),
            strict=True,
        )
    }
    built = tracer_train.Tables(
        read_table(inputs["runs"], RUNS),
        read_table(inputs["steps"], STEPS),
        read_table(inputs["labels"], LABELS),
    )
    fitted = tracer_train.fit_tracer(
        built,
        imported,
        tracer.TracerConfig.of(section),
        share=section["imported_share"],
        folds=section["folds"],
    )
    fitted.model.save(outputs["model"])
    fitted.built_model.save(outputs["built_model"])
    write_table(fitted.held_out, PREDICTIONS, outputs["held_out"])
    write_table(fitted.lifts, LIFTS, outputs["lifts"])
    trained = ", ".join(f"{n} {k}" for n, k in fitted.model.trained_on.items())
    log.info("%s: fitted on %s in %.1f s", tracer.NAME, trained, time.perf_counter() - started)


def _paths(value: str | list[str]) -> list[str]:
    """A named Snakemake input as a list (one file comes as a string)."""
    return [value] if isinstance(value, str) else list(value)
