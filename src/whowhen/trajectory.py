"""Readable plain-text rendering of one trajectory, with gold and predicted steps marked."""

from __future__ import annotations

import textwrap

import polars as pl

from whowhen.schema import step_label


def render_trajectory(
    run: dict,
    steps: pl.DataFrame,
    label: dict | None,
    predictions: pl.DataFrame,
    width: int = 100,
    max_lines: int = 6,
    tool_speakers: list[str] | None = None,
) -> str:
    """`run` and `label` are rows (dicts); `predictions` holds this run's predictions;
    `tool_speakers` (an import's) are named in the head: their steps read as observations."""
    head = [
        f"run {run['run_id']}  {run['benchmark']}"
        + (f"/{run['subset']}" if run.get("subset") else "")
        + f"  system={run['system']}  origin={run['origin']}  success={run['success']}",
    ]
    if run.get("question"):
        head.append("question: " + textwrap.shorten(run["question"], width - 10))
    if run.get("gold_answer") is not None:
        head.append(f"gold answer: {run['gold_answer']}   final answer: {run['final_answer']}")
    if tool_speakers:
        head.append("tool output, read as observations: " + ", ".join(tool_speakers))
    if label:
        what = label.get("mode") or label.get("reason") or ""
        head.append(
            f"GOLD: agent={label['decisive_agent']} step={label['decisive_step']}"
            + (f"  ({textwrap.shorten(what, 60)})" if what else "")
        )
    marks: dict[int, list[str]] = {}
    if label:
        marks.setdefault(label["decisive_step"], []).append("<== GOLD")
    for p in predictions.sort("attributor").iter_rows(named=True):
        head.append(f"predicted by {p['attributor']}: agent={p['agent']} step={p['step']}")
        if p["step"] is not None:
            marks.setdefault(p["step"], []).append(f"<== {p['attributor']}")
    lines = [*head, "-" * width]
    for s in steps.sort("step").iter_rows(named=True):
        tag = f"[{s['step']:>3}] {step_label(s)}"
        if marks.get(s["step"]):
            tag += "  " + " ".join(marks[s["step"]])
        lines.append(tag)
        body = s["content"] + (f"\n-> {s['tool']}({s['tool_args'] or ''})" if s["tool"] else "")
        wrapped = [w for para in body.splitlines() for w in textwrap.wrap(para, width - 6) or [""]]
        extra = len(wrapped) - max_lines
        lines += ["      " + w for w in wrapped[:max_lines]]
        if extra > 0:
            lines.append(f"      ... ({extra} more lines)")
    return "\n".join(lines)
