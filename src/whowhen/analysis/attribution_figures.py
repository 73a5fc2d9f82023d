"""Seaborn/matplotlib figures of the attribution tables (`attribution_tables.py`).

Each function takes one table, draws one split (the held-out test split by default), and
writes a PNG atomically with no timestamp, so reruns are byte-identical. Every figure
states its n and draws Wilson 95% intervals where it shows a proportion; an empty table
gives a figure that says so instead of an error.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import seaborn as sns

from whowhen.analysis.figures import empty_figure, interval_err, save_figure

MODALITY_ORDER = ("text", "image", "video")
FREE_COST = 1e-7
"""Where a zero-cost attributor sits on the log cost axis (labelled "free")."""


def _colors(names: list[str]) -> dict[str, tuple[float, float, float]]:
    palette = sns.color_palette("tab20", n_colors=max(len(names), 1))
    return dict(zip(sorted(names), palette, strict=False))


def _split(table: pl.DataFrame, split: str) -> pl.DataFrame:
    return table.filter(pl.col("split") == split) if table.height else table


def _hbars(ax: plt.Axes, frame: pl.DataFrame, value: str, rows: list[str], hues: list[str]):
    """Horizontal grouped bars: one group per attributor (rows), one bar per modality."""
    height = 0.8 / max(len(hues), 1)
    colors = sns.color_palette("deep", n_colors=len(hues))
    for j, hue in enumerate(hues):
        sub = frame.filter(pl.col("modality") == hue)
        pos = {a: i for i, a in enumerate(rows)}
        sub = sub.filter(pl.col("attributor").is_in(rows) & pl.col(value).is_not_null())
        if sub.height == 0:
            continue
        y = np.array([pos[a] for a in sub["attributor"]]) - 0.4 + (j + 0.5) * height
        ax.barh(y, sub[value].to_numpy(), height=height, color=colors[j], label=hue)
        ax.errorbar(
            sub[value].to_numpy(),
            y,
            xerr=interval_err(sub, value),
            fmt="none",
            ecolor="black",
            lw=0.7,
        )
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlim(0, 1.02)
    ax.invert_yaxis()


def cross_modality_figure(table: pl.DataFrame, path: str | Path, split: str = "test") -> Path:
    """Agent, step and mode accuracy per attributor, one bar per modality."""
    frame = _split(table, split).filter(pl.col("modality") != "all")
    if frame.height == 0:
        return empty_figure(path, "Cross-modality accuracy", f"no scored items ({split} split)")
    rows = sorted(set(frame["attributor"]))
    hues = [m for m in MODALITY_ORDER if m in set(frame["modality"])]
    hues += sorted(set(frame["modality"]) - set(hues))
    sizes = frame.group_by("modality").agg(pl.col("n").max())
    n_of = dict(sizes.iter_rows())
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(1, 3, figsize=(13, 1.2 + 0.42 * len(rows)), sharey=True)
    for ax, level in zip(axes, ("agent", "step", "mode"), strict=True):
        _hbars(ax, frame, f"{level}_acc", rows, hues)
        ax.set(xlabel=f"{level} accuracy", title=level)
    has_mode = frame.filter(pl.col("mode_acc").is_not_null())
    mode_rows = sorted(set(has_mode["attributor"]))
    axes[2].set_title(f"mode ({len(mode_rows)} attributors predict one)")
    legend = [f"{m} (n={n_of[m]})" for m in hues]
    handles, _ = axes[0].get_legend_handles_labels()
    fig.legend(handles, legend, loc="lower center", ncols=len(hues), frameon=False)
    fig.suptitle(f"Attribution accuracy by modality ({split} split; 95% Wilson CI)")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return save_figure(fig, path)


def _cost_points(frame: pl.DataFrame) -> pl.DataFrame:
    """x: the cost, free attributors at FREE_COST (a log axis has no 0); kind: the marker."""
    return frame.with_columns(
        pl.when(pl.col("cost_per_traj") > 0)
        .then(pl.col("cost_per_traj"))
        .otherwise(FREE_COST)
        .alias("x"),
        pl.when(pl.col("open_weight").is_null())
        .then(pl.lit("no model (free)"))
        .when(pl.col("open_weight"))
        .then(pl.lit("open-weight model"))
        .otherwise(pl.lit("proprietary model"))
        .alias("kind"),
    ).sort("x", "step_acc")


def _frontier(ax: plt.Axes, frame: pl.DataFrame) -> None:
    """The Pareto frontier as a staircase: each frontier point holds until a costlier,
    better one, and the last holds to the right edge (what that much money buys at best)."""
    front = frame.filter(pl.col("pareto")).sort("x")
    xs = [*front["x"], ax.get_xlim()[1]]
    ys = [*front["step_acc"], front["step_acc"][-1]] if front.height else []
    ax.step(xs[: len(ys)], ys, where="post", color="black", ls="--", lw=1)
    for row in front.iter_rows(named=True):
        ax.annotate(
            row["attributor"], (row["x"], row["step_acc"]), xytext=(8, 4),
            textcoords="offset points", fontsize=8,
        )  # fmt: skip


def cost_performance_figure(table: pl.DataFrame, path: str | Path, split: str = "test") -> Path:
    """Mean cost per trajectory (log axis) against step accuracy, Pareto frontier drawn,
    open-weight and proprietary models marked apart from the model-free baselines."""
    frame = _split(table, split)
    if frame.height == 0:
        return empty_figure(path, "Cost vs performance", f"no scored items ({split} split)")
    frame = _cost_points(frame)
    markers = {"no model (free)": "o", "open-weight model": "^", "proprietary model": "s"}
    colors = _colors(frame["attributor"].to_list())
    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(8.5, 5.2))
    for row in frame.iter_rows(named=True):
        ax.errorbar(
            row["x"],
            row["step_acc"],
            yerr=[[row["step_acc"] - row["step_acc_lo"]], [row["step_acc_hi"] - row["step_acc"]]],
            fmt=markers[row["kind"]],
            color=colors[row["attributor"]],
            ms=8,
            capsize=3,
            label=row["attributor"],
        )
    ax.set_xscale("log")
    costs = frame.filter(pl.col("cost_per_traj") > 0)["cost_per_traj"]
    hi = float(costs.max()) * 5 if costs.len() else 1e-4
    ax.set_xlim(FREE_COST / 3, max(hi, FREE_COST * 30))
    _frontier(ax, frame)
    ticks = [t for t in ax.get_xticks() if FREE_COST * 5 <= t <= hi]
    ax.set_xticks([FREE_COST, *ticks], ["free", *(f"${t:g}" for t in ticks)])
    ax.set_ylim(0, 1.02)
    kinds = [k for k in markers if k in set(frame["kind"])]
    marker_handles = [
        plt.Line2D([], [], marker=markers[k], ls="", color="grey", label=k) for k in kinds
    ]
    frontier = plt.Line2D([], [], color="black", ls="--", label="Pareto frontier")
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize=8,
               frameon=False)  # fmt: skip
    ax.legend(handles=[*marker_handles, frontier], loc="lower right", fontsize=8)
    ax.set(
        xlabel="mean cost per trajectory (USD, log)",
        ylabel="step accuracy",
        title=f"Cost vs step accuracy ({split} split, n={int(frame['n'].max())}; 95% Wilson CI)",
    )
    fig.tight_layout()
    return save_figure(fig, path)


def protocols_figure(table: pl.DataFrame, path: str | Path, split: str = "test") -> Path:
    """Agent, step and joint accuracy per protocol (and family), with calls and cost per
    trajectory written under each group."""
    frame = _split(table, split)
    if frame.height == 0:
        return empty_figure(path, "Protocol comparison", f"no scored items ({split} split)")
    frame = frame.with_columns((pl.col("protocol") + "\n" + pl.col("family")).alias("group")).sort(
        pl.col("protocol") == "baseline", "protocol", "family"
    )
    groups = frame["group"].to_list()
    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(1.6 + 1.5 * len(groups), 4.6))
    width = 0.27
    x = np.arange(len(groups))
    for j, level in enumerate(("agent", "step", "joint")):
        value = f"{level}_acc"
        err = interval_err(frame, value) if f"{value}_lo" in frame.columns else None
        ax.bar(x + (j - 1) * width, frame[value].to_numpy(), width, label=level, yerr=err)
    labels = [
        f"{g}\n{r['calls_per_traj']:.1f} calls, ${r['cost_per_traj']:.2g}/traj\n"
        f"n={r['n']} ({r['attributors']} attr.)"
        for g, r in zip(groups, frame.iter_rows(named=True), strict=True)
    ]
    ax.set_xticks(x, labels, fontsize=8)
    ax.set(
        ylim=(0, 1.05),
        ylabel="accuracy",
        title=f"Protocol comparison ({split} split; 95% Wilson CI on agent and step)",
    )
    ax.legend(ncols=3, loc="upper right", frameon=False)
    fig.tight_layout()
    return save_figure(fig, path)


def _lines_done(fig: plt.Figure, ax: plt.Axes, path: str | Path, **axes: object) -> Path:
    """Finish a one-line-per-attributor figure: labels, [0, 1] axis, legend on the right."""
    ax.set(ylim=(0, 1.02), **axes)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, frameon=False)
    fig.tight_layout()
    return save_figure(fig, path)


def tolerance_figure(table: pl.DataFrame, path: str | Path, split: str = "test") -> Path:
    """Share of predictions within ±k steps of the gold step, k = 0..K, per attributor."""
    frame = _split(table, split)
    if frame.height == 0:
        return empty_figure(path, "Step tolerance", f"no scored items ({split} split)")
    colors = _colors(frame["attributor"].unique().to_list())
    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    for name, sub in sorted(frame.group_by("attributor"), key=lambda kv: kv[0][0]):
        sub = sub.sort("k")
        k = sub["k"].to_numpy()
        ax.plot(k, sub["step_acc"], marker="o", color=colors[name[0]], label=name[0])
        ax.fill_between(
            k, sub["step_acc_lo"], sub["step_acc_hi"], color=colors[name[0]], alpha=0.12
        )
    return _lines_done(
        fig,
        ax,
        path,
        xlabel="tolerance k (|predicted - gold step| <= k)",
        ylabel="share of trajectories",
        xticks=sorted(set(frame["k"])),
        title=f"Step-tolerance curves ({split} split, n={int(frame['n'].max())}; 95% Wilson band)",
    )


def length_accuracy_figure(table: pl.DataFrame, path: str | Path, split: str = "test") -> Path:
    """Step accuracy per agent-step length bin, one line per attributor; bin n on the axis."""
    frame = _split(table, split)
    if frame.height == 0:
        return empty_figure(path, "Accuracy vs length", f"no scored items ({split} split)")
    bins = frame.group_by("length_bin").agg(pl.col("bin_start").min(), pl.col("n_items").max())
    bins = bins.sort("bin_start")
    pos = {b: i for i, b in enumerate(bins["length_bin"])}
    colors = _colors(frame["attributor"].unique().to_list())
    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    names = sorted(set(frame["attributor"]))
    for i, name in enumerate(names):
        sub = frame.filter(pl.col("attributor") == name).sort("bin_start")
        x = np.array([pos[b] for b in sub["length_bin"]]) + (i - len(names) / 2) * 0.04
        ax.errorbar(
            x, sub["step_acc"], yerr=interval_err(sub, "step_acc"), marker="o", ms=4, capsize=2,
            color=colors[name], label=name, lw=1.2,
        )  # fmt: skip
    ax.set_xticks(
        range(len(pos)),
        [f"{b}\nn={n}" for b, n in zip(bins["length_bin"], bins["n_items"], strict=True)],
    )
    return _lines_done(
        fig,
        ax,
        path,
        xlabel="agent steps in the trajectory",
        ylabel="step accuracy",
        title=f"Step accuracy vs trajectory length ({split} split; 95% Wilson CI)",
    )


def delta_step_figure(table: pl.DataFrame, path: str | Path, split: str = "test") -> Path:
    """Histogram of predicted minus gold step per attributor (end bins hold the tails)."""
    frame = _split(table, split)
    if frame.height == 0:
        return empty_figure(path, "Δstep", f"no parsed predictions ({split} split)")
    names = sorted(set(frame["attributor"]))
    cols = min(4, len(names))
    rows = -(-len(names) // cols)
    clip = int(frame["delta"].abs().max())
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(
        rows, cols, figsize=(3.2 * cols, 2.3 * rows + 0.6), sharex=True, sharey=True, squeeze=False
    )
    for ax, name in zip(axes.ravel(), names, strict=False):
        sub = frame.filter(pl.col("attributor") == name).sort("delta")
        colors = ["#2a9d8f" if d == 0 else "#8d99ae" for d in sub["delta"]]
        ax.bar(sub["delta"], sub["share"], color=colors, width=0.85)
        n_total = int(sub["n_total"].max())
        ax.set_title(f"{name} (n={n_total})", fontsize=9)
    for ax in axes.ravel()[len(names) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel(f"predicted - gold step (ends: ≤-{clip}, ≥{clip})")
    for ax in axes[:, 0]:
        ax.set_ylabel("share")
    fig.suptitle(f"Signed step error ({split} split; green: exact)")
    fig.tight_layout()
    return save_figure(fig, path)


def mode_confusion_figure(
    table: pl.DataFrame, path: str | Path, split: str = "test", max_panels: int = 4
) -> Path:
    """Row-normalised gold x predicted mode heatmap for each attributor that names modes."""
    frame = _split(table, split)
    if frame.height == 0:
        return empty_figure(path, "Mode confusion", f"no attributor predicts modes ({split})")
    names = sorted(set(frame["attributor"]))[:max_panels]
    modes = sorted(set(frame["gold_mode"]) | set(frame["predicted_mode"]) - {"(none)"})
    golds, preds = modes, [*modes, "(none)"]  # one order on both axes: the diagonal is right
    sns.set_theme(style="white")
    fig, axes = plt.subplots(
        1, len(names), figsize=(1.5 + 0.42 * len(preds) * len(names), 2.2 + 0.36 * len(golds)),
        squeeze=False,
    )  # fmt: skip
    for ax, name in zip(axes[0], names, strict=True):
        sub = frame.filter(pl.col("attributor") == name)
        grid = np.zeros((len(golds), len(preds)))
        for g, p, share in sub.select("gold_mode", "predicted_mode", "share").iter_rows():
            grid[golds.index(g), preds.index(p)] = share
        n = int(sub["n"].sum())
        # empty cells stay blank: easier to read, and drawing hundreds of "0.00" labels
        # was a third of the analysis stage's time
        labels = np.where(grid > 0, np.char.mod("%.2f", grid), "")
        sns.heatmap(
            grid, ax=ax, cmap="Blues", vmin=0, vmax=1, cbar=False, annot=labels, fmt="",
            annot_kws={"fontsize": 6}, xticklabels=preds, yticklabels=golds,
        )  # fmt: skip
        ax.set(title=f"{name} (n={n})", xlabel="predicted mode", ylabel="gold mode")
        ax.tick_params(axis="x", labelrotation=70, labelsize=7)
        ax.tick_params(axis="y", labelsize=7)
    fig.suptitle(f"Mode confusion, row shares ({split} split)")
    fig.tight_layout()
    return save_figure(fig, path)


FIGURES = {
    "cross_modality": cross_modality_figure,
    "cost_performance": cost_performance_figure,
    "protocols": protocols_figure,
    "tolerance": tolerance_figure,
    "length_accuracy": length_accuracy_figure,
    "delta_step": delta_step_figure,
    "mode_confusion": mode_confusion_figure,
}
"""Table name -> figure function (same names as `ATTRIBUTION_TABLES`)."""
