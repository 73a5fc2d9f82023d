"""tracer-lite: a trained attributor that runs on a CPU in seconds.

A linear score per agent step over `tracer_features` (dense signals plus hashed tokens),
trained on the *train* split only with the gold step as the positive. The objective is a
logistic regression over each run's candidates (`listwise`: a softmax across the run's
agent steps, i.e. multinomial logistic regression whose classes are the steps; the
`pointwise` variant is a plain binary logistic regression on every step, positives
up-weighted). The prediction is the argmax step, and the agent whose steps together hold
the most probability (`likeliest_agent`). Runs may carry weights, so a few hundred real
labels can count as much as a thousand built ones.

Pure numpy: the design matrix is kept as (row, column, value) triplets and products are
`np.bincount`s, so no sparse-matrix library is needed. Full-batch Adam for a fixed number
of iterations from a seeded initialisation: the same data give the same model, byte for
byte. The model is a small dataclass that round-trips through JSON.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from whowhen.attribution.baselines import prediction_row
from whowhen.attribution.kinds import ATTRIBUTORS, Attributor, AttributorContext
from whowhen.attribution.tracer_features import DENSE, FEATURE_SETS, Features, build
from whowhen.defaults import filled
from whowhen.errors import WhowhenError
from whowhen.io import atomic_path
from whowhen.schema import PREDICTIONS, read_table, to_arrow

log = logging.getLogger(__name__)

NAME = "tracer_lite"


@dataclass(frozen=True)
class TracerConfig:
    """The fit's settings, config section `attribution.tracer`, whose schema holds the
    defaults: build one with `TracerConfig.of(section, **overrides)`."""

    features: str  # transfer (dense, template-independent) | full (+ tokens)
    dim: int  # hashed-token buckets (full features only)
    objective: str  # listwise (softmax over a run's steps) | pointwise
    iterations: int
    learning_rate: float
    l2: float
    seed: int

    @classmethod
    def of(cls, section: Mapping[str, Any] | None = None, **overrides: Any) -> TracerConfig:
        """`section` (a partial `attribution.tracer`) with `overrides` on top, every key
        left out taken from the config schema's defaults."""
        values = filled("attribution.tracer", {**(section or {}), **overrides})
        return cls(**{name: values[name] for name in cls.__dataclass_fields__})


@dataclass
class TracerModel:
    """Weights over DENSE + `dim` hashed buckets, the config and what it was trained on."""

    config: TracerConfig
    weights: list[float]
    bias: float = 0.0
    dense: list[str] = field(default_factory=lambda: list(DENSE))
    n_train_runs: int = 0
    name: str = NAME
    trained_on: dict[str, int] = field(default_factory=dict)  # dataset -> labelled runs

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TracerModel:
        data = json.loads(text)
        data["config"] = TracerConfig(**data["config"])
        model = cls(**data)
        if model.dense != list(DENSE) or len(model.weights) != len(DENSE) + hashed_dim(
            model.config
        ):
            raise WhowhenError("tracer model was saved with other features; refit it")
        return model

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        with atomic_path(path) as tmp:
            Path(tmp).write_text(self.to_json())
        return path

    @classmethod
    def load(cls, path: str | Path) -> TracerModel:
        return cls.from_json(Path(path).read_text())


def hashed_dim(config: TracerConfig) -> int:
    """Hashed-token columns the config's feature set uses (none for `transfer`)."""
    if config.features not in FEATURE_SETS:
        raise WhowhenError(
            f"unknown tracer feature set {config.features!r}; known: {', '.join(FEATURE_SETS)}"
        )
    return config.dim if config.features == "full" else 0


def fit(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    labels: pl.DataFrame,
    config: TracerConfig | None = None,
    weights: Mapping[str, float] | None = None,
) -> TracerModel:
    """Train on the runs whose label is in the train split (nothing else is read from
    `labels`); a run whose gold step is not one of its agent steps is left out.
    `weights`: run_id -> its weight in the loss (1 where not given), so a small real
    dataset can count as much as a large built one."""
    config = config or TracerConfig.of()
    train = labels.filter(pl.col("split") == "train").select("run_id", "decisive_step")
    gold = dict(zip(train["run_id"], train["decisive_step"], strict=True))
    feats = build(runs.filter(pl.col("run_id").is_in(list(gold))), steps, hashed_dim(config))
    return fit_features(feats, gold, config, weights)


