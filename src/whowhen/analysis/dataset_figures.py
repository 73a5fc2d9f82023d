"""Dataset-side tables and figures: the benchmark's Table 1, trajectory lengths, the
injection funnel, recovery by mode and warm start against re-rollout.

Every number comes from one SQL file under `sql/` run by DuckDB (`run_sql`); the Python
here only selects the columns a query reads and draws. Figures are deterministic (Agg,
fixed sizes, no PNG software/date metadata), state their n, show Wilson 95% intervals
wherever a proportion is drawn, and draw an explicit "no data" figure for empty input.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from whowhen.analysis.figures import save_figure
from whowhen.analysis.scores import run_sql
from whowhen.attribution.baselines import agent_steps

STATS_PANELS = ("modality", "topology", "category", "system")
"""The dimensions of `dataset_stats` drawn in its figure (2 x 2, in this order)."""

SPLIT_COLOURS = dict(zip(("train", "dev", "test"), sns.color_palette("colorblind", 3), strict=True))
STATUS_COLOURS = {"flipped": "#c44e52", "recovered": "#55a868", "invalid": "#8c8c8c"}
DPI = 110


def _inputs(
    labels: pl.DataFrame, runs: pl.DataFrame, steps: pl.DataFrame
) -> dict[str, pl.DataFrame]:
    """Only the columns the queries read: keeps the Arrow hand-over cheap on ~300k steps
    (step contents never cross), and `candidates` is exactly `agent_steps`."""
    return {
        "labels": labels.select("run_id", "split", "source"),
        "runs": runs.select(
            "run_id", "benchmark", "subset", "modality", "category", "system", "topology", "origin"
        ),
        "steps": steps.select("run_id"),
        "candidates": agent_steps(steps.select("run_id", "step", "actor", "kind")).select(
            "run_id", "actor"
        ),
    }


def dataset_stats(labels: pl.DataFrame, runs: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """Table 1 (`sql/dataset_stats.sql`): items, splits, share and lengths per value of each
    dimension, long format, with an ('all', 'all') total row."""
    return run_sql("dataset_stats", _inputs(labels, runs, steps))


def length_distribution(
    labels: pl.DataFrame, runs: pl.DataFrame, steps: pl.DataFrame
) -> pl.DataFrame:
    """Length quantiles (steps and agent steps) per group (`sql/length_distribution.sql`)."""
    return run_sql("length_distribution", _inputs(labels, runs, steps))


@contextmanager
def _theme() -> Iterator[None]:
    """Seaborn's whitegrid look for this figure only (no global rcParams change)."""
    with plt.rc_context(sns.axes_style("whitegrid") | {"font.size": 9, "axes.titlesize": 10}):
        yield


def _save(fig: Figure, path: str | Path) -> Path:
    return save_figure(fig, path, dpi=DPI)


def _no_data(path: str | Path, title: str) -> Path:
    """The explicit empty figure: a stage with nothing to show still writes its output."""
    with _theme():
        fig, ax = plt.subplots(figsize=(6.0, 2.0))
        ax.set_axis_off()
        ax.set_title(title)
        ax.text(0.5, 0.45, "no data (n=0)", ha="center", va="center", fontsize=12, color="0.4")
        return _save(fig, path)


def _pct(p: float | None) -> str:
    return "n/a" if p is None else f"{100 * p:.0f}%"


