"""tracer-lite against every heuristic and the majority priors on an imported labelled
dataset (the Who&When dev half), per subset, from a finished run; and, with `--cv`, the
cross-validation that chose tracer-lite's settings on it.

    python perf/transfer_dev.py [--dataset who_and_when_dev] [--cv]

The first table reads `results/imports/DATASET/` and `results/predictions/DATASET/` of the
run in the current folder (tracer_lite's rows there are out of fold when the import is
marked `train`). The majority priors are fitted on the same dataset leaving the scored run
out: the subset's most frequent gold step, and its most frequent gold agent at that agent's
first step. `--cv` refits tracer-lite with 5 folds by task (three fold seeds averaged) on
the built train split plus the other folds, for the imported share, the length gate and the
agent choice (summed probability against the top step's actor).
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

import polars as pl

from whowhen.attribution import tracer_features
from whowhen.attribution.baselines import agent_steps
from whowhen.attribution.tracer import TracerConfig
from whowhen.attribution.tracer_train import Tables, fit_tracer
from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, read_table

Pick = dict[str, tuple[str | None, int | None]]


def load(folder: Path) -> Tables:
    return Tables(
        *(
            read_table(folder / f"{t}.parquet", s)
            for t, s in (("runs", RUNS), ("steps", STEPS), ("labels", LABELS))
        )
    )


def priors(data: Tables) -> dict[str, Pick]:
    """The two majority priors, each run scored by the others of its subset."""
    subset = dict(zip(data.runs["run_id"], data.runs["subset"], strict=True))
    gold = {r["run_id"]: (r["decisive_agent"], r["decisive_step"]) for r in data.labels.to_dicts()}
    cands = {k[0]: f.sort("step") for k, f in agent_steps(data.steps).group_by("run_id")}
    out: dict[str, Pick] = {"prior: step": {}, "prior: agent at its first step": {}}
    for run_id in gold:
        others = [g for r, g in gold.items() if r != run_id and subset[r] == subset[run_id]]
        c = cands.get(run_id, data.steps.clear())
        step = collections.Counter(s for _, s in others).most_common(1)[0][0]
        actor_at = dict(zip(c["step"], c["actor"], strict=True))
        out["prior: step"][run_id] = (actor_at.get(step), step)
        agent = collections.Counter(a for a, _ in others).most_common(1)[0][0]
        first = c.filter(pl.col("actor") == agent)["step"]
        out["prior: agent at its first step"][run_id] = (agent, first[0] if len(first) else None)
    return out


def table(data: Tables, picks: dict[str, Pick]) -> pl.DataFrame:
    subset = dict(zip(data.runs["run_id"], data.runs["subset"], strict=True))
    gold = {r["run_id"]: (r["decisive_agent"], r["decisive_step"]) for r in data.labels.to_dicts()}
    rows = []
    for name, pick in picks.items():
        row: dict[str, object] = {"attributor": name}
        for sub in sorted({subset[r] for r in gold}):
            ids = [r for r in gold if subset[r] == sub]
            short = "".join(w[0] for w in sub.split("-"))
            got = [(pick.get(r, (None, None)), gold[r]) for r in ids]
            row[f"{short} step"] = round(100 * sum(p[1] == g[1] for p, g in got) / len(ids), 1)
            row[f"{short} agent"] = round(100 * sum(p[0] == g[0] for p, g in got) / len(ids), 1)
        rows.append(row)
    return pl.DataFrame(rows)


def from_run(name: str) -> tuple[Tables, dict[str, Pick]]:
    data = load(Path("results/imports") / name)
    picks: dict[str, Pick] = {}
    for path in sorted(Path(f"results/predictions/{name}").glob("*.parquet")):
        preds = read_table(path, PREDICTIONS)
        picks[path.stem] = {r["run_id"]: (r["agent"], r["step"]) for r in preds.to_dicts()}
    return data, picks | priors(data)


def cross_validate(
    built: Tables, data: Tables, share: float, gate: int, seeds: tuple[int, ...] = (0, 1, 2)
) -> list[tuple[Pick, Pick]]:
    """Out-of-fold picks per fold seed: (the top step with its actor, the top step with the
    agent of most summed probability, as tracer-lite names it)."""
    tracer_features.LONG_RUN = gate  # read by `build` on every call
    actor = {
        k[0]: dict(zip(f["step"], f["actor"], strict=True))
        for k, f in data.steps.group_by("run_id")
    }
    out = []
    for seed in seeds:
        held = fit_tracer(built, {"d": data}, TracerConfig.of(seed=seed), share=share).held_out
        rows = held.to_dicts()
        top = {r["run_id"]: (actor[r["run_id"]].get(r["step"]), r["step"]) for r in rows}
        summed = {r["run_id"]: (r["agent"], r["step"]) for r in rows}
        out.append((top, summed))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="who_and_when_dev")
    parser.add_argument("--cv", action="store_true")
    args = parser.parse_args()
    data, picks = from_run(args.dataset)
    pl.Config.set_tbl_rows(40)
    print(table(data, picks))
    if not args.cv:
        return
    built = load(Path("results/dataset"))
    variants = [(0.8, 20), (0.8, 10**9), (0.5, 20), (0.3, 20), (0.8, 15), (0.8, 30)]
    for share, gate in variants:
        runs = cross_validate(built, data, share, gate)
        for label, k in (("top step's actor", 0), ("summed probability", 1)):
            tables = [table(data, {"cv": r[k]}) for r in runs]
            mean = pl.concat(tables).drop("attributor").select(pl.all().mean().round(1))
            gate_said = "no gate" if gate > 10**6 else f"gate {gate}"
            print(f"share {share}, {gate_said}, agent by {label}:", mean.to_dicts()[0])


if __name__ == "__main__":
    main()
