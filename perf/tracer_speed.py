"""tracer-lite prediction time on long real-shaped runs: is it linear in the steps?

    python perf/tracer_speed.py [--runs 58] [--seed 0]

The runs are synthetic, shaped like Who&When's Hand-Crafted subset (Magentic-One: 58 runs
of 5-130 steps, an Orchestrator's thoughts and instructions, WebSurfer page dumps of a few
kilobytes full of numbers, ComputerTerminal output). The timed part is `tracer.predict`
(features and scores) with a model fitted on a small synthetic train set; generation is
timed apart. Then the same runs at twice their length: linear cost doubles the time.
"""

from __future__ import annotations

import argparse
import random
import time

import polars as pl

from whowhen.attribution.tracer import TracerConfig, fit, predict
from whowhen.imports.common import base_run, label_row, step_row
from whowhen.schema import LABELS, RUNS, STEPS, to_arrow

WORDS = [
    "the",
    "page",
    "shows",
    "results",
    "for",
    "search",
    "query",
    "click",
    "link",
    "download",
    "file",
    "value",
    "table",
    "row",
    "orchestrator",
    "plan",
    "next",
    "step",
    "we",
    "need",
    "to",
    "find",
    "verify",
    "answer",
    "website",
    "archive",
    "list",
    "year",
]


def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(
        rng.choice(WORDS) if rng.random() < 0.85 else f"{rng.randint(0, 99999)}"
        for _ in range(n_words)
    )


def runs_like_hand_crafted(
    n_runs: int, seed: int, scale: int = 1
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(runs, steps, labels): lengths 5-130 with a long tail, times `scale`."""
    rng = random.Random(seed)
    runs, steps, labels = [], [], []
    for k in range(n_runs):
        run_id = f"hc{k:03d}"
        n = min(130, 5 + int(rng.expovariate(1 / 30))) * scale
        rows = [step_row(run_id, 0, "user", _text(rng, 60), role="human")]
        for i in range(1, n):
            who = rng.choice(["Orchestrator", "Orchestrator", "WebSurfer", "ComputerTerminal"])
            size = {"Orchestrator": 120, "WebSurfer": 900, "ComputerTerminal": 200}[who]
            kind = "observation" if who == "ComputerTerminal" else "message"
            rows.append(
                step_row(run_id, i, who, _text(rng, size), role=f"{who} (thought)", kind=kind)
            )
        steps += rows
        runs.append(base_run(run_id, "who_and_when", f"t{k}", "magentic_one", "multi", n_steps=n))
        gold = rng.choice([r for r in rows if r["actor"] != "user" and r["kind"] != "observation"])
        labels.append(label_row(run_id, gold["actor"], gold["step"], None, split="train"))
    return (
        pl.from_arrow(to_arrow(runs, RUNS)),
        pl.from_arrow(to_arrow(steps, STEPS)),
        pl.from_arrow(to_arrow(labels, LABELS)),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=58)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    train = runs_like_hand_crafted(20, args.seed + 1)
    model = fit(*train, TracerConfig.of(iterations=50))
    for scale in (1, 2):
        started = time.perf_counter()
        runs, steps, _ = runs_like_hand_crafted(args.runs, args.seed, scale)
        made = time.perf_counter() - started
        started = time.perf_counter()
        preds = predict(model, runs, steps)
        took = time.perf_counter() - started
        mb = steps["content"].str.len_bytes().sum() / 1e6
        print(
            f"x{scale}: {runs.height} runs, {steps.height} steps "
            f"(max {int(runs['n_steps'].max())}), {mb:.1f} MB of text: "
            f"predict {took:.2f} s ({1e3 * took / steps.height:.2f} ms/step); "
            f"generated in {made:.1f} s; {int(preds['parse_ok'].sum())} predictions"
        )


if __name__ == "__main__":
    main()
