"""The leakage audit's probes: predictors of the gold step that do not understand the run
(a classifier that reads one step at a time, the sibling diff, every other column, and
where a step sits). Each returns run id -> predicted value."""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import polars as pl
from scipy import sparse
from scipy.optimize import minimize

from whowhen.dataset.positions import agent_step_table

N_FEATURES = 1 << 18
"""Hashed feature space of the one-step classifier (word 1-2-grams, character 3-5-grams)."""


# --- the one-step classifier --------------------------------------------------------------


def step_text(row: dict[str, Any]) -> str:
    """What the one-step classifier reads: the step's actor, text and tool call, no position."""
    return " ".join(str(row.get(k) or "") for k in ("actor", "content", "tool", "tool_args"))


def _hash(token: str) -> int:
    return zlib.crc32(token.encode()) % N_FEATURES


_FNV_PRIME = np.uint64(1099511628211)
_FNV_OFFSETS = {k: np.uint64((k * 14695981039346656037) % 2**64) for k in (3, 4, 5)}


def _char_grams(low: str) -> np.ndarray:
    """Hashed character 3-5-grams of `low` (its UTF-8 bytes), vectorised: a step's text
    has hundreds of them and hashing each in Python was most of the audit's time."""
    a = np.frombuffer(low.encode(), dtype=np.uint8).astype(np.uint64)
    parts = []
    for k in (3, 4, 5):
        n = len(a) - k + 1
        if n <= 0:
            continue
        h = np.full(n, _FNV_OFFSETS[k])  # FNV-1a, its offset basis varied by width
        for j in range(k):
            h = (h ^ a[j : j + n]) * _FNV_PRIME
        parts.append(h)
    return np.concatenate(parts) % np.uint64(N_FEATURES) if parts else np.zeros(0, np.uint64)


