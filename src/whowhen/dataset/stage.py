"""Dataset stage: merge every shard's flipped continuations into the labelled dataset, keep
the items whose making cannot be read off the data, and audit what is left for leaks."""

from __future__ import annotations

import logging
from typing import Any

import polars as pl

from whowhen.continuation import SHARD_TABLES
from whowhen.dataset.audit import leakage_audit, leaks
from whowhen.dataset.build import dataset_from_config
from whowhen.errors import WhowhenError
from whowhen.io import atomic_path
from whowhen.schema import (
    CONTINUATIONS,
    read_table,
    write_table,
)

log = logging.getLogger("whowhen")


def stage(params: dict[str, Any], inputs: Any, outputs: Any, wildcards: Any) -> None:
    """Snakemake edge: merge the shards into `results/dataset/`, write the leakage audit."""
    parts = [
        {name: read_table(inputs[name][i], spec) for name, spec in SHARD_TABLES.items()}
        for i in range(len(inputs["labels"]))
    ]
    opts = params["dataset"]  # filled from the config schema by validate_config
    data = dataset_from_config(parts, params["continuation"], opts)
    for name in ("runs", "steps", "labels"):
        write_table(data[name], SHARD_TABLES[name], outputs[name])
    # how each injection was continued (the funnel): kept beside the shards, not in the
    # dataset, since it records where each item was injected
    continuations = pl.concat([p["continuations"] for p in parts])
    write_table(continuations, CONTINUATIONS, outputs["continuations"])
    if data["labels"].is_empty():
        log.warning("warning: %s", nothing_to_label(continuations))
    audit(data, opts, outputs["audit"])


def nothing_to_label(continuations: pl.DataFrame) -> str:
    """The one line that says why the dataset is empty (a result, not a crash)."""
    if continuations.is_empty():
        why = "no injections were planned (no rollout succeeded, or none had a step to inject)"
    else:
        flipped = continuations.filter(pl.col("status") == "flipped").height
        why = (
            f"{continuations.height} injections, {flipped} flipped, none kept "
            "(recovered, invalid, failed controls or filtered out)"
        )
    return f"nothing to label: {why}; the dataset is empty, and the report says so"


def audit(data: dict[str, pl.DataFrame], opts: dict[str, Any], out: str) -> pl.DataFrame:
    """The leakage audit on the test split: written, logged, warned about (or fatal under
    `strict_audit`) where a probe beats random by more than `audit_margin` points."""
    table = leakage_audit(data["runs"], data["steps"], data["labels"], opts["audit_margin"] / 100)
    with atomic_path(out) as tmp:
        table.write_csv(tmp)
    for row in table.iter_rows(named=True):
        log.info(
            "audit %-34s %-8s n=%4d  %.3f [%.3f, %.3f]  random %.3f",
            row["probe"],
            row["subset"],
            row["n"],
            row["accuracy"],
            row["ci_low"],
            row["ci_high"],
            row["random"],
        )
    found = leaks(table)
    if found and opts["strict_audit"]:
        raise WhowhenError(
            f"leakage audit: {len(found)} probe(s) beat random by more than "
            f"{opts['audit_margin']} points: " + "; ".join(found),
            path=out,
            field="dataset.strict_audit",
        )
    for line in found:
        log.warning("warning: leakage audit: %s", line)
    return table
