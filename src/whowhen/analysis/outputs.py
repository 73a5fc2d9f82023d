"""The tables and figures the analysis stage writes, by name. The workflow's analysis rule
lists them as outputs when Snakemake reads the rules (every `snakemake` start, and every
job on a cluster): they are kept here, apart from the drawing code, so that reading the
names loads no plotting library."""

from __future__ import annotations

DATASET_TABLES = ("dataset_stats", "length_distribution", "funnel", "recovery", "drift")
"""The dataset-side tables and figures, in report order."""
ATTRIBUTION_TABLES = (
    "cross_modality",
    "cost_performance",
    "protocols",
    "tolerance",
    "length_accuracy",
    "delta_step",
    "mode_confusion",
)
"""SQL file names under `sql/`, and the names of the tables and figures built from them."""
FEEDBACK_TABLES = ("feedback_rounds", "feedback_accuracy")
"""SQL file names under `sql/`, and the names of the tables and figures built from them."""

TABLES = (*DATASET_TABLES, *ATTRIBUTION_TABLES, *FEEDBACK_TABLES)
"""Tables written to results/analysis/tables/<name>.parquet (and read by the notebooks)."""
FIGURES = {
    "dataset_stats": "Dataset",
    "length_distribution": "Dataset",
    "funnel": "Dataset construction",
    "recovery": "Dataset construction",
    "drift": "Dataset construction",
    "modes": "Natural failures",
    "accuracy": "Attribution",
    **dict.fromkeys(ATTRIBUTION_TABLES, "Attribution"),
    **dict.fromkeys(FEEDBACK_TABLES, "Attribution feedback"),
}
"""Figure name (reports/figures/<name>.png) -> category in the Snakemake report."""
