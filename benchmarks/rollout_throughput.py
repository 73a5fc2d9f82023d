"""Scripted rollout throughput per (benchmark, system), on one core, tables included.

    python benchmarks/rollout_throughput.py [--tasks 200]

Prints runs per second for each pair: the whole rollout (environment, policy, recorder,
conversion to validated Arrow tables), which is what the rollouts stage does per shard.
"""

from __future__ import annotations

import argparse
import time

from whowhen.agents import SYSTEMS
from whowhen.rollouts import run_rollouts

CONFIGS = {"arithmetic": {"n_tasks": 0, "min_ops": 3, "max_ops": 6}, "table_qa": {"n_tasks": 0}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    args = parser.parse_args()
    print(f"{'benchmark':<12} {'system':<16} {'runs':>5} {'seconds':>8} {'runs/s':>8}")
    for system, by_bench in SYSTEMS.items():
        for bench in by_bench:
            cfg = {**CONFIGS[bench], "n_tasks": args.tasks}
            start = time.perf_counter()
            runs, *_ = run_rollouts(bench, system, cfg, seed=1, slip_rate=0.0, max_steps=80)
            seconds = time.perf_counter() - start
            print(
                f"{bench:<12} {system:<16} {runs.height:>5} {seconds:>8.2f} "
                f"{runs.height / seconds:>8.1f}"
            )


if __name__ == "__main__":
    main()
