"""Seaborn figures from SQL results. Headless backend; no timestamp in PNG metadata."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import polars as pl
import seaborn as sns

from whowhen.io import atomic_path


def save_figure(fig: plt.Figure, path: str | Path, dpi: int = 110) -> Path:
    """Write a PNG atomically without the Software tag, so reruns are byte-identical."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, metadata={"Software": None}, bbox_inches="tight")
    plt.close(fig)
    return Path(path)


def interval_err(frame: pl.DataFrame, value: str) -> np.ndarray:
    """Asymmetric error bars (2, n) from `<value>_lo`/`<value>_hi` (the SQL tables' Wilson
    bounds), never negative."""
    v = frame[value].fill_null(0.0).to_numpy()
    lo = frame[f"{value}_lo"].fill_null(0.0).to_numpy()
    hi = frame[f"{value}_hi"].fill_null(0.0).to_numpy()
    return np.vstack([np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)])


def empty_figure(path: str | Path, title: str, message: str) -> Path:
    """A figure that says there is nothing to draw (a report must never lose a section)."""
    fig, ax = plt.subplots(figsize=(6, 2.4))
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=11, color="#555")
    ax.set(title=title, xticks=[], yticks=[])
    return save_figure(fig, path)


def accuracy_figure(
    acc: pl.DataFrame, path: str | Path, dataset: str = "all", split: str = "all"
) -> Path:
    """Agent and step accuracy per attributor, with Wilson 95% intervals and n."""
    rows = acc.filter((pl.col("split") == split) & (pl.col("dataset") == dataset)).sort(
        "attributor"
    )
    long = pl.concat(
        [
            rows.select(
                "attributor",
                pl.lit(level).alias("level"),
                pl.col(f"{level}_acc").alias("acc"),
                pl.col(f"{level}_acc_lo").alias("lo"),
                pl.col(f"{level}_acc_hi").alias("hi"),
            )
            for level in ("agent", "step")
        ]
    )
    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    sns.barplot(data=long.to_pandas(), x="attributor", y="acc", hue="level", ax=ax, errorbar=None)
    for bar_group, level in zip(ax.containers, ("agent", "step"), strict=False):
        sub = long.filter(pl.col("level") == level)
        for bar, lo, hi in zip(bar_group, sub["lo"], sub["hi"], strict=False):
            x = bar.get_x() + bar.get_width() / 2
            ax.errorbar(
                x,
                bar.get_height(),
                yerr=[[max(0.0, bar.get_height() - lo)], [max(0.0, hi - bar.get_height())]],
                color="black",
                capsize=3,
                lw=1,
            )
    n = int(rows["n"].max()) if rows.height else 0
    ax.legend(title=None, loc="upper right", ncols=2, frameon=False)
    ax.set(
        ylim=(0, 1.12),
        xlabel="attributor",
        ylabel="accuracy",
        title=f"Attribution accuracy ({dataset} datasets, {split} splits, n={n}; 95% Wilson CI)",
    )
    fig.tight_layout()
    return save_figure(fig, path)


def modes_figure(modes: pl.DataFrame, path: str | Path) -> Path:
    """Heatmap of mode shares among natural failures: one row per (benchmark, system)."""
    sns.set_theme(style="white")
    frame = modes.with_columns((pl.col("benchmark") + " / " + pl.col("system")).alias("pair")).sort(
        "pair", "mode"
    )
    if frame.height:
        table = frame.pivot(on="mode", index="pair", values="share").fill_null(0.0)
        cols = sorted(c for c in table.columns if c != "pair")
        data = table.select("pair", *cols).to_pandas().set_index("pair")
    else:
        data = pd.DataFrame({"(no classified failures)": [0.0]}, index=["-"])
    fig, ax = plt.subplots(figsize=(2.2 + 0.55 * data.shape[1], 1.6 + 0.32 * data.shape[0]))
    sns.heatmap(data, annot=True, fmt=".2f", cmap="Blues", vmin=0, vmax=1, cbar=False, ax=ax)
    ax.set(xlabel="mode", ylabel="", title="Modes of the decisive errors (share per pair)")
    ax.tick_params(axis="x", labelrotation=60)
    fig.tight_layout()
    return save_figure(fig, path, dpi=100)
