"""The analysis stage at paper scale: every query, figure and the report on 12,326 labelled
trajectories with realistic lengths and predictions from 6 attributors.

    python perf/analysis_scale.py [--items 12326] [--seed 0] [--keep DIR]

The dataset is synthetic (drawn from a seeded generator: no model runs here) but has the
shape of the published benchmarks: text, image and video runs of single- and multi-agent
systems, 3-130 steps with a long tail (Who&When's hand-crafted runs reach 130), gold
modes from the taxonomy, an injection funnel, and six attributors: two baselines, a
trained one and three LLM-protocol attributors priced from the packaged price table (one
open-weight). The timed part is exactly the pipeline's `analysis.stage.stage()` over
Parquet files, as Snakemake runs it (reading inputs, SQL, bootstrap intervals, figures,
report); generation is timed apart. Peak memory is the process's maximum RSS.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import yaml

from whowhen.analysis.stage import FIGURES, TABLES, stage
from whowhen.defaults import filled, section_defaults
from whowhen.models.prices import DEFAULT_PRICES
from whowhen.schema import (
    AGREEMENT,
    CANDIDATES,
    CONTINUATIONS,
    LABELS,
    MODE_OVERVIEW,
    OVERVIEW,
    PREDICTIONS,
    REPLAY_CHECK,
    RUNS,
    STEPS,
    TableSpec,
    empty,
    write_table,
)

SYSTEMS = {  # system -> (topology, agents)
    "react": ("single", ["assistant"]),
    "code_act": ("single", ["assistant"]),
    "solver_verifier": ("multi", ["solver", "verifier"]),
    "orchestrator": ("multi", ["orchestrator", "reader", "calculator", "verifier"]),
    "pipeline": ("multi", ["coder", "tester", "reviewer"]),
}
BENCHMARKS = {  # benchmark -> (modality, category)
    "math": ("text", "stem"),
    "code": ("text", "code"),
    "web": ("text", "web"),
    "docs": ("text", "document_qa"),
    "charts": ("image", "chart_qa"),
    "scenes": ("image", "visual_qa"),
    "events": ("video", "video_qa"),
}
LLM = {  # attributor -> (model id in the price table, protocol, accuracy, calls per step)
    "gpt-4.1_all_at_once": ("openai/gpt-4.1", "all_at_once", 0.45, 0.0),
    "gemini-2.5_step_by_step": ("gemini/gemini-2.5-flash", "step_by_step", 0.40, 0.5),
    "smollm2_binary_search": ("openai-compatible/smollm2-135m", "binary_search", 0.15, 0.0),
    "gpt-4.1-mini_hybrid": ("openai/gpt-4.1-mini", "hybrid", 0.35, 0.25),
}


def generate(n: int, seed: int) -> dict[str, pl.DataFrame]:
    """Runs, steps, labels, predictions and continuations of `n` labelled trajectories."""
    rng = np.random.default_rng(seed)
    modes = [m["id"] for m in yaml.safe_load(Path("config/taxonomy.yaml").read_text())["modes"]]
    systems, benches = list(SYSTEMS), list(BENCHMARKS)
    sys_i = rng.integers(0, len(systems), n)
    bench_i = rng.integers(0, len(benches), n)
    # agent actions per run: log-normal, median ~9, long tail to 65 (x2 with observations)
    n_act = np.clip(np.round(rng.lognormal(np.log(9), 0.7, n)), 2, 65).astype(int)
    run_ids = [f"syn-{i:05d}" for i in range(n)]
    split = rng.choice(["train", "dev", "test"], n, p=[0.6, 0.2, 0.2])
    runs = pl.DataFrame(
        {
            "run_id": run_ids,
            "benchmark": [benches[b] for b in bench_i],
            "task_id": [f"t{i % 3000}" for i in range(n)],
            "question": ["What is the answer?"] * n,
            "modality": [BENCHMARKS[benches[b]][0] for b in bench_i],
            "category": [BENCHMARKS[benches[b]][1] for b in bench_i],
            "system": [systems[s] for s in sys_i],
            "topology": [SYSTEMS[systems[s]][0] for s in sys_i],
            "policy": "scripted",
            "seed": seed,
            "origin": "injected",
            "success": False,
            "n_steps": 2 * n_act + 1,
        }
    )
    # steps: the user's task, then (action, observation) pairs; actors cycle the agents
    run_col = np.repeat(np.arange(n), 2 * n_act + 1)
    starts = np.concatenate([[0], np.cumsum(2 * n_act + 1)[:-1]])
    step_col = np.arange(run_col.size) - np.repeat(starts, 2 * n_act + 1)
    agents = [SYSTEMS[systems[s]][1] for s in sys_i]
    kind = np.where(step_col == 0, "message", np.where(step_col % 2 == 1, "action", "observation"))
    actor = [
        "user" if k == "message" else agents[r][((s - 1) // 2) % len(agents[r])]
        for r, s, k in zip(run_col.tolist(), step_col.tolist(), kind.tolist(), strict=True)
    ]
    steps = pl.DataFrame(
        {
            "run_id": [run_ids[r] for r in run_col.tolist()],
            "step": step_col,
            "actor": actor,
            "kind": kind,
            "content": "A step of the trajectory with a tool call and its arguments.",
        }
    )
    # gold: a uniformly drawn agent action
    gold_k = rng.integers(0, n_act)
    gold_step = 2 * gold_k + 1
    gold_agent = [agents[i][gold_k[i] % len(agents[i])] for i in range(n)]
    gold_mode = rng.choice(modes, n)
    labels = pl.DataFrame(
        {
            "run_id": run_ids,
            "decisive_agent": gold_agent,
            "decisive_step": gold_step,
            "mode": gold_mode,
            "category": [m.split(".")[0] for m in gold_mode],
            "source": "injection",
            "split": split,
        }
    )
    preds = [_baseline(run_ids, agents, n_act, rng)]
    preds.append(_predict("tracer_lite", 0.7, run_ids, agents, n_act, gold_k, gold_mode, rng))
    for name, (model, _protocol, acc, _calls) in LLM.items():
        frame = _predict(name, acc, run_ids, agents, n_act, gold_k, gold_mode, rng, modes)
        preds.append(frame.with_columns(_usage(name, model, n_act, rng)))
    continuations = _funnel(run_ids, runs, modes, rng)
    return {
        "runs": runs,
        "steps": steps,
        "labels": labels,
        "predictions": pl.concat(preds, how="diagonal_relaxed"),
        "continuations": continuations,
    }


def _baseline(run_ids, agents, n_act, rng) -> pl.DataFrame:
    k = rng.integers(0, n_act)
    return pl.DataFrame(
        {
            "run_id": run_ids,
            "attributor": "random",
            "agent": [agents[i][k[i] % len(agents[i])] for i in range(len(run_ids))],
            "step": 2 * k + 1,
            "parse_ok": True,
        }
    )


def _predict(name, acc, run_ids, agents, n_act, gold_k, gold_mode, rng, modes=None):
    """Right with probability `acc` (less on long runs), else off by a few steps."""
    p = acc * np.exp(-(n_act - 2) / 80)
    right = rng.random(len(run_ids)) < p
    off = rng.integers(-4, 5, len(run_ids))
    k = np.where(right, gold_k, np.clip(gold_k + off, 0, n_act - 1))
    parse_ok = rng.random(len(run_ids)) > (0.03 if modes else 0.0)
    mode = None
    if modes:
        mode = np.where(rng.random(len(run_ids)) < 0.5, gold_mode, rng.choice(modes, len(run_ids)))
    return pl.DataFrame(
        {
            "run_id": run_ids,
            "attributor": name,
            "agent": [agents[i][k[i] % len(agents[i])] for i in range(len(run_ids))],
            "step": 2 * k + 1,
            "mode": mode,
            "parse_ok": parse_ok,
        }
    )


def _usage(name: str, model: str, n_act: np.ndarray, rng) -> list[pl.Expr]:
    """Tokens grow with length (~180 per step, per call); cost from the packaged price table."""
    prices = yaml.safe_load(DEFAULT_PRICES.read_text())["models"][model]
    _m, protocol, _a, per_step = LLM[name]
    calls = np.maximum(1, np.round(1 + per_step * 2 * n_act)).astype(int)
    if protocol == "binary_search":
        calls = np.ceil(np.log2(2 * n_act + 1)).astype(int)
    tokens_in = (180 * (2 * n_act + 1) * np.where(calls > 1, calls / 2, 1)).astype(int)
    tokens_out = (60 * calls).astype(int)
    cost = (tokens_in * prices["input"] + tokens_out * prices["output"]) / 1e6
    latency = 0.4 * calls + rng.random(len(n_act))
    return [
        pl.Series("calls", calls),
        pl.Series("tokens_in", tokens_in),
        pl.Series("tokens_out", tokens_out),
        pl.Series("cost_usd", cost),
        pl.Series("latency_s", latency),
    ]


def _funnel(run_ids, runs: pl.DataFrame, modes, rng) -> pl.DataFrame:
    """Every label is a flipped injection; 60% more were recovered or invalid."""
    n = len(run_ids)
    extra = int(0.6 * n)
    status = ["flipped"] * n + list(rng.choice(["recovered", "invalid"], extra, p=[0.8, 0.2]))
    src = np.concatenate([np.arange(n), rng.integers(0, n, extra)])
    return pl.DataFrame(
        {
            "run_id": [f"inj-{i:06d}" for i in range(n + extra)],
            "injection_id": [f"i{i}" for i in range(n + extra)],
            "parent_run_id": [run_ids[i] for i in src],
            "benchmark": runs["benchmark"].gather(src),
            "system": runs["system"].gather(src),
            "mode": rng.choice(modes, n + extra),
            "status": status,
            "prefix_exact": True,
            "rerollout_prefix_exact": rng.random(n + extra) > 0.14,
            "rerollout_status": status,
            "rerollout_label_wrong": rng.random(n + extra) < 0.08,
        }
    )


def conform(frame: pl.DataFrame, spec: TableSpec) -> pa.Table:
    """The spec's columns in its order and types, absent ones as nulls."""
    table = frame.to_arrow()
    cols = [
        table[f.name].cast(f.type) if f.name in frame.columns else pa.nulls(len(table), f.type)
        for f in spec.schema
    ]
    return pa.Table.from_arrays(cols, schema=spec.schema)


