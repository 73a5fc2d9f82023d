"""An attributor that needs no model, no fitted file and no environment (the baselines,
shortcut predictors and heuristics), run by name with a seed: `attribute()`.

Why apart from the factory: tests and the `perf/` scripts run these on tables in hand,
without a config, a model client or the replay machinery.
"""

from __future__ import annotations

import polars as pl

from whowhen.attribution.kinds import ATTRIBUTORS, AttributorContext
from whowhen.errors import WhowhenError


def attribute(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    attributor: str,
    seed: int,
    labels: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Predict (agent, step) for every run in `runs` with one registered attributor. The
    shortcut predictors are fitted on the train split of `labels` first (none: no
    predictions)."""
    kind = ATTRIBUTORS.get(attributor)
    if kind.needs_tracer_model or kind.needs_environment:
        raise WhowhenError(
            f"{attributor} needs "
            + ("its fitted model" if kind.needs_tracer_model else "the benchmarks' environments")
            + ": run it through the attribution stage",
            field="attribution.attributors",
        )
    ctx = AttributorContext({"attribution": {"seed": seed}}, labels=labels)
    return kind.make(ctx)(runs, steps)
