"""Runs stopped by an infrastructure failure: set apart, counted, and bounded per shard.

Why: an agent failure is a label, an outage is not. A tool that did not start, a worker
that died or a provider that did not answer ends a run `infra_error: <reason>`
(`whowhen.errors.InfraError`); such runs leave the stage that met them in a table of their
own, so no later stage (replay, taxonomy, injection, the dataset, feedback) can read them
as the agents' doing, and a shard where more than `max_infra_share` of the runs met one
fails with the cause instead of producing a benchmark of outages.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable

import polars as pl

from whowhen.errors import INFRA_PREFIX, InfraError, is_infra

log = logging.getLogger(__name__)


def infra_mask() -> pl.Expr:
    """True for the rows whose `end_reason` records an infrastructure failure."""
    return pl.col("end_reason").fill_null("").str.starts_with(INFRA_PREFIX)


def split_infra(runs: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the runs the agents ended, the runs an infrastructure failure stopped)."""
    mask = infra_mask()
    return runs.filter(~mask), runs.filter(mask)


def check_infra_share(reasons: Iterable[str | None], total: int, limit: float, where: str) -> int:
    """Log how many of `total` runs met an infrastructure failure; raise `InfraError` (one
    line: the count, the limit and the most common cause) when their share is over
    `limit`. Returns the count."""
    causes = Counter(str(r).removeprefix(f"{INFRA_PREFIX}: ") for r in reasons if is_infra(r))
    n = sum(causes.values())
    if n:
        log.warning("%s: %d of %d runs stopped by an infrastructure failure", where, n, total)
        for cause, count in causes.most_common(3):
            log.warning("  %d x %s", count, cause[:300])
    if total and n / total > limit:
        cause, count = causes.most_common(1)[0]
        raise InfraError(
            f"{where}: {n} of {total} runs stopped by an infrastructure failure, more than "
            f"rollouts.max_infra_share={limit:g} allows; the cause ({count} of them): {cause[:300]}"
        )
    return n
