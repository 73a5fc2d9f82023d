"""The attribution figures' tables: one SQL file each, run by DuckDB over the scored items.

`scored_items` (items.py) joins labels, predictions, runs and steps into one row per
(labelled trajectory, attributor) with per-item outcomes; every query here only
aggregates those rows, so all figures score exactly as `attribution_metrics.csv` does
(missing or unparsed predictions are wrong; exact step match). Each table holds a
`split` column with the real splits and an 'all' roll-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from whowhen.analysis.attributor_info import attributor_protocol
from whowhen.analysis.outputs import ATTRIBUTION_TABLES
from whowhen.analysis.scores import run_sql


def attributor_table(
    names: list[str], info: Mapping[str, Mapping[str, Any]] | None = None
) -> pl.DataFrame:
    """attributor, protocol, family, open_weight (NULL for baselines and unpriced models):
    what the cost-performance figure marks each point with."""
    rows = []
    for name in sorted(set(names)):
        meta = attributor_protocol(name, info)
        flag = str((info or {}).get(name, {}).get("open_weight", "unknown"))
        rows.append(
            {**meta, "attributor": name, "open_weight": {"true": True, "false": False}.get(flag)}
        )
    return pl.DataFrame(
        rows,
        schema={
            "attributor": pl.String,
            "protocol": pl.String,
            "family": pl.String,
            "open_weight": pl.Boolean,
        },
    )


def attribution_tables(
    items: pl.DataFrame,
    attributors: pl.DataFrame,
    max_k: int = 5,
    clip: int = 10,
) -> dict[str, pl.DataFrame]:
    """Every table in `ATTRIBUTION_TABLES`, keyed by name. `items`: scored_items();
    `attributors`: attributor_table(); `max_k`: the widest step tolerance; `clip`: the
    Δstep histogram's end bins."""
    tables = {"items": items, "attributors": attributors}
    params: dict[str, dict[str, Any]] = {
        "tolerance": {"max_k": max_k},
        "delta_step": {"clip": clip},
    }
    return {name: run_sql(name, tables, params.get(name)) for name in ATTRIBUTION_TABLES}
