"""Attribution metrics with bootstrap intervals and breakdowns, for honest comparisons.

Items are (labelled trajectory, attributor) pairs: every attributor is scored on every
label, so a trajectory it has no prediction for counts as wrong (never silently dropped).
Matching is exact: the agent name must equal the gold agent, the step index the gold
index (gold step 1 never matches a predicted 10), and a prediction with `parse_ok`
false counts as wrong whatever it holds.

Breakdowns are one-way (`by=["modality", "system"]`) or crossed (`"modality+topology"`,
group values joined by "/"). Item-level keys (dataset, modality, category, topology,
...) split each attributor's items. Attributor-level keys (`protocol`, `family`) pool the
attributors of a group instead: those rows have attributor "all", and their bootstrap
resamples trajectories (each carrying all its pooled predictions), so correlated answers
on one trajectory are not counted as independent evidence.

Protocol and model family convention (`attributor_protocol`): an explicit
`attributor_info` mapping wins; the built-in baselines and shortcut predictors are
protocol "baseline", family "none"; tracer-lite is "trained"/"tracer" and the replay
oracle "oracle"/"replay"; otherwise a name `<family>_<protocol>` (or
`<protocol>_<family>`) with a known protocol is split at it (`mock_all_at_once` ->
all_at_once / mock); anything else is "unknown" / "unknown".
`attributor_info_from_config` builds the mapping from the config (protocol from the
attributor entry, family from the price table).
"""

from __future__ import annotations

import html
import zlib
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
import polars as pl

from whowhen.errors import WhowhenError

KS = (1, 2, 3, 4, 5)
LENGTH_EDGES = (1, 5, 10, 20)
"""Agent-step bins: 1-4, 5-9, 10-19, 20+ (and 0 for a run without agent steps)."""
KNOWN_PROTOCOLS = ("all_at_once", "step_by_step", "binary_search", "hybrid")
"""Besides `whowhen.attribution.llm.PROTOCOLS` (read at call time)."""
BASELINE_INFO = {"protocol": "baseline", "family": "none"}
BUILTIN_INFO = {
    "tracer_lite": {"protocol": "trained", "family": "tracer"},
    "counterfactual_oracle": {"protocol": "oracle", "family": "replay"},
}
"""The attributors `stage()` runs besides `ATTRIBUTORS`: a fitted model and the replay."""
UNKNOWN = "unknown"
ATTRIBUTOR_KEYS = ("protocol", "family")
ITEM_KEYS = (
    "dataset",
    "benchmark",
    "modality",
    "category",
    "topology",
    "system",
    "length_bin",
    "source",
    "mode",
    "mode_category",
)
"""`category` is the run's task category; `mode` and `mode_category` are the gold label's."""
DEFAULT_BY = (
    "dataset",
    "modality",
    "category",
    "topology",
    "system",
    "length_bin",
    "protocol",
    "family",
)
BOOTSTRAPPED = ("agent_acc", "step_acc", "joint_acc")
_OK = {"agent_acc": "agent_ok", "step_acc": "step_ok", "joint_acc": "joint_ok"}


def attributor_protocol(
    name: str, info: Mapping[str, Mapping[str, str]] | None = None
) -> dict[str, str]:
    """(protocol, family) of one attributor by the convention in the module docstring."""
    from whowhen.attribution import ATTRIBUTORS
    from whowhen.attribution.llm import PROTOCOLS

    if info and name in info:
        entry = info[name]
        return {"protocol": entry.get("protocol", UNKNOWN), "family": entry.get("family", UNKNOWN)}
    if name in ATTRIBUTORS:
        return dict(BASELINE_INFO)
    if name in BUILTIN_INFO:
        return dict(BUILTIN_INFO[name])
    for protocol in sorted({*KNOWN_PROTOCOLS, *PROTOCOLS}, key=len, reverse=True):
        if name == protocol:
            return {"protocol": protocol, "family": UNKNOWN}
        if name.endswith("_" + protocol):
            return {"protocol": protocol, "family": name[: -len(protocol) - 1]}
        if name.startswith(protocol + "_"):
            return {"protocol": protocol, "family": name[len(protocol) + 1 :]}
    return {"protocol": UNKNOWN, "family": UNKNOWN}


