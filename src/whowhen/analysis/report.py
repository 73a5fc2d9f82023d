"""The rendered HTML report: one self-contained file (figures inlined), no template engine."""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

import polars as pl

_CSS = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;color:#222}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.25rem .6rem;
text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
.note{color:#555;font-size:.9rem}"""


def table_html(frame: pl.DataFrame, digits: int = 3) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    body = []
    for row in frame.iter_rows():
        cells = "".join(
            f"<td>{html.escape(f'{v:.{digits}f}' if isinstance(v, float) else str(v))}</td>"
            for v in row
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def image_html(path: str | Path, alt: str) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}" width="650">'


def render_report(
    metrics: dict[str, Any],
    accuracy: pl.DataFrame,
    funnel: pl.DataFrame,
    figure: str | Path,
    config_summary: str,
) -> str:
    ds, inj = metrics["dataset"], metrics["injection"]
    fidelity = inj.get("prefix_fidelity")
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>whowhen report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>whowhen: failure attribution report</h1>",
        f"<p class='note'>{html.escape(config_summary)}</p>",
        "<h2>Dataset</h2>",
        f"<p>{ds['items']} labelled failures ({ds['train']} train / {ds['test']} test) from "
        f"{inj['injections']} injections: {inj['flipped']} flipped, {inj['recovered']} "
        f"recovered by the system, {inj['invalid']} invalid. Prefix fidelity of the warm start: "
        f"{'n/a' if fidelity is None else f'{100 * fidelity:.1f}%'}.</p>",
        "<h2>Injection funnel</h2>",
        table_html(funnel),
        "<h2>Attribution accuracy</h2>",
        "<p class='note'>Exact agent and step match; a missing prediction counts as wrong. "
        "Intervals are Wilson 95%.</p>",
        image_html(figure, "attribution accuracy per attributor"),
        table_html(
            accuracy.select(
                "attributor",
                "split",
                "n",
                "agent_acc",
                "step_acc",
                "step_acc_pm1",
                "tolerance",
                "step_acc_pmk",
                "step_acc_lo",
                "step_acc_hi",
            )
        ),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