def features(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Hashed word unigrams and bigrams and character 3-5-grams: (feature ids, sorted and
    distinct; log-scaled counts)."""
    low = text.lower()
    words = low.split()
    grams = [f"w:{w}" for w in words] + [f"b:{a} {b}" for a, b in itertools.pairwise(words)]
    word_ids = np.fromiter((_hash(g) for g in grams), dtype=np.uint64, count=len(grams))
    ids, counts = np.unique(np.concatenate([word_ids, _char_grams(low)]), return_counts=True)
    return ids.astype(np.int32), np.log1p(counts.astype(np.float64))


def hashed_matrix(texts: Iterable[str]) -> sparse.csr_matrix:
    """Rows of hashed features, L2-normalised; built from per-row numpy arrays (a Python
    list per entry would take ten times the memory at paper scale)."""
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    indptr = [0]
    for text in texts:
        ids, values = features(text)
        cols.append(ids)
        vals.append(values)
        indptr.append(indptr[-1] + len(ids))
    m = sparse.csr_matrix(
        (
            np.concatenate(vals) if vals else np.zeros(0),
            np.concatenate(cols) if cols else np.zeros(0, dtype=np.int32),
            np.asarray(indptr, dtype=np.int64),
        ),
        shape=(len(indptr) - 1, N_FEATURES),
    )
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    return sparse.diags(1.0 / np.maximum(norms, 1e-12)) @ m


def fit_logistic(x: sparse.csr_matrix, y: np.ndarray, l2: float = 1.0) -> np.ndarray:
    """L2-regularised logistic regression by L-BFGS (deterministic); weights with bias last.
    Positives are up-weighted to balance the classes: one gold step per many others.

    Only the hashed features that occur are fitted (the others have a zero gradient
    throughout and stay at zero, and L-BFGS's own work grows with the weights it holds),
    and the two products per iteration run on single-precision copies of the matrix and
    its transpose, both row-major: they are most of the fit's time."""
    pos = max(1.0, float(y.sum()))
    w_pos = (len(y) - pos) / pos if pos < len(y) else 1.0
    sample = np.where(y > 0, w_pos, 1.0)
    used = np.unique(x.indices)
    xs = x[:, used].astype(np.float32)
    xt = xs.T.tocsr()

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = (xs @ w[:-1].astype(np.float32)).astype(np.float64) + w[-1]
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        ll = -(sample * (y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))).sum()
        g = sample * (p - y)
        back = (xt @ g.astype(np.float32)).astype(np.float64)
        grad = np.concatenate([back + l2 * w[:-1], [g.sum()]])
        return ll + 0.5 * l2 * float(w[:-1] @ w[:-1]), grad

    res = minimize(loss, np.zeros(len(used) + 1), jac=True, method="L-BFGS-B",
                   options={"maxiter": 200})  # fmt: skip
    weights = np.zeros(x.shape[1] + 1)
    weights[used] = res.x[:-1]
    weights[-1] = res.x[-1]
    return weights


def one_step_classifier(
    train_steps: pl.DataFrame, train_gold: pl.DataFrame
) -> Callable[[pl.DataFrame], dict[str, int]]:
    """Fit on train's agent steps (gold = 1, others = 0); predict, per run of the given
    agent steps, the step the classifier scores highest (first on ties)."""
    gold = set(zip(train_gold["run_id"], train_gold["decisive_step"], strict=True))
    rows = train_steps.to_dicts()
    y = np.array([1.0 if (r["run_id"], r["step"]) in gold else 0.0 for r in rows])
    weights = fit_logistic(hashed_matrix(step_text(r) for r in rows), y) if rows else None

    def predict(steps: pl.DataFrame) -> dict[str, int]:
        if weights is None or steps.height == 0:
            return {}
        rows = steps.to_dicts()
        scores = hashed_matrix(step_text(r) for r in rows) @ weights[:-1]
        best: dict[str, tuple[float, int]] = {}
        for r, s in zip(rows, scores, strict=True):
            if r["run_id"] not in best or s > best[r["run_id"]][0] + 1e-12:
                best[r["run_id"]] = (float(s), r["step"])
        return {k: v[1] for k, v in best.items()}

    return predict


def step_kind_prior(
    train_steps: pl.DataFrame, train_gold: pl.DataFrame
) -> Callable[[pl.DataFrame], dict[str, int]]:
    """Reads no text at all: per kind of step (actor, tool or message), the share of train
    steps of that kind that are gold; predicts a run's step of the highest-share kind
    (first on ties). Where it scores like the one-step classifier, the classifier's edge
    is which kinds of step errors are injected into, not their wording."""
    gold = set(zip(train_gold["run_id"], train_gold["decisive_step"], strict=True))
    seen: dict[tuple[str, str], list[int]] = {}
    for r in train_steps.iter_rows(named=True):
        kind = (r["actor"], r["tool"] or "message")
        seen.setdefault(kind, [0, 0])
        seen[kind][0] += (r["run_id"], r["step"]) in gold
        seen[kind][1] += 1
    rate = {k: g / n for k, (g, n) in seen.items()}

    def predict(steps: pl.DataFrame) -> dict[str, int]:
        best: dict[str, tuple[float, int]] = {}
        for r in steps.iter_rows(named=True):
            s = rate.get((r["actor"], r["tool"] or "message"), 0.0)
            if r["run_id"] not in best or s > best[r["run_id"]][0]:
                best[r["run_id"]] = (s, r["step"])
        return {k: v[1] for k, v in best.items()}

    return predict


# --- the sibling diff and the column search -------------------------------------------------


def sibling_diff(labels: pl.DataFrame, runs: pl.DataFrame, steps: pl.DataFrame) -> dict[str, int]:
    """For each item with a sibling (another item of the same split injected into the same
    parent run), the first agent step where it differs from a sibling's step there."""
    parents = labels.select("run_id", "split").join(
        runs.select("run_id", "parent_run_id"), on="run_id"
    )
    cand = agent_step_table(steps)
    sig = {
        (r["run_id"], r["step"]): (r["actor"], r["content"], r["tool"], r["tool_args"])
        for r in cand.iter_rows(named=True)
    }
    by_run: dict[str, list[int]] = {}
    for r in cand.select("run_id", "step").iter_rows():
        by_run.setdefault(r[0], []).append(r[1])
    out: dict[str, int] = {}
    for _, group in parents.group_by("split", "parent_run_id", maintain_order=True):
        ids = group["run_id"].to_list()
        for rid in ids:
            others = [o for o in ids if o != rid]
            if others:
                out[rid] = _own_difference(rid, others, by_run.get(rid, []), sig)
    return {k: v for k, v in out.items() if v is not None}


def _own_difference(
    rid: str, others: list[str], own_steps: list[int], sig: dict[tuple[str, int], Any]
) -> int | None:
    """The first step where `rid` differs from every sibling (its own change), else the
    first where it differs from any."""
    first_any = None
    for step in own_steps:
        mine = sig[(rid, step)]
        differs = [sig.get((o, step)) != mine for o in others]
        if all(differs):
            return step
        if first_any is None and any(differs):
            first_any = step
    return first_any


def column_predictors(
    runs: pl.DataFrame, steps: pl.DataFrame
) -> dict[str, Callable[[str], int | str | None]]:
    """Every other column as a predictor of the label: each run-level column read as the
    gold step (numeric) or gold agent (text), and each numeric step-level column's arg-max
    and arg-min over the run's agent steps (a unique extreme only)."""
    out: dict[str, Callable[[str], int | str | None]] = {}
    table = {r["run_id"]: r for r in runs.iter_rows(named=True)}
    for col in runs.columns:
        if col == "run_id":
            continue
        out[f"runs.{col}"] = lambda rid, col=col: (table.get(rid) or {}).get(col)
    cand = agent_step_table(steps)
    numeric = [c for c, t in cand.schema.items() if t.is_numeric() and c not in ("step",)]
    for col in numeric:
        if col in ("index", "n_agent"):
            continue
        for name in ("max", "min"):
            ext = (
                cand.filter(pl.col(col).is_not_null())
                .group_by("run_id")
                .agg(pl.col("step").filter(pl.col(col) == getattr(pl.col(col), name)()).alias("at"))
                .filter(pl.col("at").list.len() == 1)
            )
            found = {r[0]: r[1][0] for r in ext.iter_rows()}
            out[f"steps.{col}:{name}"] = lambda rid, found=found: found.get(rid)
    return out


def position_probes(
    train: pl.DataFrame, runs: pl.DataFrame
) -> dict[str, Callable[[pl.DataFrame], dict[str, int]]]:
    """Predictors that see only where a step sits: first, last, and the tenth of the run
    that holds most of the system's train gold steps."""
    system = dict(runs.select("run_id", "system").iter_rows())
    tenths: dict[str, int] = {}
    if train.height:
        counts = (
            train.join(runs.select("run_id", "system"), on="run_id")
            .with_columns((pl.col("rel_pos") * 10).floor().cast(pl.Int64).alias("tenth"))
            .group_by("system", "tenth")
            .len()
            .sort("system", "len", "tenth", descending=[False, True, False])
        )
        for s, t, _ in counts.iter_rows():
            tenths.setdefault(s, t)
    overall = train["rel_pos"].median() if train.height else 0.5

    def at(frac_of: Callable[[str], float]) -> Callable[[pl.DataFrame], dict[str, int]]:
        def predict(steps: pl.DataFrame) -> dict[str, int]:
            out = {}
            for (rid,), g in steps.group_by("run_id", maintain_order=True):
                i = min(g.height - 1, int(frac_of(rid) * g.height))
                out[rid] = g["step"][i]
            return out

        return predict

    return {
        "first_agent_step": at(lambda rid: 0.0),
        "last_agent_step": at(lambda rid: 1.0),
        "position_tenth_prior": at(
            lambda rid: (
                (tenths[system[rid]] + 0.5) / 10
                if system.get(rid) in tenths
                else float(overall or 0.5)
            )
        ),
    }
