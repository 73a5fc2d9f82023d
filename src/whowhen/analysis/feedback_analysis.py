"""Does attribution help a system fix its own failure? Tables, figures and the report
section of the feedback loop (whowhen.feedback).

Every originally failed task is rerun for a few rounds once per feedback source, each rerun
seeing the source's attribution of the previous failed attempt. The tables (one SQL file
each, run by DuckDB) give the cumulative success per round and, per source, the accuracy of
the feedback against the final success; the figures draw both with Wilson 95% intervals,
and an empty attempts table gives figures that say so instead of an error.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl
import seaborn as sns

from whowhen.analysis.figures import empty_figure, interval_err, save_figure
from whowhen.analysis.html import caption, image_html, table_html
from whowhen.analysis.outputs import FEEDBACK_TABLES
from whowhen.analysis.scores import run_sql
from whowhen.runtime.infra import infra_mask

RETRY = "none"
"""The source that gives no feedback: a plain retry with a new seed (the baseline)."""
FIXED_ORDER = (RETRY, "self_critique", "oracle")
POOLED = "all"


def feedback_tables(attempts: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Every table in `FEEDBACK_TABLES`, keyed by name. `attempts`: whowhen.schema.FEEDBACK
    rows of every feedback shard (possibly none). Reruns an infrastructure failure stopped
    are neither solved nor unsolved: they are left out (the report counts them apart)."""
    attempts = attempts.filter(~infra_mask())
    return {name: run_sql(name, {"attempts": attempts}) for name in FEEDBACK_TABLES}


def source_label(source: str) -> str:
    """A plain retry is not an attributor: say so wherever it is named."""
    return "plain retry (none)" if source == RETRY else source


def _sources(names: list[str]) -> list[str]:
    """Plain retry, self-critique and the oracle first, then the attributors by name."""
    fixed = [s for s in FIXED_ORDER if s in names]
    return fixed + sorted(set(names) - set(fixed))


def _styles(sources: list[str]) -> dict[str, dict[str, object]]:
    """One color and line style per source, the same in every panel: retry grey dotted,
    oracle black dashed (an upper bound), the rest from one palette."""
    others = [s for s in sources if s not in (RETRY, "oracle")]
    palette = sns.color_palette("tab10", n_colors=max(len(others), 1))
    styles: dict[str, dict[str, object]] = {
        s: {"color": palette[i % len(palette)], "ls": "-", "marker": "o"}
        for i, s in enumerate(others)
    }
    styles[RETRY] = {"color": "#777777", "ls": ":", "marker": "s"}
    styles["oracle"] = {"color": "black", "ls": "--", "marker": "^"}
    return styles


def _rounds_panel(
    ax: plt.Axes, frame: pl.DataFrame, sources: list[str], styles: dict, title: str
) -> None:
    """Cumulative success rate per round, one line per source with Wilson error bars
    (sources offset a little on x so the bars do not hide each other)."""
    present = [s for s in sources if s in set(frame["source"])]
    width = 0.3 / max(len(present), 1)
    for i, source in enumerate(present):
        sub = frame.filter(pl.col("source") == source).sort("round")
        x = sub["round"].to_numpy() + (i - (len(present) - 1) / 2) * width
        style = styles[source]
        err = interval_err(sub, "rate")
        err[:, sub["round"].to_numpy() == 0] = 0.0  # 0 by definition there, not an estimate
        ax.errorbar(
            x, sub["rate"].to_numpy(), yerr=err,
            color=style["color"], ls=style["ls"], marker=style["marker"], ms=4, capsize=2,
            lw=1.3, label=source_label(source),
        )  # fmt: skip
    ax.set_xticks(sorted(set(frame["round"])))
    ax.set(ylim=(0, 1.04), title=title)