def fit_features(
    feats: Features,
    gold: Mapping[str, int],
    config: TracerConfig,
    weights: Mapping[str, float] | None = None,
) -> TracerModel:
    """`fit` on features already built: only the runs `gold` labels (run_id -> decisive
    step) are learned from, so one build serves several fits (cross-validation folds)."""
    target = np.zeros(feats.n_rows)
    keep = []
    for k, run_id in enumerate(feats.run_ids):
        if run_id not in gold:
            continue
        lo, hi = feats.offsets[k], feats.offsets[k + 1]
        hit = np.flatnonzero(feats.steps[lo:hi] == gold[run_id])
        if hit.size:
            target[lo + hit[0]] = 1.0
            keep.append(k)
    if not keep:  # an empty dataset is a result: the model says it learned nothing
        log.warning("%s: no train-split run to fit on; it will predict nothing", NAME)
        return TracerModel(config, [0.0] * (len(DENSE) + hashed_dim(config)), n_train_runs=0)
    run_weight = np.asarray([(weights or {}).get(feats.run_ids[k], 1.0) for k in keep])
    weights_, bias = _train(feats, target, np.asarray(keep), config, run_weight)
    log.info("%s: fitted on %d train runs (%d left out)", NAME, len(keep), len(gold) - len(keep))
    return TracerModel(config, [float(w) for w in weights_], float(bias), n_train_runs=len(keep))


def scores(model: TracerModel, feats: Features) -> np.ndarray:
    w = np.asarray(model.weights)
    return np.bincount(feats.rows, feats.vals * w[feats.cols], feats.n_rows) + model.bias


