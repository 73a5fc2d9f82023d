"""Kinds of agent step, and the selection that keeps gold steps from favouring a kind.

A one-step classifier finds the gold step without understanding the run when errors are
injected into some kinds of step more than others (the aggregate query, never the row
count). The benchmarks make every kind of step a possible error site; this selection trims
what is left: per (benchmark, system, split), no kind holds a larger share of the gold steps
than `max_ratio` times its share of the agent steps, the same way `select.spread_positions`
keeps gold positions from favouring a part of the run. A kind is the step's actor, tool,
and its first words with numbers and names (capitalised words after the first) masked: a
phrasing template before its fillers, coarse enough that a kind recurs across runs.
"""

from __future__ import annotations

import math
import re
from typing import Any

import polars as pl

from whowhen.dataset.positions import agent_step_table
from whowhen.schema import stable_id

_NUMBER = re.compile(r"\d+")
_NAME = re.compile(r"\b[A-Z][a-z]+\b")


def step_kind(actor: str, tool: str | None, content: str | None, words: int = 3) -> str:
    """`actor/tool/first words` with digits as `#` and capitalised words after the first
    as `C` (names are fillers; the opening word is the template's)."""
    first, *rest = _NUMBER.sub("#", content or "").split()[:words] or [""]
    return f"{actor}/{tool or 'message'}/" + " ".join([first, *(_NAME.sub("C", w) for w in rest)])


def kind_column(steps: pl.DataFrame) -> pl.DataFrame:
    """The agent steps of `steps` with their `kind`."""
    cand = agent_step_table(steps)
    kinds = [step_kind(a, t, c) for a, t, c in cand.select("actor", "tool", "content").iter_rows()]
    return cand.with_columns(pl.Series("kind", kinds, dtype=pl.String))


def match_kinds(
    labels: pl.DataFrame,
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    max_ratio: float | None,
    seed: int,
) -> pl.DataFrame:
    """The largest set of items, per (benchmark, system, split), in which each kind's share
    of the gold steps is at most `max_ratio` times its share of the items' agent steps
    (one item per kind always allowed, so small splits are thinned, never emptied). Items
    are dropped in a seeded order of their run ids; None keeps every item."""
    if max_ratio is None or labels.height == 0:
        return labels
    kinds = kind_column(steps.filter(pl.col("run_id").is_in(labels["run_id"].to_list())))
    gold = labels.select("run_id", "split", pl.col("decisive_step").alias("step")).join(
        kinds.select("run_id", "step", "kind"), on=["run_id", "step"], how="left"
    )
    pair = runs.select("run_id", "benchmark", "system")
    gold = gold.join(pair, on="run_id", how="left")
    share = kinds.join(pair, on="run_id", how="left")
    keep: list[str] = []
    for _, group in gold.group_by("benchmark", "system", "split", maintain_order=True):
        ids = group["run_id"].to_list()
        rows = share.filter(pl.col("run_id").is_in(ids))
        shares = (
            dict(rows.group_by("kind").agg(pl.len() / rows.height).iter_rows())
            if rows.height
            else {}
        )
        keep += _match_group(_seeded(group, seed), shares, max_ratio)
    return labels.filter(pl.col("run_id").is_in(keep))


def _seeded(group: pl.DataFrame, seed: int) -> list[dict[str, Any]]:
    keys = [stable_id("kind", seed, rid) for rid in group["run_id"]]
    return group.with_columns(pl.Series("_key", keys)).sort("_key").to_dicts()


def _allowed(share: float, n: int, max_ratio: float) -> int:
    return max(1, math.floor(max_ratio * share * n + 1e-9))


def _match_group(items: list[dict[str, Any]], shares: dict[str, float], ratio: float) -> list[str]:
    """Item run ids to keep: the largest n whose per-kind allowance holds n items."""
    by_kind: dict[str | None, list[str]] = {}
    for it in items:
        by_kind.setdefault(it["kind"], []).append(it["run_id"])
    n = len(items)
    while (
        n > 0
        and sum(
            min(len(v), _allowed(shares.get(k or "", 0.0), n, ratio)) for k, v in by_kind.items()
        )
        < n
    ):
        n -= 1
    keep: list[str] = []
    for k, ids in by_kind.items():
        keep += ids[: _allowed(shares.get(k or "", 0.0), n, ratio)]
    return keep
