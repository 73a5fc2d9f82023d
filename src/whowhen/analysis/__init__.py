"""Analysis stage: DuckDB SQL over the Parquet outputs, seaborn figures, the HTML report."""

from whowhen.analysis.figures import accuracy_figure, modes_figure
from whowhen.analysis.report import natural_failures_html, render_report
from whowhen.analysis.scores import accuracy, funnel, metrics, random_expected, run_sql

__all__ = [
    "accuracy",
    "accuracy_figure",
    "funnel",
    "metrics",
    "modes_figure",
    "natural_failures_html",
    "random_expected",
    "render_report",
    "run_sql",
]