def dataset_stats_figure(table: pl.DataFrame, path: str | Path) -> Path:
    """Items per modality, topology, task category and system, stacked by split (n per
    panel): what the benchmark is made of, at a glance."""
    title = "Labelled items"
    if table.is_empty():
        return _no_data(path, title)
    panels = {d: table.filter(pl.col("dimension") == d) for d in STATS_PANELS}
    if all(p.is_empty() for p in panels.values()):
        return _no_data(path, title)
    total = table.filter(pl.col("dimension") == "all")["items"]
    n_total = int(total[0]) if total.len() else int(panels["modality"]["items"].sum())
    rows = [
        max(panels[a].height, panels[b].height, 1) for a, b in (STATS_PANELS[:2], STATS_PANELS[2:])
    ]
    with _theme():
        fig, axes = plt.subplots(
            2, 2, figsize=(9.0, 1.6 + 0.3 * sum(rows)), gridspec_kw={"height_ratios": rows}
        )
        for ax, dim in zip(axes.flat, STATS_PANELS, strict=True):
            frame = panels[dim].sort("items", "value", descending=[False, True])
            left = [0] * frame.height
            ys = range(frame.height)
            for split, colour in SPLIT_COLOURS.items():
                ax.barh(ys, frame[split], left=left, color=colour, label=split, height=0.7)
                left = [a + b for a, b in zip(left, frame[split], strict=True)]
            for y, items in zip(ys, frame["items"], strict=True):
                ax.text(items, y, f" {items:,}", va="center", fontsize=8)
            ax.set_yticks(list(ys), frame["value"].to_list())
            ax.set_ylim(-0.6, max(frame.height, 1) - 0.4)
            ax.set_xlim(0, max(1, int(frame["items"].max() or 0)) * 1.18)
            ax.set_title(f"by {dim} (n={int(frame['items'].sum()):,})", loc="left")
            ax.set_xlabel("items")
            ax.grid(axis="y", visible=False)
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper right", ncols=3, frameon=False, title=None)
        fig.suptitle(f"{title} (n={n_total:,}), stacked by split", x=0.01, ha="left")
        fig.tight_layout(rect=(0, 0, 1, 0.97))
        return _save(fig, path)