def feedback_rounds_figure(table: pl.DataFrame, path: str | Path) -> Path:
    """Share of the originally failed tasks solved by each round (cumulative), one line per
    feedback source: the pooled panel first, then one small panel per (benchmark, system)."""
    if table.height == 0:
        return empty_figure(path, "Attribution feedback", "no feedback reruns (no data)")
    sources = _sources(table["source"].unique().to_list())
    styles = _styles(sources)
    pooled = table.filter(pl.col("benchmark") == POOLED)
    pairs = sorted(
        table.filter(pl.col("benchmark") != POOLED).select("benchmark", "system").unique().rows()
    )
    panels = [(POOLED, POOLED), *pairs]
    cols = min(4, len(panels))
    rows = -(-len(panels) // cols)
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(
        rows, cols, figsize=(3.4 * cols + 2.2, 2.9 * rows + 0.6), sharey=True, squeeze=False
    )
    for ax, (bench, system) in zip(axes.ravel(), panels, strict=False):
        sub = table.filter((pl.col("benchmark") == bench) & (pl.col("system") == system))
        n = int(sub["n"].max())
        name = "all pairs (pooled)" if bench == POOLED else f"{bench} / {system}"
        _rounds_panel(ax, sub, sources, styles, f"{name}, n={n}")
    for ax in axes.ravel()[len(panels) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("round (0: the original failure)")
    for ax in axes[:, 0]:
        ax.set_ylabel("solved (cumulative)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize=8,
               frameon=False)  # fmt: skip
    n_all = int(pooled["n"].max()) if pooled.height else 0
    fig.suptitle(
        f"Success after attribution feedback (n={n_all} originally failed tasks; 95% Wilson CI)"
    )
    fig.tight_layout()
    return save_figure(fig, path)


def _accuracy_panel(
    ax: plt.Axes, frame: pl.DataFrame, sources: list[str], styles: dict, cols: tuple[str, str]
) -> None:
    """Feedback step accuracy (x) against the share solved (y), one point per source;
    a source without feedback (plain retry) has no x: a horizontal line with its band."""
    acc, rate = cols
    for i, source in enumerate(sources):
        row = frame.filter(pl.col("source") == source)
        style = styles[source]
        y = float(row[rate][0])
        if row[acc][0] is None:
            ax.axhline(y, color=style["color"], ls=style["ls"], lw=1.4,
                       label=f"{source_label(source)}: {y:.2f}")  # fmt: skip
            ax.axhspan(float(row[f"{rate}_lo"][0]), float(row[f"{rate}_hi"][0]),
                       color=style["color"], alpha=0.08, lw=0)  # fmt: skip
            continue
        ax.errorbar(
            row[acc].to_numpy(), row[rate].to_numpy(),
            xerr=interval_err(row, acc),
            yerr=interval_err(row, rate),
            fmt=str(style["marker"]), color=style["color"], ms=7, capsize=3, label=source,
        )  # fmt: skip
        ax.annotate(source, (float(row[acc][0]), y), xytext=(6, 5 if i % 2 else -12),
                    textcoords="offset points", fontsize=8)  # fmt: skip
    ax.set(xlim=(-0.02, 1.08), ylim=(0, 1.08),
           xlabel="step accuracy of the feedback (names the gold decisive step)")  # fmt: skip


def feedback_accuracy_figure(table: pl.DataFrame, path: str | Path) -> Path:
    """Pooled over the pairs: step accuracy of each source's feedback against the share of
    failed tasks solved, after round 1 (every source on the same tasks) and by the last
    round."""
    frame = table.filter(pl.col("benchmark") == POOLED) if table.height else table
    if frame.height == 0:
        return empty_figure(path, "Feedback accuracy vs success", "no feedback reruns (no data)")
    sources = _sources(frame["source"].to_list())
    styles = _styles(sources)
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(1, 2, figsize=(12.5, 5.0), sharey=True)
    _accuracy_panel(axes[0], frame, sources, styles, ("r1_step_acc", "r1_rate"))
    _accuracy_panel(axes[1], frame, sources, styles, ("step_acc", "final_rate"))
    axes[0].set_title("after round 1 (every source on the same tasks)")
    axes[1].set_title("by the last round")
    axes[0].set_ylabel("share of the failed tasks solved")
    n_fb = dict(zip(frame["source"], frame["n_feedback"], strict=True))
    handles, labels = axes[1].get_legend_handles_labels()
    labels = [f"{lab} (feedback n={n_fb[lab]})" if lab in n_fb else lab for lab in labels]
    fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.9), fontsize=8,
               frameon=False)  # fmt: skip
    fig.suptitle(
        f"Feedback accuracy vs success (pooled, n={int(frame['n_tasks'].max())} failed "
        "tasks; 95% Wilson CI)"
    )
    fig.tight_layout()
    return save_figure(fig, path)


FIGURES = {
    "feedback_rounds": feedback_rounds_figure,
    "feedback_accuracy": feedback_accuracy_figure,
}
"""Table name -> figure function (same names as `FEEDBACK_TABLES`)."""

FINAL_COLUMNS = (
    "source",
    "n_tasks",
    "r1_rate",
    "r1_step_acc",
    "solved",
    "final_rate",
    "final_rate_lo",
    "final_rate_hi",
    "gain_over_retry",
    "n_feedback",
    "agent_acc",
    "step_acc",
    "fb_cost_per_task",
)


def feedback_html(
    tables: Mapping[str, pl.DataFrame], figure_paths: Mapping[str, str | Path]
) -> str:
    """The report's "Attribution feedback" section: both figures with their captions (the
    Snakemake report's .rst files) and the pooled final-round table."""
    acc = tables["feedback_accuracy"]
    pooled = acc.filter(pl.col("benchmark") == POOLED) if acc.height else acc
    order = {s: i for i, s in enumerate(_sources(pooled["source"].to_list()))}
    final = (
        pooled.sort(pl.col("source").replace_strict(order, return_dtype=pl.Int64))
        .select(*FINAL_COLUMNS)
        .with_columns(pl.col("source").replace(RETRY, source_label(RETRY)))
    )
    parts = ["<h2>Attribution feedback</h2>"]
    if final.height == 0:
        parts.append(
            "<p class='note'>No feedback reruns in this run (config <code>feedback</code> "
            "selects no pair, or no pair had a failed rollout).</p>"
        )
    for name in FEEDBACK_TABLES:
        parts += [
            image_html(figure_paths[name], name),
            f"<p class='note'>{html.escape(caption(name))}</p>",
        ]
    if final.height:
        parts += ["<h3>By the last round, all pairs pooled</h3>", table_html(final)]
    return "\n".join(parts) + "\n"
