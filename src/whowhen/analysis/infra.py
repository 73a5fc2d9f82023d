"""The report's count of runs an infrastructure failure stopped, per stage and shard.

Why a section of its own: such runs are kept out of every table that scores agents or
attributors, and a reader must still see how many there were and why; a benchmark whose
tools did not start is otherwise indistinguishable from one whose agents failed.
"""

from __future__ import annotations

import html

import polars as pl

from whowhen.analysis.html import table_html
from whowhen.errors import INFRA_PREFIX
from whowhen.runtime.infra import infra_mask

COLUMNS = {"stage": pl.String, "benchmark": pl.String, "system": pl.String,
           "runs": pl.Int64, "cause": pl.String}  # fmt: skip


def _count(stage: str, frame: pl.DataFrame) -> pl.DataFrame:
    """One row per (benchmark, system): how many rows of `frame` met an infrastructure
    failure, and the most common cause (ties broken by text, so the table is stable)."""
    hit = frame.filter(infra_mask())
    if hit.is_empty():
        return pl.DataFrame(schema=COLUMNS)
    cause = pl.col("end_reason").str.strip_prefix(f"{INFRA_PREFIX}: ")
    by_cause = hit.group_by("benchmark", "system", cause.alias("cause")).len()
    top = (
        by_cause.sort("len", "cause", descending=[True, False])
        .group_by("benchmark", "system", maintain_order=True)
        .first()
    )
    runs = hit.group_by("benchmark", "system").len("runs")
    out = runs.join(top.select("benchmark", "system", "cause"), on=["benchmark", "system"])
    return out.with_columns(pl.lit(stage).alias("stage")).select(list(COLUMNS)).cast(COLUMNS)


def infra_table(
    rollouts: pl.DataFrame, continuations: pl.DataFrame, feedback: pl.DataFrame
) -> pl.DataFrame:
    """Runs stopped by an infrastructure failure: the rollouts set apart (`infra.parquet`),
    the warm starts (`continuations`, whose `reason` holds the end reason) and the
    feedback reruns (`attempts`)."""
    parts = [
        _count("rollouts", rollouts),
        _count("continuation", continuations.rename({"reason": "end_reason"})),
        _count("feedback", feedback),
    ]
    return pl.concat(parts).sort("stage", "benchmark", "system")


def infra_html(table: pl.DataFrame) -> list[str]:
    """The report's section: a line when there were none, else the table."""
    head = "<h2>Infrastructure failures</h2>"
    if table.is_empty():
        return [head, "<p class='note'>No run was stopped by an infrastructure failure.</p>"]
    note = (
        f"{int(table['runs'].sum())} runs were stopped by an infrastructure failure (a tool "
        "or sandbox that did not start, a worker that died, a provider or gateway that did "
        "not answer). They are not agent failures: they are left out of replay, taxonomy, "
        "injection, the dataset, feedback and every score above."
    )
    return [head, f"<p class='note'>{html.escape(note)}</p>", table_html(table)]
