"""Analysis stage: DuckDB SQL over the Parquet outputs, seaborn figures, the HTML report.

The package itself loads no plotting library (the figures live in `figures` and the
modules beside it): the workflow's rules read the analysis outputs' names
(`whowhen.analysis.outputs`) every time Snakemake starts."""

from whowhen.analysis.report import natural_failures_html, render_report
from whowhen.analysis.scores import accuracy, funnel, metrics, random_expected, run_sql

__all__ = [
    "accuracy",
    "funnel",
    "metrics",
    "natural_failures_html",
    "random_expected",
    "render_report",
    "run_sql",
]
