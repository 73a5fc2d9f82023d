"""Counterfactual replay and the offline mode classifier, measured against the slip log at
scale on fresh seeds (not the default run's, which the classifier's rules were read from).

    python perf/replay_check.py [--tasks 100] [--seeds 99 100] [--slip-rate 0.06]
                                [--slips natural|operators]

For every (benchmark, system) pair of the default config: rollouts with the slip model on,
replay of every failure, then (1) of the failures with exactly one logged slip, how many
have that slip's step as the decisive step, and (2) per taxonomy category, how often the
classifier names the mode of the slip logged at the decisive step.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import polars as pl

from whowhen.config import load_config
from whowhen.registry import has_policy
from whowhen.replay import replay_failures
from whowhen.rollouts import run_rollouts
from whowhen.taxonomy.overview import agreement, replay_check


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", default=[99, 100])
    parser.add_argument("--slip-rate", type=float, default=0.06)
    parser.add_argument("--slips", choices=["natural", "operators"], default="natural")
    args = parser.parse_args()
    os.environ.setdefault("WHOWHEN_MEDIA_DIR", tempfile.mkdtemp(prefix="whowhen-media-"))
    cfg = load_config("config/config.yaml")
    decisive, slips, probes = [], [], []
    start = time.perf_counter()
    for seed in args.seeds:
        for bench in cfg["benchmarks"]:
            for system in cfg["systems"]:
                if not has_policy(system, bench):
                    continue
                bench_cfg = {**cfg["benchmarks"][bench], "n_tasks": args.tasks}
                if bench == "humaneval":
                    bench_cfg["n_tasks"] = min(args.tasks, 164)
                runs, steps, log = run_rollouts(
                    bench,
                    system,
                    bench_cfg,
                    seed,
                    args.slip_rate,
                    cfg["rollouts"]["max_steps"],
                    slip_kind=args.slips,
                )
                p, d = replay_failures(
                    runs,
                    steps,
                    bench_cfg,
                    seed,
                    args.slip_rate,
                    20,
                    cfg["replay"]["max_steps"],
                    slip_kind=args.slips,
                )
                decisive.append(d)
                slips.append(log)
                probes.append(p)
    d, s, p = pl.concat(decisive), pl.concat(slips), pl.concat(probes)
    pl.Config.set_tbl_rows(40)
    pl.Config.set_tbl_width_chars(160)
    pl.Config.set_tbl_hide_dataframe_shape(True)
    print(
        f"seeds {args.seeds}, {args.tasks} tasks per pair, {args.slips} slips at rate "
        f"{args.slip_rate}, "
        f"{time.perf_counter() - start:.0f} s"
    )
    print(replay_check(d, s, p).drop("n_fidelity_error"))
    print(agreement(d, s))


if __name__ == "__main__":
    main()
