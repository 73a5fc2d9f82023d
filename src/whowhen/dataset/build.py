"""The labelled dataset: flipped continuations become items, split by task into train / dev /
test, optionally balanced so no agent dominates a system's gold labels.
"""

from __future__ import annotations

import logging
from typing import Any

import polars as pl

from whowhen.dataset.kinds import match_kinds
from whowhen.dataset.predictable import drop_predictable
from whowhen.dataset.select import cap_per_parent, spread_positions
from whowhen.errors import WhowhenError
from whowhen.schema import (
    LABELS,
    stable_id,
)

log = logging.getLogger("whowhen")


def assign_splits(
    labels: pl.DataFrame,
    runs: pl.DataFrame,
    seed: int,
    train_fraction: float,
    dev_fraction: float = 0.0,
) -> pl.DataFrame:
    """Train / dev / test by *task*, not by run, so no task leaks between splits; the
    fractions hold within every benchmark (stratified), so each has a test split."""
    if train_fraction + dev_fraction >= 1:
        raise WhowhenError(
            "train_fraction + dev_fraction must leave a test split", field="continuation"
        )
    task_of = runs.select("run_id", "task_id", "benchmark")
    # within each benchmark, tasks in a seeded order; the first train_fraction of them
    # train, the next dev_fraction dev, the rest test: every benchmark gets every split
    tasks = task_of.select("benchmark", "task_id").unique()
    tasks = tasks.with_columns(
        pl.struct("benchmark", "task_id")
        .map_elements(
            lambda r: stable_id("split", seed, r["benchmark"], r["task_id"]), return_dtype=pl.String
        )
        .alias("key")
    ).sort("benchmark", "key")
    rank = tasks.with_columns(
        ((pl.int_range(pl.len()).over("benchmark") + 0.5) / pl.len().over("benchmark")).alias("u")
    ).with_columns(
        pl.when(pl.col("u") < train_fraction)
        .then(pl.lit("train"))
        .when(pl.col("u") < train_fraction + dev_fraction)
        .then(pl.lit("dev"))
        .otherwise(pl.lit("test"))
        .alias("split")
    )
    return (
        labels.drop("split")
        .join(task_of, on="run_id", how="left")
        .join(rank.select("benchmark", "task_id", "split"), on=["benchmark", "task_id"], how="left")
        .select(LABELS.schema.names)
    )


def balance_agents(labels: pl.DataFrame, runs: pl.DataFrame, cap: float = 0.5) -> pl.DataFrame:
    """Drop labelled items of a multi-agent system's most blamed agent until no agent is
    the gold agent of more than `cap` of the system's items, so "always name the agent
    who is usually wrong" cannot score above `cap` (a pair whose items all blame one agent
    keeps none). Which items go is decided by their run id (deterministic), per
    (benchmark, system)."""
    pairs = labels.join(runs.select("run_id", "benchmark", "system", "topology"), on="run_id")
    keep: list[str] = []
    for (_, _, topology), group in pairs.group_by(
        "benchmark", "system", "topology", maintain_order=True
    ):
        counts = group["decisive_agent"].value_counts(sort=True)
        if topology != "multi":
            keep += group["run_id"].to_list()
            continue
        top, n_top = counts.row(0)
        others = group.height - n_top
        allowed = int(others * cap / (1 - cap)) if cap < 1 else n_top
        top_ids = group.filter(pl.col("decisive_agent") == top).sort("run_id")["run_id"]
        keep += group.filter(pl.col("decisive_agent") != top)["run_id"].to_list()
        keep += top_ids.head(max(allowed, 0)).to_list()
    return labels.filter(pl.col("run_id").is_in(keep))


def dataset_from_config(
    parts: list[dict[str, pl.DataFrame]],
    cfg: dict[str, Any],
    dataset: dict[str, Any] | None = None,
) -> dict[str, pl.DataFrame]:
    """`build_dataset` with the config's `continuation` and `dataset` sections (as the
    dataset stage), each filled from the config schema's defaults (`whowhen.defaults.filled`)
    by the caller; a missing `dataset` section keeps every item (no selection)."""
    data = build_dataset(
        parts,
        cfg["split_seed"],
        cfg["train_fraction"],
        cfg["dev_fraction"],
        cfg["balance_agents"],
        cfg["single_error"],
    )
    if dataset is None:
        return data
    return select_items(data, dataset, cfg["split_seed"])


def select_items(
    data: dict[str, pl.DataFrame], opts: dict[str, Any], seed: int
) -> dict[str, pl.DataFrame]:
    """Keep at most `max_per_parent[split]` items per parent run, keep the gold steps'
    kinds in proportion to the steps' kinds, drop the gold steps a one-step classifier
    finds beyond chance (`predictable`), then spread the gold steps' positions (per
    split); runs and steps follow the labels."""
    _log_count("flipped, after the single-error filter and agent balance", data["labels"])
    labels = cap_per_parent(
        data["labels"], data["runs"], data["steps"], opts["max_per_parent"], seed
    )
    _log_count("after max_per_parent", labels)
    labels = match_kinds(labels, data["runs"], data["steps"], opts["max_kind_ratio"], seed)
    _log_count("after max_kind_ratio", labels)
    if opts["predictable_folds"]:
        labels = drop_predictable(
            labels,
            data["runs"],
            data["steps"],
            opts["predictable_folds"],
            seed,
            opts["predictable_rounds"],
        )
        _log_count("after the predictable-step filter", labels)
    labels = spread_positions(
        labels, data["steps"], opts["max_tenth_share"], opts["max_last_share"], seed
    )
    _log_count("after the position spread (the dataset)", labels)
    keep = labels["run_id"].to_list()
    return {
        "runs": data["runs"].filter(pl.col("run_id").is_in(keep)),
        "steps": data["steps"].filter(pl.col("run_id").is_in(keep)),
        "labels": labels,
    }


def _log_count(what: str, labels: pl.DataFrame) -> None:
    """One line of the selection funnel in the stage's log: where the items go."""
    splits = dict(labels.group_by("split").len().sort("split").rows())
    log.info("dataset: %d items %s %s", labels.height, what, splits)


def build_dataset(
    parts: list[dict[str, pl.DataFrame]],
    seed: int,
    train_fraction: float,
    dev_fraction: float = 0.0,
    balance: bool = False,
    single_error: bool = False,
) -> dict[str, pl.DataFrame]:
    """Merge per-(benchmark, system) continuations into the labelled dataset: the flipped
    runs, their steps, and their labels with splits (optionally agent-balanced).

    `single_error` keeps only runs whose parent held no earlier (recovered) natural slip:
    there the injected step is the one and earliest decisive error, so the label is exact
    under the earliest-decisive-step reading too (the replay oracle agrees on every one)."""
    labels = pl.concat([p["labels"] for p in parts])
    if single_error:
        flagged = pl.concat([p["continuations"] for p in parts]).filter(
            pl.col("earlier_error_step").is_not_null()
        )["run_id"]
        labels = labels.filter(~pl.col("run_id").is_in(flagged.to_list()))
    all_runs = pl.concat([p["runs"] for p in parts])
    if balance:
        labels = balance_agents(labels, all_runs)
    keep = labels["run_id"].to_list()
    runs = all_runs.filter(pl.col("run_id").is_in(keep))
    steps = pl.concat([p["steps"] for p in parts]).filter(pl.col("run_id").is_in(keep))
    return {
        "runs": runs,
        "steps": steps,
        "labels": assign_splits(labels, runs, seed, train_fraction, dev_fraction),
    }