def _log_ticks(ax: plt.Axes, lo: float, hi: float) -> None:
    """Log-like x (symlog, linear below 1 so a zero length still draws) with plain-number
    ticks at 1, 2, 5 x 10^k: lengths read as step counts."""
    ax.set_xscale("symlog", linthresh=1.0, linscale=0.4)
    ticks = [m * 10**k for k in range(7) for m in (1, 2, 5) if m * 10**k <= hi * 1.05]
    ax.xaxis.set_major_locator(FixedLocator(([0] if lo < 1 else []) + ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())


def _box_label(value: str, runs: int) -> str:
    """'imported: who_and_when/Hand-Crafted' -> two lines, the name first (long names stay
    readable without squeezing the panel)."""
    kind, sep, name = value.partition(": ")
    return f"{name}\n{kind}, n={runs:,}" if sep else f"{value}\nn={runs:,}"


def _length_panel(ax: plt.Axes, frame: pl.DataFrame, label: str, log: bool) -> None:
    """One panel: a horizontal box per value of the dimension, imports in orange."""
    stats = [
        {
            "label": _box_label(r["value"], r["runs"]),
            "whislo": r["p10"],
            "q1": r["p25"],
            "med": r["median"],
            "q3": r["p75"],
            "whishi": r["p90"],
            "mean": r["mean"],
            "fliers": sorted({r["min"], r["max"]}),
        }
        for r in frame.iter_rows(named=True)
    ]
    if stats:
        boxes = ax.bxp(
            stats,
            orientation="horizontal",
            showmeans=True,
            widths=0.6,
            patch_artist=True,
            boxprops={"facecolor": "#a1c9f4", "edgecolor": "0.2"},
            medianprops={"color": "0.1", "linewidth": 1.6},
            meanprops={
                "marker": "D",
                "markersize": 4,
                "markerfacecolor": "white",
                "markeredgecolor": "0.1",
            },
            flierprops={"marker": "o", "markersize": 3, "markerfacecolor": "0.3"},
        )
        for box, value in zip(boxes["boxes"], frame["value"], strict=True):
            if value.startswith("imported: "):
                box.set_facecolor("#ffb482")
    ax.set_title(f"{label} (n={int(frame['runs'].sum()):,})", loc="left")
    ax.set_xlabel("agent steps" + (" (log scale)" if log else ""))
    ax.grid(axis="y", visible=False)


def length_distribution_figure(table: pl.DataFrame, path: str | Path) -> Path:
    """Agent steps per labelled trajectory, per collection (built modality or imported
    dataset, imports in orange) and per system: box = quartiles, whiskers = 10th-90th
    percentile, dots = min and max, diamond = mean; log x when lengths span 10x or more."""
    title = "Agent steps per labelled trajectory"
    rows = table.filter(pl.col("measure") == "agent_steps") if table.height else table
    panels = [("collection", "by collection"), ("system", "by system")]
    frames = {d: rows.filter(pl.col("dimension") == d) for d, _ in panels} if rows.height else {}
    if not frames or all(f.is_empty() for f in frames.values()):
        return _no_data(path, title)
    n = int(frames["collection"]["runs"].sum())
    lo, hi = float(rows["min"].min()), float(rows["max"].max())
    log = hi / max(lo, 1.0) >= 10
    heights = [max(f.height, 1) for f in frames.values()]
    with _theme():
        fig, axes = plt.subplots(
            1, 2, figsize=(10.0, 1.4 + 0.42 * max(heights)), sharex=True, squeeze=True
        )
        for ax, (dim, label) in zip(axes, panels, strict=True):
            _length_panel(ax, frames[dim].sort("value", descending=True), label, log)
        if log:
            _log_ticks(axes[0], lo, hi)
        fig.suptitle(
            f"{title} (n={n:,}): box quartiles, whiskers p10-p90, dots min/max, ◇ mean",
            x=0.01,
            ha="left",
        )
        fig.tight_layout(rect=(0, 0, 1, 0.97))
        return _save(fig, path)


def funnel_figure(funnel_table: pl.DataFrame, path: str | Path) -> Path:
    """Injections per benchmark and system, stacked by outcome, with the flip rate among
    valid injections and its Wilson interval beside each bar (`sql/funnel_pairs.sql`)."""
    title = "Injection funnel"
    if funnel_table.is_empty():
        return _no_data(path, title)
    pairs = run_sql("funnel_pairs", {"funnel": funnel_table}).reverse()
    n = int(pairs["injections"].sum())
    with _theme():
        fig, ax = plt.subplots(figsize=(9.0, 1.5 + 0.36 * pairs.height))
        ys = list(range(pairs.height))
        left = [0] * pairs.height
        for status, colour in STATUS_COLOURS.items():
            ax.barh(ys, pairs[status], left=left, color=colour, label=status, height=0.7)
            left = [a + b for a, b in zip(left, pairs[status], strict=True)]
        for y, r in zip(ys, pairs.iter_rows(named=True), strict=True):
            interval = (
                f"flipped {_pct(r['flip_rate'])} [{_pct(r['flip_lo'])}, {_pct(r['flip_hi'])}]"
                if r["flip_rate"] is not None
                else "no valid injection"
            )
            ax.text(
                r["injections"], y, f"  n={r['injections']:,} · {interval}", va="center", fontsize=8
            )
        ax.set_yticks(
            ys, [f"{r['benchmark']} / {r['system']}" for r in pairs.iter_rows(named=True)]
        )
        ax.set_ylim(-0.6, pairs.height - 0.4)
        ax.set_xlim(0, max(1, int(pairs["injections"].max() or 0)) * 1.55)
        ax.set_xlabel("injections")
        ax.grid(axis="y", visible=False)
        ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=3, frameon=False)
        fig.suptitle(
            f"{title}: n={n:,} injections in {pairs.height} benchmark / system pairs\n"
            "(beside each bar: flip rate among valid injections, 95% Wilson CI)",
            x=0.01,
            ha="left",
            fontsize=10,
        )
        fig.tight_layout()
        return _save(fig, path)


def _interval_points(
    ax: plt.Axes, ys: list[float], rate: pl.Series, lo: pl.Series, hi: pl.Series, **style: Any
) -> None:
    """Points with horizontal Wilson bars; rows whose rate is NULL (n=0) are left out."""
    keep = [i for i, v in enumerate(rate) if v is not None]
    if not keep:
        return
    x = [rate[i] for i in keep]
    err = [[max(0.0, rate[i] - lo[i]) for i in keep], [max(0.0, hi[i] - rate[i]) for i in keep]]
    style = {"fmt": "o", "capsize": 3, "lw": 1.2, "markersize": 5} | style
    ax.errorbar(x, [ys[i] for i in keep], xerr=err, **style)


