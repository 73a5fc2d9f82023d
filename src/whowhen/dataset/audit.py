"""The leakage audit: can the gold step be found without understanding the run?

Every build is checked on its test split by probes that must *not* work on a benchmark that
measures attribution: (a) position-only predictors, (b) a classifier that sees one agent
step at a time (hashed word and character n-grams, logistic regression fitted on train),
overall and on items whose gold is not the last agent step, beside a prior over kinds of
step (actor and tool) that reads no text, (c) the sibling diff (the
first step where an item differs from another item injected into the same parent run), and
(d) a search of every other column for one that equals the label. Each is scored beside
the uniform random baseline with 95% intervals; a probe that beats random by more than the
configured margin is a leak, warned about (or fatal under `strict_audit`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import polars as pl

from whowhen.dataset.positions import agent_step_table, gold_positions
from whowhen.dataset.probes import (
    column_predictors,
    one_step_classifier,
    position_probes,
    sibling_diff,
    step_kind_prior,
)
from whowhen.schema import stable_id

Z95 = 1.959963984540054
MAX_TRAIN = 3000
"""Train items the learned probes fit on at most: four times the default build's train
split, and the hashed n-gram matrix of 3,000 runs' agent steps stays under about 1 GB."""

AUDIT_COLUMNS = (
    "probe",
    "family",
    "subset",
    "n",
    "covered",
    "correct",
    "accuracy",
    "ci_low",
    "ci_high",
    "random",
    "random_low",
    "random_high",
    "margin",
    "leak",
)


# --- scoring ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    n: int
    covered: int
    correct: int
    random: float
    random_var: float


def wilson(k: int, n: int) -> tuple[float, float]:
    """95% Wilson interval of k successes in n."""
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    d = 1 + Z95**2 / n
    c = (p + Z95**2 / (2 * n)) / d
    h = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def score(
    items: pl.DataFrame,
    predicted: dict[str, Any],
    target: str = "decisive_step",
    choices: str = "n_agent",
) -> Score:
    """Exact-match accuracy of `predicted` (run id -> value) on `items`, and the uniform
    random baseline's expectation over the same items (1 / `choices` each: agent steps for
    the step, agents for the agent)."""
    gold = items[target].to_list()
    rids = items["run_id"].to_list()
    correct = sum(
        1 for r, g in zip(rids, gold, strict=True) if r in predicted and _same(predicted[r], g)
    )
    p = [1.0 / max(1, n) for n in items[choices].fill_null(1).to_list()]
    return Score(
        len(rids),
        sum(1 for r in rids if predicted.get(r) is not None),
        correct,
        sum(p) / max(1, len(p)),
        sum(q * (1 - q) for q in p),
    )


def _same(pred: Any, gold: Any) -> bool:
    if pred is None:
        return False
    if isinstance(gold, int) and not isinstance(pred, bool):
        try:
            return float(pred) == float(gold)
        except (TypeError, ValueError):
            return False
    return str(pred) == str(gold)


def audit_row(probe: str, family: str, subset: str, s: Score, margin: float) -> dict[str, Any]:
    """One audit table row: the probe's accuracy and interval beside random's."""
    acc = s.correct / s.n if s.n else 0.0
    lo, hi = wilson(s.correct, s.n)
    half = Z95 * math.sqrt(s.random_var) / s.n if s.n else 0.0
    return {
        "probe": probe,
        "family": family,
        "subset": subset,
        "n": s.n,
        "covered": s.covered,
        "correct": s.correct,
        "accuracy": round(acc, 6),
        "ci_low": round(lo, 6),
        "ci_high": round(hi, 6),
        "random": round(s.random, 6),
        "random_low": round(max(0.0, s.random - half), 6),
        "random_high": round(min(1.0, s.random + half), 6),
        "margin": margin,
        "leak": bool(s.n and acc - s.random > margin),
    }


# --- the audit ----------------------------------------------------------------------------


def leakage_audit(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    labels: pl.DataFrame,
    margin: float = 0.05,
    split: str = "test",
    max_train: int = MAX_TRAIN,
) -> pl.DataFrame:
    """Every probe on the `split` items (fitted on train where it learns), beside random.
    The one-step classifier and the kind prior fit on at most `max_train` train items (a
    seeded sample), so the audit of a paper-scale build stays within a few GB."""
    items = gold_positions(labels, steps)
    n_agents = (
        agent_step_table(steps).group_by("run_id").agg(pl.col("actor").n_unique().alias("n_act"))
    )
    items = items.join(n_agents, on="run_id", how="left")
    train = items.filter(pl.col("split") == "train")
    evals = items.filter(pl.col("split") == split)
    cand = agent_step_table(steps)
    eval_steps = cand.filter(pl.col("run_id").is_in(evals["run_id"].to_list()))
    not_last = evals.filter(~pl.col("is_last").fill_null(False))
    rows: list[dict[str, Any]] = []

    for name, predict in position_probes(train, runs).items():
        rows.append(audit_row(name, "position", "all", score(evals, predict(eval_steps)), margin))
    fit = sample_items(train, max_train)
    fit_steps = cand.filter(pl.col("run_id").is_in(fit["run_id"].to_list()))
    clf = one_step_classifier(fit_steps, fit)
    pred = clf(eval_steps)
    rows.append(audit_row("one_step_classifier", "content", "all", score(evals, pred), margin))
    rows.append(
        audit_row("one_step_classifier", "content", "not_last", score(not_last, pred), margin)
    )
    kinds = step_kind_prior(fit_steps, fit)
    pred = kinds(eval_steps)
    rows.append(audit_row("step_kind_prior", "content", "all", score(evals, pred), margin))
    rows.append(audit_row("step_kind_prior", "content", "not_last", score(not_last, pred), margin))
    sib = sibling_diff(labels, runs, steps)
    rows.append(audit_row("sibling_diff", "siblings", "all", score(evals, sib), margin))
    rows += _column_rows(runs, steps, evals, margin)
    return pl.DataFrame(rows, schema_overrides={"margin": pl.Float64}).select(AUDIT_COLUMNS)


def sample_items(train: pl.DataFrame, n: int) -> pl.DataFrame:
    """At most `n` train items, chosen by a hash of their run ids (the same every build)."""
    if train.height <= n:
        return train
    keys = [stable_id("audit", rid) for rid in train["run_id"]]
    return train.with_columns(pl.Series("_key", keys)).sort("_key").head(n).drop("_key")


def _column_rows(
    runs: pl.DataFrame, steps: pl.DataFrame, evals: pl.DataFrame, margin: float
) -> list[dict[str, Any]]:
    """The best column at reproducing each part of the label (step, agent)."""
    rows = []
    preds = column_predictors(runs, steps)
    ids = evals["run_id"].to_list()
    for target, choices in (("decisive_step", "n_agent"), ("decisive_agent", "n_act")):
        best: tuple[int, str, Score] | None = None
        for col, f in sorted(preds.items()):
            s = score(evals, {r: f(r) for r in ids}, target, choices)
            if best is None or s.correct > best[0]:
                best = (s.correct, col, s)
        if best is not None:
            label = target.removeprefix("decisive_")
            rows.append(audit_row(f"column[{label}]={best[1]}", "column", "all", best[2], margin))
    return rows


def leaks(audit: pl.DataFrame) -> list[str]:
    """One line per probe that beats random by more than its margin."""
    return [
        f"{r['probe']} ({r['subset']}): {r['accuracy']:.3f} vs random {r['random']:.3f} "
        f"(n = {r['n']})"
        for r in audit.filter(pl.col("leak")).iter_rows(named=True)
    ]