def write_inputs(tables: dict[str, pl.DataFrame], root: Path) -> dict[str, object]:
    specs = {"runs": RUNS, "steps": STEPS, "labels": LABELS}
    inputs: dict[str, object] = {}
    for name, spec in specs.items():
        inputs[name] = [
            str(write_table(conform(tables[name], spec), spec, root / f"{name}.parquet"))
        ]
    inputs["predictions"] = []
    for (name,), frame in tables["predictions"].group_by("attributor"):
        path = root / "predictions" / f"{name}.parquet"
        path.parent.mkdir(exist_ok=True)
        inputs["predictions"].append(
            str(write_table(conform(frame, PREDICTIONS), PREDICTIONS, path))
        )
    inputs["continuations"] = str(
        write_table(
            conform(tables["continuations"], CONTINUATIONS),
            CONTINUATIONS,
            root / "continuations.parquet",
        )
    )
    for name, spec in {
        "overview": OVERVIEW,
        "mode_overview": MODE_OVERVIEW,
        "replay_check": REPLAY_CHECK,
        "agreement": AGREEMENT,
        "candidates": CANDIDATES,
    }.items():
        inputs[name] = str(write_table(empty(spec), spec, root / f"{name}.parquet"))
    return inputs


def outputs_in(root: Path) -> dict[str, str]:
    out = {
        "metrics": "metrics.json",
        "accuracy": "accuracy.csv",
        "funnel": "funnel.csv",
        "expected": "random_expected.csv",
        "breakdown": "attribution_metrics.csv",
        "timing": "timing.csv",
        "plot_accuracy": "plots/step_accuracy.csv",
        "plot_cost": "plots/cost_performance.csv",
        "report": "report.html",
    }
    out |= {f"table_{t}": f"tables/{t}.parquet" for t in TABLES}
    out |= {f"figure_{f}": f"figures/{f}.png" for f in FIGURES}
    for rel in out.values():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
    return {k: str(root / v) for k, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=12326)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="write the outputs here (default: a temp dir)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="whowhen-scale-"))
    t0 = time.perf_counter()
    tables = generate(args.items, args.seed)
    inputs = write_inputs(tables, root / "inputs")
    t1 = time.perf_counter()
    params = {
        "analysis": filled("analysis", {"tolerance": 3}),
        "datasets": ["synthetic"],
        "systems": list(SYSTEMS),
        "attributors": sorted(set(tables["predictions"]["attributor"])),
        "attribution": {
            "seed": 0,
            "llm": [{"name": k, "model": m, "protocol": p} for k, (m, p, _a, _c) in LLM.items()],
        },
        "models": {m: {"id": m} for m, _p, _a, _c in LLM.values()},
        "llm": section_defaults("llm"),  # prices: the packaged table
    }
    stage(params, inputs, outputs_in(root / "out"), {})
    t2 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB (Linux)
    p = tables["predictions"]
    print(
        f"dataset: {tables['labels'].height} labelled trajectories, {tables['steps'].height} "
        f"steps (agent actions per run: median "
        f"{int(tables['runs']['n_steps'].median() // 2)}, max "
        f"{int(tables['runs']['n_steps'].max() // 2)}), {p.height} predictions from "
        f"{p['attributor'].n_unique()} attributors, {tables['continuations'].height} injections"
    )
    print(f"generate + write inputs: {t1 - t0:.1f} s")
    print(
        f"analysis stage (all {len(TABLES)} tables, {len(FIGURES)} figures, metrics with "
        f"bootstrap, report): {t2 - t1:.1f} s   [goal < 30 s]"
    )
    print(f"peak memory (max RSS of this process): {peak:.0f} MiB   [goal < 2048 MiB]")
    print(f"outputs: {root / 'out'}")
    sys.exit(0 if t2 - t1 < 30 and peak < 2048 else 1)


if __name__ == "__main__":
    main()