def recovery_figure(recovery_table: pl.DataFrame, path: str | Path) -> Path:
    """Recovery rate per injected mode (recovered / valid) with Wilson 95% bars: which
    errors the systems' verifiers and reviewers catch."""
    title = "Recovery by injected mode"
    rows = recovery_table.filter(pl.col("valid") > 0).reverse() if recovery_table.height else None
    if rows is None or rows.is_empty():
        return _no_data(path, title)
    n = int(rows["valid"].sum())
    with _theme():
        fig, ax = plt.subplots(figsize=(8.0, 1.4 + 0.34 * rows.height))
        ys = list(range(rows.height))
        ax.barh(ys, rows["recovery_rate"], color="#8de5a1", edgecolor="0.3", height=0.65)
        _interval_points(
            ax,
            ys,
            rows["recovery_rate"],
            rows["recovery_lo"],
            rows["recovery_hi"],
            color="0.15",
            markersize=0,
        )
        for y, r in zip(ys, rows.iter_rows(named=True), strict=True):
            ax.text(
                1.02,
                y,
                f"{r['recovered']:,}/{r['valid']:,}",
                va="center",
                fontsize=8,
                transform=ax.get_yaxis_transform(),
            )
        ax.set_yticks(ys, [f"{r['mode']} (n={r['valid']:,})" for r in rows.iter_rows(named=True)])
        ax.set_ylim(-0.6, rows.height - 0.4)
        ax.set_xlim(0, 1)
        ax.set_xlabel("recovery rate (recovered / valid injections)")
        ax.grid(axis="y", visible=False)
        ax.set_title(f"{title} (n={n:,} valid injections; 95% Wilson CI)", loc="left")
        fig.tight_layout()
        return _save(fig, path)


DRIFT_METRICS = (
    ("warm_prefix_exact", "warm start: prefix exact", "#4c72b0"),
    ("rerollout_drift", "re-rollout: prefix drifted", "#dd8452"),
    ("rerollout_label_differs", "re-rollout: label differs", "#c44e52"),
)


def drift_figure(rerollout_table: pl.DataFrame, path: str | Path) -> Path:
    """Per benchmark and system (and all): warm start's exact-prefix rate (should be 1)
    beside the re-rollout's prefix drift and label-differs rates, Wilson 95% bars."""
    title = "Warm start vs re-rollout"
    # the SQL's grand-total row exists even over no continuations (injections = 0)
    rows = rerollout_table.filter(pl.col("injections") > 0) if rerollout_table.height else None
    if rows is None or rows.is_empty():
        return _no_data(path, title)
    rows = rows.reverse()  # 'all' last in SQL, so drawn at the bottom
    n = int(rows.filter(pl.col("benchmark") != "all")["injections"].sum())
    with _theme():
        fig, ax = plt.subplots(figsize=(9.0, 1.7 + 0.42 * rows.height))
        ys = list(range(rows.height))
        for offset, (col, label, colour) in zip((0.22, 0.0, -0.22), DRIFT_METRICS, strict=True):
            _interval_points(
                ax,
                [y + offset for y in ys],
                rows[col],
                rows[f"{col}_lo"],
                rows[f"{col}_hi"],
                color=colour,
                label=label,
            )
        names = [
            ("all pairs" if r["benchmark"] == "all" else f"{r['benchmark']} / {r['system']}")
            + f" (n={r['injections']:,}"
            + ("" if r["rerollouts"] == r["injections"] else f"; re-rollouts {r['rerollouts']:,}")
            + ")"
            for r in rows.iter_rows(named=True)
        ]
        ax.set_yticks(ys, names)
        for tick, r in zip(ax.get_yticklabels(), rows.iter_rows(named=True), strict=True):
            if r["benchmark"] == "all":
                tick.set_fontweight("bold")
        if "all" in rows["benchmark"].to_list() and rows.height > 1:
            ax.axhline(0.5, color="0.5", lw=0.8)
        ax.set_ylim(-0.6, rows.height - 0.4)
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel("rate")
        ax.grid(axis="y", visible=False)
        ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=3, frameon=False)
        fig.suptitle(
            f"{title}: n={n:,} injections; rates with 95% Wilson CI",
            x=0.01,
            ha="left",
            fontsize=10,
        )
        fig.tight_layout()
        return _save(fig, path)
