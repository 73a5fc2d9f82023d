"""The hand-built metrics fixture (five runs, three attributors) whose every number the
metrics and figure tests compute by hand, and typed tables for more such fixtures."""

from __future__ import annotations

from typing import Any

import polars as pl

from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, to_arrow

A, B, BASE = "mock_all_at_once", "gpt_all_at_once", "first_agent_step"


def typed_table(rows: list[dict[str, Any]], spec, defaults: dict[str, Any]) -> pl.DataFrame:
    return pl.from_arrow(to_arrow([defaults | r for r in rows], spec))


def runs_table(rows: list[dict[str, Any]]) -> pl.DataFrame:
    d = {"task_id": "t", "policy": "p", "seed": 0, "origin": "injected", "success": False}
    return typed_table([{"n_steps": 1} | r for r in rows], RUNS, d)


def steps_table(agent_steps: dict[str, int]) -> pl.DataFrame:
    """A user task, then `n` agent actions each followed by an observation (not counted)."""
    rows = []
    for run_id, n in agent_steps.items():
        rows.append({"run_id": run_id, "step": 0, "actor": "user", "kind": "message"})
        for i in range(n):
            rows.append({"run_id": run_id, "step": 2 * i + 1, "actor": "a", "kind": "action"})
            rows.append({"run_id": run_id, "step": 2 * i + 2, "actor": "a", "kind": "observation"})
    return typed_table(rows, STEPS, {"content": "x"})


def preds_table(rows: list[dict[str, Any]]) -> pl.DataFrame:
    d = {"parse_ok": True, "tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0, "latency_s": 0.0}
    return typed_table(rows, PREDICTIONS, d)


RUNS_F = runs_table(
    [
        dict(run_id="r1", benchmark="arith", modality="text", category="stem",
             system="sv", topology="multi"),
        dict(run_id="r2", benchmark="arith", modality="text", category="stem",
             system="sv", topology="multi"),
        dict(run_id="r3", benchmark="chart", modality="image", category="chart_qa",
             system="react", topology="single"),
        dict(run_id="r4", benchmark="chart", modality="image", category="chart_qa",
             system="react", topology="single"),
        dict(run_id="r5", benchmark="wnw", subset="Hand", modality="text", category=None,
             system="x", topology="multi"),
    ]
)  # fmt: skip
STEPS_F = steps_table({"r1": 3, "r2": 6, "r3": 12, "r4": 0, "r5": 25})
LABELS_F = typed_table(
    [
        dict(run_id="r1", decisive_agent="solver", decisive_step=1, mode="a.x", split="train"),
        dict(run_id="r2", decisive_agent="verifier", decisive_step=4, mode="r.y", split="test"),
        dict(run_id="r3", decisive_agent="assistant", decisive_step=3, mode=None, split="test"),
        dict(run_id="r4", decisive_agent="assistant", decisive_step=7, mode="a.x", split="dev"),
        dict(run_id="r5", decisive_agent="Orchestrator", decisive_step=2, mode=None, split=None),
    ],
    LABELS,
    {"source": "injection"},
)
PREDS_F = preds_table(
    [
        # A: r1 agent right, step 10 against gold 1 (wrong: exact, not substring)
        dict(run_id="r1", attributor=A, agent="solver", step=10, mode="a.x",
             tokens_in=100, tokens_out=20, cost_usd=0.01, latency_s=1.0),
        dict(run_id="r2", attributor=A, agent="verifier", step=4, mode="r.z",
             tokens_in=200, tokens_out=30, cost_usd=0.02, latency_s=2.0),
        dict(run_id="r3", attributor=A, agent="assistant", step=5,
             tokens_in=50, tokens_out=10, cost_usd=0.005, latency_s=0.5),
        # unparsed: its agent/step/mode would all be right, but it counts as wrong
        dict(run_id="r4", attributor=A, agent="assistant", step=7, mode="a.x", parse_ok=False,
             tokens_in=80, tokens_out=0, cost_usd=0.004, latency_s=3.0),
        # (A has no row for r5: missing counts as wrong)
        dict(run_id="r1", attributor=B, agent="solver", step=1,
             tokens_in=300, tokens_out=40, cost_usd=0.03, latency_s=4.0),
        dict(run_id="r1", attributor=BASE, agent="solver", step=1),
        dict(run_id="r2", attributor=BASE, agent="solver", step=1),
        dict(run_id="r3", attributor=BASE, agent="assistant", step=1),
        dict(run_id="r4", attributor=BASE, agent=None, step=None, parse_ok=False),
        dict(run_id="r5", attributor=BASE, agent="Orchestrator", step=1),
    ]
)  # fmt: skip