def attributor_info_from_config(
    attribution: Mapping[str, Any],
    models: Mapping[str, Any] | None = None,
    prices_path: str | None = None,
) -> dict[str, dict[str, str]]:
    """The mapping for the configured LLM attributors: protocol from the entry, family and
    open_weight ("true"/"false", "unknown" when unpriced) from the price table (`family:`,
    `open_weight:`), else the model's name after the provider as the family."""
    from whowhen.models.spec import load_prices

    table = load_prices(prices_path) if prices_path else None
    out: dict[str, dict[str, str]] = {}
    for item in attribution.get("llm", []) or []:
        model = item["model"]
        model_id = str((models or {}).get(model, {}).get("id", model))
        price = table.price(model_id) if table else None
        family = price.family if price else model_id.split("/")[-1]
        out[item["name"]] = {
            "protocol": item.get("protocol", "all_at_once"),
            "family": family,
            "open_weight": "unknown" if price is None else str(price.open_weight).lower(),
        }
    return out


def length_bin(n: pl.Expr, edges: Sequence[int] = LENGTH_EDGES) -> pl.Expr:
    """Bin label of an agent-step count: edges (1, 5, 10, 20) give 1-4, 5-9, 10-19, 20+."""
    if not edges or any(b <= a for a, b in pairwise(edges)) or edges[0] < 1:
        raise WhowhenError(f"length bin edges must be increasing and >= 1, got {list(edges)}")
    low = "0" if edges[0] == 1 else f"0-{edges[0] - 1}"
    expr = pl.when(n < edges[0]).then(pl.lit(low))
    for a, b in pairwise(edges):
        expr = expr.when(n < b).then(pl.lit(f"{a}-{b - 1}" if b - 1 > a else str(a)))
    return expr.otherwise(pl.lit(f"{edges[-1]}+"))


def scored_items(
    labels: pl.DataFrame,
    predictions: pl.DataFrame,
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    attributor_info: Mapping[str, Mapping[str, str]] | None = None,
    length_edges: Sequence[int] = LENGTH_EDGES,
) -> pl.DataFrame:
    """One row per (label, attributor) with every breakdown key and per-item outcomes."""
    from whowhen.attribution.baselines import agent_steps

    names = sorted(set(predictions["attributor"].to_list()))
    info = pl.DataFrame(
        [{"attributor": n, **attributor_protocol(n, attributor_info)} for n in names],
        schema={"attributor": pl.String, "protocol": pl.String, "family": pl.String},
    )
    n_agent = agent_steps(steps).group_by("run_id").agg(pl.len().cast(pl.Int64).alias("n_agent"))
    run_cols = runs.select(
        "run_id",
        pl.when(pl.col("subset").is_null())
        .then(pl.col("benchmark"))
        .otherwise(pl.col("benchmark") + "/" + pl.col("subset"))
        .alias("dataset"),
        "benchmark",
        "modality",
        "category",
        "topology",
        "system",
    )
    gold = (
        labels.select(
            "run_id",
            "decisive_agent",
            "decisive_step",
            pl.col("mode").alias("gold_mode"),
            pl.col("category").alias("mode_category"),
            "source",
            pl.col("split").fill_null("unsplit"),
        )
        .join(run_cols, on="run_id", how="left")
        .join(n_agent, on="run_id", how="left")
        .with_columns(pl.col("n_agent").fill_null(0))
        .with_columns(length_bin(pl.col("n_agent"), length_edges).alias("length_bin"))
    )
    pred = predictions.select(
        "run_id",
        "attributor",
        pl.col("agent").alias("p_agent"),
        pl.col("step").alias("p_step"),
        pl.col("mode").alias("p_mode"),
        pl.col("parse_ok").fill_null(False).alias("usable"),
        pl.lit(True).alias("has_row"),
        (pl.col("tokens_in").fill_null(0) + pl.col("tokens_out").fill_null(0)).alias("tokens"),
        pl.col("cost_usd").fill_null(0.0).alias("cost"),
        pl.col("calls").fill_null(0).alias("calls"),
    )
    items = (
        gold.join(info, how="cross")
        .join(pred, on=["run_id", "attributor"], how="left")
        .with_columns(pl.col("usable", "has_row").fill_null(False))
    )
    ok = pl.col("usable")
    err = pl.when(ok).then((pl.col("p_step") - pl.col("decisive_step")).abs())
    items = items.with_columns(
        (ok & (pl.col("p_agent") == pl.col("decisive_agent"))).fill_null(False).alias("agent_ok"),
        (ok & (pl.col("p_step") == pl.col("decisive_step"))).fill_null(False).alias("step_ok"),
        err.alias("abs_err"),
        pl.col("gold_mode").is_not_null().alias("mode_known"),
        (ok & (pl.col("p_mode") == pl.col("gold_mode"))).fill_null(False).alias("mode_ok"),
    ).with_columns(
        (pl.col("agent_ok") & pl.col("step_ok")).alias("joint_ok"),
        *((pl.col("abs_err") <= k).fill_null(False).alias(f"within_{k}") for k in KS),
        pl.col("gold_mode").alias("mode"),
    )
    keys = [k for k in ITEM_KEYS if k != "length_bin"]
    return items.with_columns(pl.col(keys).cast(pl.String).fill_null(UNKNOWN)).sort(
        "attributor", "run_id"
    )