def predict(model: TracerModel, runs: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """One PREDICTIONS row per run: the highest-scoring agent step and the likeliest agent
    (a run without agent steps gets none, and a model fitted on nothing predicts nothing)."""
    started = time.perf_counter()
    out = predict_features(model, build(runs, steps, hashed_dim(model.config)))
    elapsed = time.perf_counter() - started  # logged only: outputs stay byte-identical
    log.info("%s: %d predictions in %.2f s", model.name, out.height, elapsed)
    return out


def predict_features(
    model: TracerModel, feats: Features, only: Collection[str] | None = None
) -> pl.DataFrame:
    """`predict` on features already built, for the runs in `only` (every run: None)."""
    s = scores(model, feats)
    rows = []
    unfitted = "not fitted: the dataset had no train-split run"
    for k, run_id in enumerate(feats.run_ids):
        if only is not None and run_id not in only:
            continue
        lo, hi = feats.offsets[k], feats.offsets[k + 1]
        row: dict[str, Any] = prediction_row(
            run_id, model.name, reason="no agent step" if model.n_train_runs else unfitted
        )
        if hi > lo and model.n_train_runs:
            best = lo + int(np.argmax(s[lo:hi]))  # ties: the earliest step
            top = {int(feats.steps[i]): round(float(s[i]), 4) for i in range(lo, hi)}
            agent, mass = likeliest_agent(feats.actors[lo:hi], s[lo:hi])
            row.update(
                agent=agent,
                step=int(feats.steps[best]),
                reason=f"highest score {s[best]:.3f} of {hi - lo} agent steps; "
                f"{agent} holds {mass:.0%} of the probability",
                raw_output=json.dumps({"scores": top}),
                parse_ok=True,
            )
        rows.append(row)
    return pl.from_arrow(to_arrow(rows, PREDICTIONS))


def likeliest_agent(actors: list[str], run_scores: np.ndarray) -> tuple[str, float]:
    """The agent whose steps together hold the most probability (a softmax over the run's
    steps), and that share. Who and when are scored apart: the likeliest agent need not
    own the single likeliest step (three middling steps of one agent outweigh one good step
    of another), and on real runs choosing it this way scored higher than taking the top
    step's actor. Ties go to the agent that acted first."""
    p = np.exp(run_scores - run_scores.max())
    p = p / p.sum()
    mass: dict[str, float] = {}
    for actor, share in zip(actors, p, strict=True):
        mass[actor] = mass.get(actor, 0.0) + float(share)
    best = max(mass, key=lambda a: mass[a])  # dicts keep first-acted order; max keeps first
    return best, mass[best]


def _train(
    feats: Features,
    target: np.ndarray,
    keep: np.ndarray,
    config: TracerConfig,
    run_weight: np.ndarray,
) -> tuple[np.ndarray, float]:
    """Full-batch Adam on the weighted mean log-loss plus L2, over the kept runs' rows."""
    mask = np.zeros(feats.n_rows, dtype=bool)
    for k in keep:
        mask[feats.offsets[k] : feats.offsets[k + 1]] = True
    sel = mask[feats.rows]
    rows, cols, vals = feats.rows[sel], feats.cols[sel], feats.vals[sel]
    # renumber the kept rows 0..m-1 so every product is over the training rows only
    new_index = np.cumsum(mask) - 1
    rows = new_index[rows]
    y = target[mask]
    m = int(mask.sum())
    sizes = np.diff(feats.offsets)[keep]
    segment = np.repeat(np.arange(len(keep)), sizes)
    row_weight = (run_weight / run_weight.mean())[segment]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rng = np.random.default_rng(config.seed)
    w = rng.normal(0.0, 0.01, feats.n_cols)
    b = 0.0
    pos_weight = (m - y.sum()) / max(1.0, y.sum())
    state = [np.zeros(feats.n_cols + 1), np.zeros(feats.n_cols + 1)]
    for it in range(1, config.iterations + 1):
        z = np.bincount(rows, vals * w[cols], m) + b
        if config.objective == "listwise":
            z = z - np.maximum.reduceat(z, starts)[segment]
            e = np.exp(z)
            g = e / np.add.reduceat(e, starts)[segment] - y  # softmax minus one-hot
            g = g * row_weight / len(keep)
        elif config.objective == "pointwise":
            p = 1.0 / (1.0 + np.exp(-z))
            g = (p - y) * np.where(y > 0, pos_weight, 1.0) * row_weight / m
        else:
            raise WhowhenError(f"unknown tracer objective {config.objective!r}")
        grad_w = np.bincount(cols, vals * g[rows], feats.n_cols) + config.l2 * w
        grad = np.append(grad_w, g.sum() if config.objective == "pointwise" else 0.0)
        w, b = _adam(w, b, grad, state, it, config.learning_rate)
    return w, b


def _adam(
    w: np.ndarray, b: float, grad: np.ndarray, state: list[np.ndarray], it: int, lr: float
) -> tuple[np.ndarray, float]:
    m, v = state
    m *= 0.9
    m += 0.1 * grad
    v *= 0.999
    v += 0.001 * grad * grad
    step = lr * (m / (1 - 0.9**it)) / (np.sqrt(v / (1 - 0.999**it)) + 1e-8)
    return w - step[:-1], b - float(step[-1])


def held_out_path(model_path: str | Path) -> Path:
    """Where the out-of-fold predictions of a model's imported training runs lie."""
    return Path(model_path).with_suffix(".oof.parquet")


def _attributor(ctx: AttributorContext) -> Attributor:
    """tracer-lite with the model the tracer_fit rule fitted (every dataset is predicted by
    the same model), except that a run the model learned from gets its out-of-fold
    prediction (`held_out_path`), so no report row scores a model on its own labels."""
    if ctx.tracer_model is None:
        raise WhowhenError("tracer_lite needs its fitted model", field="tracer_model")
    model = TracerModel.load(ctx.tracer_model)
    held = held_out_path(ctx.tracer_model)
    oof = read_table(held, PREDICTIONS) if held.exists() else None

    def run(runs: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
        out = predict(model, runs, steps)
        if oof is None or oof.is_empty():
            return out
        mine = oof.filter(pl.col("run_id").is_in(out["run_id"].to_list()))
        if mine.is_empty():
            return out
        log.info("%s: %d runs it learned from predicted out of fold", model.name, mine.height)
        kept = out.filter(~pl.col("run_id").is_in(mine["run_id"].to_list()))
        return pl.concat([kept, mine.select(out.columns)]).sort("run_id")

    return run


ATTRIBUTORS.register(
    NAME, protocol="trained", family="tracer", section="learned", needs_tracer_model=True
)(_attributor)


def _built_attributor(ctx: AttributorContext) -> Attributor:
    """tracer-lite as fitted on the built train split alone. Given the pipeline's model
    (`tracer_lite.json`, as the feedback stage passes it), its sibling
    `tracer_lite_built.json` is read; any other path is the model itself."""
    path = ctx.tracer_model
    if path is not None and Path(path).name == f"{NAME}.json":
        path = str(Path(path).with_name(f"{NAME}_built.json"))
    return _attributor(replace(ctx, tracer_model=path))


ATTRIBUTORS.register(
    f"{NAME}_built",
    protocol="trained",
    family="tracer",
    section="learned",
    needs_tracer_model=True,
)(_built_attributor)
