"""Where the one-step classifier's edge comes from, per benchmark: which kinds of agent step
can become a gold step, and how often.

    python perf/step_leakage.py arithmetic [table_qa ...] [--tasks 40] [--per-run 4]

For each benchmark (every system with a policy): seeded rollouts with the config's seed and
slip rate, injections planned as the pipeline plans them (config's per-run count and step
selection, modes uniform), warm-started (no re-rollout), and the flipped ones built into a
dataset with the config's `continuation` and `dataset` sections. Then:

- per kind of agent step (actor, tool and the masked first words of its text, as the
  dataset's kind matching defines it), its share
  of the agent steps of the successful runs beside its share of the flipped injections'
  gold steps (`gold/step` is their ratio: 1 everywhere is what "no kind is favoured"
  means), and the total variation distance between the two distributions;
- the leakage audit of that benchmark's dataset (one-step classifier overall and on items
  whose gold is not the last agent step, beside random).

A benchmark passes the audit's content test when the gold kinds follow the step kinds
(TV distance small) and the classifier's `not_last` accuracy is within 5 points of random.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

import polars as pl

from whowhen.config import load_config
from whowhen.continuation import continue_injections
from whowhen.dataset.audit import leakage_audit
from whowhen.dataset.build import dataset_from_config
from whowhen.dataset.kinds import step_kind
from whowhen.dataset.positions import agent_step_table
from whowhen.injection.plan import plan_injections
from whowhen.registry import has_policy
from whowhen.rollouts import run_rollouts
from whowhen.taxonomy import load_taxonomy

ROOT = Path(__file__).resolve().parents[1]


def kind(row: dict[str, Any]) -> str:
    """The dataset selection's kind of step (`whowhen.dataset.kinds.step_kind`)."""
    return step_kind(row["actor"], row["tool"], row["content"])


def build(cfg: dict[str, Any], bench: str, tasks: int, per_run: int) -> dict[str, Any]:
    """Rollouts, injections and continuations of every system of `bench`."""
    bench_cfg = {**cfg["benchmarks"][bench], "n_tasks": tasks}
    inj = cfg["injection"]
    selection = inj.get("benchmarks", {}).get(bench, {}).get("steps", inj["steps"])
    taxonomy = load_taxonomy(ROOT / cfg["taxonomy"]["file"])
    out: dict[str, list[pl.DataFrame]] = {"steps": [], "parts": [], "planned": []}
    for system in cfg["systems"]:
        if not has_policy(system, bench):
            continue
        seed, slip = cfg["seed"], cfg["rollouts"]["slip_rate"]
        kind = cfg["rollouts"]["slips"]
        runs, steps, slips = run_rollouts(
            bench, system, bench_cfg, seed, slip, cfg["rollouts"]["max_steps"], slip_kind=kind
        )
        planned = plan_injections(
            runs,
            steps,
            taxonomy,
            inj["seed"],
            per_run,
            inj["modes"] or None,
            step_selection=selection,
            terminal_share=inj["terminal_share"],
        )
        parts = continue_injections(
            planned,
            runs,
            steps,
            bench_cfg,
            seed,
            cfg["continuation"]["max_steps"],
            slips=slips,
            slip_kind=kind,
        )
        ok = runs.filter(pl.col("success"))["run_id"].to_list()
        out["steps"].append(steps.filter(pl.col("run_id").is_in(ok)))
        out["planned"].append(planned)
        out["parts"].append(parts)
        print(
            f"  {bench}/{system}: {len(ok)} successful runs, {planned.height} injections, "
            f"{parts['continuations'].filter(pl.col('status') == 'flipped').height} flipped",
            flush=True,
        )
    return out


def kind_table(built: dict[str, Any]) -> pl.DataFrame:
    """Per kind: agent steps of the successful runs, and flipped injections at that kind."""
    steps = pl.concat(built["steps"])
    cand = agent_step_table(steps)
    kinds = {(r["run_id"], r["step"]): kind(r) for r in cand.iter_rows(named=True)}
    planned = pl.concat(built["planned"])
    flipped = pl.concat([p["continuations"] for p in built["parts"]]).filter(
        pl.col("status") == "flipped"
    )
    gold = planned.filter(pl.col("injection_id").is_in(flipped["injection_id"].to_list()))
    g = pl.DataFrame(
        {
            "kind": [
                kinds.get((r["parent_run_id"], r["step"]), "?") for r in gold.iter_rows(named=True)
            ]
        },
        schema={"kind": pl.String},
    )
    s = pl.DataFrame({"kind": list(kinds.values())}, schema={"kind": pl.String})
    table = (
        s.group_by("kind")
        .len("steps")
        .join(g.group_by("kind").len("gold"), on="kind", how="full", coalesce=True)
        .fill_null(0)
        .with_columns(
            (pl.col("steps") / pl.col("steps").sum()).alias("step_share"),
            (pl.col("gold") / max(1, g.height)).alias("gold_share"),
        )
        .with_columns((pl.col("gold_share") / pl.col("step_share")).alias("gold/step"))
        .sort("steps", descending=True)
    )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", nargs="+")
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--per-run", type=int, default=None, help="default: the config's")
    parser.add_argument("--config", default=str(ROOT / "config/config.yaml"))
    parser.add_argument("--rows", type=int, default=40, help="kinds to list")
    args = parser.parse_args()
    os.environ.setdefault("WHOWHEN_MEDIA_DIR", tempfile.mkdtemp(prefix="whowhen-media-"))
    cfg = load_config(args.config)
    per_run = args.per_run or cfg["injection"]["per_run"]
    pl.Config.set_tbl_rows(args.rows)
    pl.Config.set_fmt_str_lengths(70)
    for bench in args.benchmarks:
        print(f"{bench}: {args.tasks} tasks per system, {per_run} injections per run", flush=True)
        built = build(cfg, bench, args.tasks, per_run)
        table = kind_table(built)
        tv = 0.5 * float((table["step_share"] - table["gold_share"]).abs().sum())
        print(table.head(args.rows))
        print(f"{bench}: total variation distance, gold kinds vs step kinds: {tv:.3f}")
        opts = cfg["dataset"]  # filled from the config schema by load_config
        data = dataset_from_config(built["parts"], cfg["continuation"], opts)
        audit = leakage_audit(
            data["runs"], data["steps"], data["labels"], opts["audit_margin"] / 100
        )
        print(
            audit.filter(pl.col("family").is_in(["content", "position"])).select(
                "probe", "subset", "n", "accuracy", "ci_low", "ci_high", "random"
            )
        )


if __name__ == "__main__":
    main()
