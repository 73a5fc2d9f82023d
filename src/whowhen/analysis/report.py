"""The HTML report's sections and their assembly into one self-contained file (figures
inlined, no template engine). The pieces they share are in `html.py`."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import polars as pl

from whowhen.analysis.attributor_info import ATTRIBUTOR_KEYS
from whowhen.analysis.breakdowns import BOOTSTRAPPED
from whowhen.analysis.html import caption, image_html, table_html
from whowhen.analysis.outputs import ATTRIBUTION_TABLES, DATASET_TABLES
from whowhen.analysis.viewer import page_name
from whowhen.attribution.kinds import in_section

_CSS = """body{font-family:system-ui,sans-serif;max-width:80rem;margin:2rem auto;color:#222;
padding:0 1rem}table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;
padding:.25rem .6rem;text-align:right}th{background:#f3f3f3}td:first-child,th:first-child
{text-align:left}.note{color:#555;font-size:.9rem}.wide{overflow-x:auto}
img{max-width:100%;height:auto}summary{cursor:pointer;color:#345}"""


_EMPTY = (
    "<p><strong>Nothing to label:</strong> the built dataset is empty (no successful "
    "rollout gave an injected run that failed); the tables below have no rows for it. "
    "The funnel says where the injections went.</p>"
)


def render_report(
    metrics: dict[str, Any],
    accuracy: pl.DataFrame,
    funnel: pl.DataFrame,
    expected: pl.DataFrame,
    figure: str | Path,
    natural: list[str] | None = None,
    config_summary: str = "",
    built: list[str] | None = None,
) -> str:
    """Dataset summary, injection funnel, and accuracy (exact and Who&When-compatible)."""
    ds, inj = metrics["dataset"], metrics["injection"]
    fidelity = inj.get("prefix_fidelity")
    per_dataset = accuracy.filter(pl.col("split") == "all").select(
        "attributor",
        "dataset",
        "n",
        "agent_acc",
        "step_acc",
        "step_acc_pm1",
        "tolerance",
        "step_acc_pmk",
        "step_acc_lo",
        "step_acc_hi",
        "agent_acc_substring",
        "step_acc_substring",
    )
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>whowhen report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>whowhen: failure attribution report</h1>",
        f"<p class='note'>{html.escape(config_summary)}</p>",
        "<h2>Datasets</h2>",
        f"<p>{ds['items']} labelled failures ({ds['train']} train / {ds.get('dev', 0)} dev / "
        f"{ds['test']} test, split by task).</p>",
        *([] if ds["items"] else [_EMPTY]),
        table_html(expected.filter(pl.col("split") == "all").select("dataset", "n")),
        *(natural or []),
        "<h2>Built dataset: injection funnel</h2>",
        f"<p>{inj['injections']} injections: {inj['flipped']} flipped (kept, labelled), "
        f"{inj['recovered']} recovered by the system, {inj['invalid']} invalid. Prefix "
        f"fidelity of the warm start: "
        f"{'n/a' if fidelity is None else f'{100 * fidelity:.1f}%'}.</p>",
        table_html(funnel),
        *(built or []),
        "<h2>Attribution accuracy</h2>",
        "<p class='note'>Exact scoring: agent names equal and step indices equal; a missing "
        "prediction counts as wrong. Intervals are Wilson 95%. The <code>*_substring</code> "
        "columns reproduce the official Who&amp;When scorer (substring match: gold step 1 "
        "matches a predicted 10), for comparison with published numbers only.</p>",
        image_html(figure, "attribution accuracy per attributor"),
        table_html(per_dataset),
        "<h3>Random baseline, expected accuracy (analytic)</h3>",
        table_html(expected.filter(pl.col("split") == "all").drop("split")),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def natural_failures_html(
    overview: pl.DataFrame,
    modes: pl.DataFrame | None = None,
    modes_figure: str | Path | None = None,
    check: pl.DataFrame | None = None,
    agreement: pl.DataFrame | None = None,
    candidates: pl.DataFrame | None = None,
) -> list[str]:
    """The report's natural-failure section: rollouts and failures per pair, the modes of
    the decisive errors (table and heatmap), replay and classifier checks, candidates."""
    parts = [
        "<h2>Natural failures of the rollouts</h2>",
        "<p class='note'>Rollouts per (benchmark, system) with the seeded slip model on; "
        "the failed ones are the natural failures the taxonomy is mined from. "
        "<code>n_slips</code>: slips the slip model made (logged out of band); "
        "<code>n_recovered</code>: runs that slipped and still succeeded.</p>",
        table_html(overview),
    ]
    if check is not None:
        parts += [
            "<h3>Counterfactual replay</h3>",
            "<p class='note'>Each failed run is warm-started with one agent action replaced "
            "by the reference policy's action for the same history; the first correction "
            "that flips the outcome is the decisive step. <code>n_one_slip_found</code>: "
            "failures with exactly one logged slip whose decisive step is that slip's step; "
            "the rest are runs where the corrected continuation slipped again.</p>",
            table_html(check),
        ]
    if modes is not None:
        source = modes["source"][0] if modes.height else "replay"
        parts += [
            f"<h3>Failure modes of the decisive errors (source: {html.escape(source)})</h3>",
            *([image_html(modes_figure, "mode shares per pair")] if modes_figure else []),
            table_html(modes),
        ]
    if agreement is not None:
        parts += [
            "<h3>Offline mode classifier against the slip log</h3>",
            "<p class='note'>Per taxonomy category of the logged slip at the decisive step: "
            "how often the classifier, which sees only the erroneous and the corrected "
            "action, names the slip's mode.</p>",
            table_html(agreement),
        ]
    if candidates is not None:
        parts += [
            "<h3>Candidate new modes</h3>",
            "<p class='note'>Clusters of decisive errors no taxonomy mode fits.</p>",
            table_html(candidates.drop("run_ids"))
            if candidates.height
            else "<p>None: every decisive error fits a taxonomy mode.</p>",
        ]
    return parts


def built_dataset_html(
    composition: pl.DataFrame,
    rerollout: pl.DataFrame,
    recovery: pl.DataFrame,
    accuracy: pl.DataFrame,
    leakage: pl.DataFrame | None = None,
) -> list[str]:
    """The built dataset's audit: what it holds, warm start against re-rollout, recovery
    by mode, the shortcut predictors (the attributors registered for section "shortcuts";
    `accuracy`: scored on the test split only) and the
    dataset stage's leakage audit."""
    shortcuts = accuracy.filter(
        pl.col("attributor").is_in(in_section("shortcuts"))
        & (pl.col("dataset") == "all")
        & (pl.col("split") == "all")
    ).select("attributor", "n", "agent_acc", "step_acc", "step_acc_pm1", "step_acc_pmk")
    return [
        "<h3>Composition</h3>",
        "<p class='note'>Labelled failures per modality and topology; "
        "<code>max_top_agent_share</code>: the largest share one agent has of a system's gold "
        "agents (what always naming that agent would score).</p>",
        table_html(composition),
        "<h3>Warm start against re-rollout</h3>",
        "<p class='note'>Warm start re-executes the recorded prefix; re-rollout regenerates it "
        "with the agents (as prior work built injected runs). <code>rerollout_drift</code>: "
        "regenerated prefixes that differ from the successful run; "
        "<code>rerollout_label_differs</code>: re-rollouts whose status differs, or whose "
        "drifted prefix fails even without the injection (the label would be wrong).</p>",
        table_html(rerollout),
        "<h3>Recovery by mode</h3>",
        table_html(recovery),
        "<h3>Shortcut audit (built dataset, test split)</h3>",
        "<p class='note'>Predictors that never read the trajectory's content: uniform random, "
        "first/last agent step, and three fitted on the train split (the most blamed agent, "
        "the typical relative position, position as a function of length). High scores here "
        "would mean the labels can be guessed without attribution.</p>",
        table_html(shortcuts),
        *([] if leakage is None else leakage_html(leakage)),
    ]


def leakage_html(leakage: pl.DataFrame) -> list[str]:
    """The dataset stage's leakage audit: each probe beside random, leaks named."""
    found = leakage.filter(pl.col("leak"))
    verdict = (
        "No probe beats random by more than the margin."
        if found.height == 0
        else f"{found.height} probe(s) beat random by more than the margin: "
        + ", ".join(f"{r['probe']} ({r['subset']})" for r in found.iter_rows(named=True))
        + "."
    )
    return [
        "<h3>Leakage audit (built dataset, test split)</h3>",
        "<p class='note'>Can the gold step be found without understanding the run? "
        "Position-only predictors; a classifier that reads one agent step at a time (hashed "
        "word and character n-grams, logistic regression fitted on train), on every item and "
        "on items whose gold is not the last agent step; the sibling diff (first step where an "
        "item differs from another item injected into the same run); the best other column at "
        "reproducing the label. Exact-step accuracy with its Wilson 95% interval, beside the "
        "uniform random baseline's expectation and its 95% interval. "
        f"{html.escape(verdict)}</p>",
        table_html(leakage.drop("family", "correct", "margin")),
    ]


def learned_html(accuracy: pl.DataFrame, built_benchmarks: list[str]) -> list[str]:
    """The attributors registered for this table (section "learned": tracer-lite, fitted on
    the built train split, the error-signal heuristic and the replay oracle): on every test
    item, and on each imported dataset (synthetic -> real transfer; the oracle cannot
    replay imported runs)."""
    rows = accuracy.filter(
        pl.col("attributor").is_in(in_section("learned"))
        & (pl.col("split") == "test")
        & ~pl.col("dataset").is_in(built_benchmarks)
    ).select("attributor", "dataset", "n", "agent_acc", "step_acc", "step_acc_pm1")
    return [
        "<h3>Trained attributor, heuristic and oracle (test split)</h3>",
        "<p class='note'><code>dataset=all</code>: every test item (built and imported); "
        "imported datasets are shown on their own. tracer-lite never sees test labels.</p>",
        table_html(rows.sort("attributor", "dataset")),
    ]


def _figure(name: str, path: str | Path) -> list[str]:
    return [image_html(path, name), f"<p class='note'>{html.escape(caption(name))}</p>"]


def figures_html(
    figures: dict[str, str | Path], table: pl.DataFrame, split: str, part: str
) -> list[str]:
    """The report's figure sections. part 'dataset': Table 1 (`table`: dataset_stats) and
    the construction figures; part 'attribution': the attribution figures (`table`:
    cost_performance, shown beside its figure)."""
    if part == "dataset":
        stats = table.select(
            [c for c in table.columns if c not in ("agent_steps_max", "n_agents_mean")]
        )
        parts = ["<h2>The benchmark (Table 1)</h2>", table_html(stats)]
        for name in DATASET_TABLES:
            parts += _figure(name, figures[name])
        return parts
    parts = [f"<h2>Attribution figures ({html.escape(split)} split)</h2>"]
    for name in ATTRIBUTION_TABLES:
        parts += _figure(name, figures[name])
        if name == "cost_performance":
            rows = table.filter(pl.col("split") == split).drop("split")
            parts.append(table_html(rows))
    return parts


def with_interval(value: str) -> pl.Expr:
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
    if metrics.height == 0:
        return ["<h2>Attribution metrics</h2>", "<p>No predictions to score.</p>"]
    fmt = [with_interval(m) for m in BOOTSTRAPPED]
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
        wide = frame.with_columns(with_interval(pivot)).pivot(
            "attributor", index="group", values=pivot, maintain_order=True
        )
        parts += [
            f"<p class='note'>{html.escape(pivot)} [95% CI] per {html.escape(key)}.</p>",
            table_html(sizes.join(wide, on="group", how="left", maintain_order="left")),
        ]
    return parts


def trajectories_html(
    items: pl.DataFrame, runs: pl.DataFrame, split: str, per_benchmark: int = 3
) -> list[str]:
    """Links into the trajectory viewer: per dataset, the `split` items the fewest
    attributors got right (exact step), each opening its page at the gold step."""
    scored = (
        items.filter(pl.col("split") == split)
        .group_by("run_id", "dataset", "system", "modality", "decisive_agent", "decisive_step")
        .agg(
            pl.col("step_ok").sum().alias("step_right"),
            pl.col("agent_ok").sum().alias("agent_right"),
            pl.len().alias("attributors"),
        )
        .sort("dataset", "step_right", "agent_right", "run_id")
    )
    hardest = scored.group_by("dataset", maintain_order=True).head(per_benchmark)
    rows = []
    for r in hardest.iter_rows(named=True):
        href = f"trajectories/{page_name(r['run_id'])}.html#step-{r['decisive_step']}"
        cells = [
            f"<a href='{html.escape(href)}'>{html.escape(r['run_id'])}</a>",
            *(html.escape(str(r[k])) for k in ("dataset", "system", "modality")),
            html.escape(f"{r['decisive_agent']} @ {r['decisive_step']}"),
            f"{r['step_right']}/{r['attributors']}",
            f"{r['agent_right']}/{r['attributors']}",
        ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(
        f"<th>{h}</th>"
        for h in ("trajectory", "dataset", "system", "modality", "gold", "step right",
                  "agent right")
    )  # fmt: skip
    return [
        "<h2>Trajectories</h2>",
        "<p>Every labelled trajectory has a page: <a href='trajectories/index.html'>"
        "trajectory index</a>. Below, per dataset, the "
        f"{html.escape(split)} items the fewest attributors got right; each link opens the "
        "page at the gold step, with every attributor's predicted step marked.</p>",
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>",
    ]
