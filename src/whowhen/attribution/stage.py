"""Attribution stage: one prediction per (trajectory, attributor) over one dataset, and
the tracer-lite fit every dataset's predictions share."""

from __future__ import annotations

import logging
import time

import polars as pl

from whowhen.attribution import tracer
from whowhen.attribution.factory import llm_attributors, make_attributor
from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, read_table, stable_id, write_table

log = logging.getLogger(__name__)


def stage(params: dict, inputs: dict, outputs: dict, wildcards: dict) -> None:
    """Snakemake edge: one attributor over one dataset (built or imported)."""
    runs = read_table(inputs["runs"], RUNS)
    steps = read_table(inputs["steps"], STEPS)
    labels = read_table(inputs["labels"], LABELS)
    name = wildcards["attributor"]
    run = make_attributor(name, params, inputs.get("tracer_model") or None, labels)
    size = params["attribution"].get("llm_sample")
    if size and name in llm_attributors(params["attribution"]):
        runs = sample_runs(runs, labels, size, params["attribution"]["seed"])
        log.info("%s: a sample of %d items (attribution.llm_sample)", name, runs.height)
    write_table(run(runs, steps), PREDICTIONS, outputs["predictions"])


def sample_runs(runs: pl.DataFrame, labels: pl.DataFrame, size: int, seed: int) -> pl.DataFrame:
    """A seeded sample of `size` runs for a paid or slow attributor: from the test split
    (every run when the test split is empty), each benchmark getting its share of the
    sample in proportion to its items (largest remainders), the runs drawn by hash."""
    split = runs.join(labels.select("run_id", "split"), on="run_id", how="left")
    pool = split.filter(pl.col("split") == "test")
    pool = pool if not pool.is_empty() else split
    if pool.height <= size:
        return runs.filter(pl.col("run_id").is_in(pool["run_id"].to_list()))
    counts = dict(pool.group_by("benchmark").len().sort("benchmark").rows())
    quota = {b: size * n // pool.height for b, n in counts.items()}
    left = sorted(counts, key=lambda b: (-(size * counts[b] % pool.height), b))
    for b in left[: size - sum(quota.values())]:
        quota[b] += 1
    order = pool.with_columns(
        pl.col("run_id").map_elements(lambda r: stable_id("sample", seed, r), pl.String).alias("k")
    ).sort("benchmark", "k")
    keep = [r for b, part in order.group_by("benchmark", maintain_order=True)
            for r in part["run_id"].head(quota[b[0]]).to_list()]  # fmt: skip
    return runs.filter(pl.col("run_id").is_in(keep))


def tracer_fit(params: dict, inputs: dict, outputs: dict, wildcards: dict) -> None:
    """Snakemake edge: fit tracer-lite on the built dataset's train split and save it, so
    every dataset (imports too) is predicted by the same model."""
    started = time.perf_counter()
    model = tracer.fit(
        read_table(inputs["runs"], RUNS),
        read_table(inputs["steps"], STEPS),
        read_table(inputs["labels"], LABELS),
        tracer.TracerConfig(**(params.get("tracer") or {})),
    )
    model.save(outputs["model"])
    log.info("%s: fitted in %.1f s", tracer.NAME, time.perf_counter() - started)
