"""Dataset stage: merge every shard's flipped continuations into the labelled dataset."""

from __future__ import annotations

from typing import Any

import polars as pl

from whowhen.continuation import SHARD_TABLES
from whowhen.dataset.build import dataset_from_config
from whowhen.schema import (
    CONTINUATIONS,
    read_table,
    write_table,
)


def stage(params: dict[str, Any], inputs: Any, outputs: Any, wildcards: Any) -> None:
    """Snakemake edge: merge the shards into `results/dataset/`."""
    parts = [
        {name: read_table(inputs[name][i], spec) for name, spec in SHARD_TABLES.items()}
        for i in range(len(inputs["labels"]))
    ]
    data = dataset_from_config(parts, params["continuation"])
    for name in ("runs", "steps", "labels"):
        write_table(data[name], SHARD_TABLES[name], outputs[name])
    write_table(
        pl.concat([p["continuations"] for p in parts]), CONTINUATIONS, outputs["continuations"]
    )