def _parts(key: str) -> list[str]:
    parts = key.split("+")
    known = (*ITEM_KEYS, *ATTRIBUTOR_KEYS)
    bad = [p for p in parts if p not in known]
    if bad:
        raise WhowhenError(f"unknown breakdown {bad[0]!r}; known: {', '.join(known)}", field="by")
    return parts


def _long(items: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Items repeated once per breakdown (and 'all'), with split 'all' roll-ups."""
    frames = [items.with_columns(breakdown=pl.lit("all"), group=pl.lit("all"))]
    for key in by:
        parts = _parts(key)
        group = pl.concat_str([pl.col(p) for p in parts], separator="/")
        frame = items.with_columns(breakdown=pl.lit(key), group=group)
        if any(p in ATTRIBUTOR_KEYS for p in parts):  # pooled over the group's attributors
            frame = frame.with_columns(
                attributor=pl.lit("all"),
                **{k: pl.lit("all") for k in ATTRIBUTOR_KEYS if k not in parts},
            )
        frames.append(frame)
    long = pl.concat(frames, how="vertical")
    return pl.concat([long, long.with_columns(split=pl.lit("all"))], how="vertical")


def _point(long: pl.DataFrame) -> pl.DataFrame:
    mode_n = pl.col("mode_known").sum()
    has = pl.col("has_row")
    return long.group_by("attributor", "protocol", "family", "breakdown", "group", "split").agg(
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("run_id").n_unique().cast(pl.Int64).alias("n_items"),
        pl.col("agent_ok").mean().alias("agent_acc"),
        pl.col("step_ok").mean().alias("step_acc"),
        pl.col("joint_ok").mean().alias("joint_acc"),
        *(pl.col(f"within_{k}").mean().alias(f"step_acc_pm{k}") for k in KS),
        mode_n.cast(pl.Int64).alias("mode_n"),
        pl.when(mode_n > 0)
        .then(pl.col("mode_ok").sum() / mode_n)
        .otherwise(None)
        .alias("mode_acc"),
        pl.col("abs_err").cast(pl.Float64).mean().alias("mean_abs_step_err"),
        pl.col("usable").sum().cast(pl.Int64).alias("n_parsed"),
        (~pl.col("usable")).mean().alias("parse_fail_rate"),
        pl.col("tokens").filter(has).cast(pl.Float64).mean().alias("tokens_per_traj"),
        pl.col("cost").filter(has).mean().alias("cost_per_traj"),
    )


def bootstrap_ci(
    hits: np.ndarray, counts: np.ndarray, n_boot: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile 95% interval of sum(hits)/sum(counts) resampling rows (clusters) with
    replacement. hits: (n, m) per cluster and metric; counts: (n, m). Vectorised: one
    (n_boot, n) multiplicity matrix, then a matrix product."""
    n = hits.shape[0]
    idx = rng.integers(0, n, size=(n_boot, n))
    flat = (np.arange(n_boot)[:, None] * n + idx).ravel()
    # float32 is exact here (integer sums far below 2**24) and halves the memory traffic
    weights = np.bincount(flat, minlength=n_boot * n).reshape(n_boot, n).astype(np.float32)
    num = (weights @ hits.astype(np.float32)).astype(np.float64)
    den = (weights @ counts.astype(np.float32)).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = num / den
    quantile = np.nanquantile if np.isnan(est).any() else np.quantile
    lo, hi = quantile(est, [0.025, 0.975], axis=0)
    return lo, hi


def _group_seed(seed: int, breakdown: str, group: str, split: str) -> np.random.Generator:
    """Seeded per group, so adding a breakdown never moves another group's interval."""
    return np.random.default_rng([seed, zlib.crc32(f"{breakdown}\0{group}\0{split}".encode())])


def _intervals(long: pl.DataFrame, n_boot: int, seed: int) -> pl.DataFrame:
    """Bootstrap over trajectories; every attributor of a group gets the same resamples
    (paired), so their intervals are comparable."""
    oks = [_OK[m] for m in BOOTSTRAPPED]
    rows: list[dict[str, Any]] = []
    keys = ("breakdown", "group", "split")
    narrow = long.select(*keys, "run_id", "attributor", *oks)  # partitions copy: keep it small
    for key, frame in narrow.partition_by(*keys, as_dict=True).items():
        breakdown, group, split = (str(k) for k in key)
        frame = frame.with_columns(
            (pl.col("run_id").rank("dense") - 1).alias("_r"),
            (pl.col("attributor").rank("dense") - 1).alias("_a"),
        )
        r, a = frame["_r"].to_numpy(), frame["_a"].to_numpy()
        n_runs, n_att = int(r.max()) + 1, int(a.max()) + 1
        hits = np.zeros((n_runs, n_att, len(oks)))
        counts = np.zeros((n_runs, n_att, len(oks)))
        np.add.at(hits, (r, a), frame.select(oks).to_numpy().astype(np.float64))
        np.add.at(counts, (r, a), 1.0)
        lo, hi = bootstrap_ci(
            hits.reshape(n_runs, -1),
            counts.reshape(n_runs, -1),
            n_boot,
            _group_seed(seed, breakdown, group, split),
        )
        lo, hi = lo.reshape(n_att, len(oks)), hi.reshape(n_att, len(oks))
        names = frame.select("_a", "attributor").unique().sort("_a")["attributor"].to_list()
        for i, name in enumerate(names):
            row = {"attributor": name, "breakdown": breakdown, "group": group, "split": split}
            for j, metric in enumerate(BOOTSTRAPPED):
                row[f"{metric}_lo"], row[f"{metric}_hi"] = float(lo[i, j]), float(hi[i, j])
            rows.append(row)
    schema = {c: pl.String for c in ("attributor", "breakdown", "group", "split")}
    schema |= {f"{m}_{s}": pl.Float64 for m in BOOTSTRAPPED for s in ("lo", "hi")}
    return pl.DataFrame(rows, schema=schema)


COLUMNS = (
    "attributor", "protocol", "family", "breakdown", "group", "split", "n", "n_items",
    "agent_acc", "agent_acc_lo", "agent_acc_hi",
    "step_acc", "step_acc_lo", "step_acc_hi",
    "joint_acc", "joint_acc_lo", "joint_acc_hi",
    *(f"step_acc_pm{k}" for k in KS),
    "mode_n", "mode_acc", "mean_abs_step_err", "n_parsed", "parse_fail_rate",
    "tokens_per_traj", "cost_per_traj",
)  # fmt: skip


def attribution_metrics(
    labels: pl.DataFrame,
    predictions: pl.DataFrame,
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    by: Sequence[str] = DEFAULT_BY,
    n_boot: int = 1000,
    seed: int = 0,
    attributor_info: Mapping[str, Mapping[str, str]] | None = None,
    length_edges: Sequence[int] = LENGTH_EDGES,
) -> pl.DataFrame:
    """One row per attributor x breakdown group x split, with 'all' roll-ups (breakdown
    'all'/group 'all' and split 'all'). Columns in `COLUMNS`: accuracies are shares of
    items; `mode_acc` over items whose gold mode is known; `mean_abs_step_err` over
    parsed predictions with a step; per-trajectory tokens (in + out) and cost are means
    over items with a prediction row; `*_lo`/`*_hi` are seeded percentile bootstrap 95%
    intervals over trajectories. Latency is wall-clock time, different on every run, so it
    lives in its own table (`analysis.scores.timing`), not here."""
    by = list(dict.fromkeys(by))
    for key in by:
        _parts(key)
    items = scored_items(labels, predictions, runs, steps, attributor_info, length_edges)
    if items.height == 0:
        return pl.DataFrame(schema=_empty_schema())
    long = _long(items, by)
    point = _point(long)
    ci = _intervals(long, n_boot, seed)
    out = point.join(ci, on=["attributor", "breakdown", "group", "split"], how="left")
    order = {"all": 0, **{k: i + 1 for i, k in enumerate(by)}}
    split_order = {"train": 0, "dev": 1, "test": 2, "unsplit": 3, "all": 4}
    return (
        out.with_columns(
            pl.col("breakdown").replace_strict(order, return_dtype=pl.Int64).alias("_b"),
            pl.col("split")
            .replace_strict(split_order, default=5, return_dtype=pl.Int64)
            .alias("_s"),
        )
        .with_columns(pl.col("group").str.extract(r"^(\d+)").cast(pl.Int64).alias("_g"))
        .sort("_b", "attributor", "_g", "group", "_s", nulls_last=True)
        .select(COLUMNS)
    )


def _empty_schema() -> dict[str, pl.DataType]:
    ints = {"n", "n_items", "mode_n", "n_parsed"}
    strs = {"attributor", "protocol", "family", "breakdown", "group", "split"}
    return {c: pl.String if c in strs else pl.Int64 if c in ints else pl.Float64 for c in COLUMNS}


def _ci(value: str) -> pl.Expr:
    """'0.512 [0.480, 0.544]' from a metric and its interval columns."""

    def fmt(row: dict[str, float | None]) -> str:
        v, lo, hi = row[value], row[f"{value}_lo"], row[f"{value}_hi"]
        if v is None:
            return ""
        return f"{v:.3f}" if lo is None or hi is None else f"{v:.3f} [{lo:.3f}, {hi:.3f}]"

    cols = pl.struct(value, f"{value}_lo", f"{value}_hi")
    return cols.map_elements(fmt, return_dtype=pl.String).alias(value)


HEADLINE = (
    "attributor", "protocol", "family", "n", "agent_acc", "step_acc", "joint_acc",
    "step_acc_pm1", "step_acc_pm3", "step_acc_pm5", "mode_n", "mode_acc",
    "mean_abs_step_err", "parse_fail_rate", "tokens_per_traj", "cost_per_traj",
)  # fmt: skip
NOTE = (
    "Exact scoring over every labelled trajectory: the agent name must equal the gold agent "
    "and the step index the gold index (gold step 1 never matches a predicted 10); a "
    "missing or unparsed prediction counts as wrong. <code>joint_acc</code>: agent and "
    "step both right; <code>step_acc_pmK</code>: step within ±K; <code>mode_acc</code>: "
    "predicted mode equals the gold mode, over the <code>mode_n</code> items whose gold "
    "mode is known; <code>mean_abs_step_err</code>: mean |predicted - gold step| over "
    "parsed predictions; tokens (in + out) and cost (USD) are means per trajectory "
    "(wall-clock latency: <code>results/analysis/timing.csv</code>). Brackets: seeded "
    "percentile bootstrap 95% intervals over trajectories, the same resamples for every "
    "attributor. Baselines and shortcut predictors have protocol <code>baseline</code>, "
    "family <code>none</code>; protocol and family rows "
    "pool all attributors of the group."
)


def metrics_html(metrics: pl.DataFrame, split: str = "all", pivot: str = "step_acc") -> list[str]:
    """The report section: headline per attributor, per split, then one table per
    breakdown (item-level keys pivoted: groups x attributors, `pivot` with its interval;
    attributor-level keys pooled, all columns)."""
    from whowhen.analysis.report import table_html

    if metrics.height == 0:
        return ["<h2>Attribution metrics</h2>", "<p>No predictions to score.</p>"]
    fmt = [_ci(m) for m in BOOTSTRAPPED]
    overall = metrics.filter(pl.col("breakdown") == "all")
    parts = [
        "<h2>Attribution metrics with intervals</h2>",
        f"<p class='note'>{NOTE}</p>",
        f"<h3>Per attributor (split: {html.escape(split)})</h3>",
        table_html(overall.filter(pl.col("split") == split).with_columns(fmt).select(HEADLINE)),
        "<h3>Per split</h3>",
        table_html(
            overall.filter(pl.col("split") != "all")
            .with_columns(fmt)
            .select("attributor", "split", "n", *BOOTSTRAPPED, "step_acc_pm1", "parse_fail_rate")
        ),
    ]
    rows = metrics.filter((pl.col("split") == split) & (pl.col("breakdown") != "all"))
    for key in dict.fromkeys(rows["breakdown"].to_list()):
        frame = rows.filter(pl.col("breakdown") == key)
        parts.append(f"<h3>By {html.escape(key)} (split: {html.escape(split)})</h3>")
        if any(p in ATTRIBUTOR_KEYS for p in key.split("+")):
            parts.append(
                table_html(frame.with_columns(fmt).select("group", "n_items", *HEADLINE[3:]))
            )
            continue
        sizes = frame.group_by("group", maintain_order=True).agg(pl.col("n_items").first())
        wide = frame.with_columns(_ci(pivot)).pivot(
            "attributor", index="group", values=pivot, maintain_order=True
        )
        parts += [
            f"<p class='note'>{html.escape(pivot)} [95% CI] per {html.escape(key)}.</p>",
            table_html(sizes.join(wide, on="group", how="left", maintain_order="left")),
        ]
    return parts
