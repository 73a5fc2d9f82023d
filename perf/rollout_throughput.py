"""Scripted rollout throughput per (benchmark, system), on one core, and the default run's
wall time.

    python perf/rollout_throughput.py [--tasks 100] [--pipeline]

For each pair: runs per second of the whole rollout (environment, policy, recorder,
conversion to validated Arrow tables: what the rollouts stage does per shard), and the same
excluding the time spent in sandboxed code execution (HumanEval checks, `run_python`) and
in task generation (rendering charts, scenes and videos, done once per shard). Goal: >= 50
runs/s per core excluding code execution. `--pipeline` then times
`snakemake --cores 2` on the default config from a clean results folder (goal: < 3 min).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from sandbox_clock import CLOCK

from whowhen.registry import SYSTEMS, get_benchmark
from whowhen.rollouts import run_rollouts

ROOT = Path(__file__).resolve().parents[1]
EXTRA = {"arithmetic": {"min_ops": 3, "max_ops": 6}}


def rollouts(tasks: int) -> None:
    CLOCK.install()
    print(
        f"{'benchmark':<13} {'system':<16} {'runs':>5} {'gen s':>6} {'total s':>8} "
        f"{'code s':>7} {'runs/s':>7} {'excl. code':>10}"
    )
    for system, by_bench in SYSTEMS.items():
        for bench in by_bench:
            cfg = {"n_tasks": tasks, **EXTRA.get(bench, {})}
            start = time.perf_counter()
            get_benchmark(bench).make_tasks(cfg, 1)  # generation (memoized below)
            gen = time.perf_counter() - start
            CLOCK.seconds = 0.0
            start = time.perf_counter()
            runs, *_ = run_rollouts(bench, system, cfg, seed=1, slip_rate=0.0, max_steps=80)
            total = time.perf_counter() - start
            rest = max(total - CLOCK.seconds, 1e-9)
            print(
                f"{bench:<13} {system:<16} {runs.height:>5} {gen:>6.2f} {total:>8.2f} "
                f"{CLOCK.seconds:>7.2f} {runs.height / total:>7.1f} {runs.height / rest:>10.1f}"
            )


def pipeline(cores: int) -> None:
    """The default run, from a copy of the repository with no results, timed."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "repo"
        shutil.copytree(
            ROOT,
            work,
            ignore=shutil.ignore_patterns(".venv", "results", ".snakemake", ".cache", "reports"),
        )
        shared = ROOT.parent / "shared"
        if shared.exists():
            os.symlink(shared, Path(tmp) / "shared")
        start = time.perf_counter()
        subprocess.run(
            ["snakemake", "--cores", str(cores), "--quiet"],
            cwd=work,
            check=True,
            capture_output=True,
        )
        print(f"default run (snakemake --cores {cores}): {time.perf_counter() - start:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--pipeline", action="store_true", help="also time the default run")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("WHOWHEN_MEDIA_DIR", tempfile.mkdtemp(prefix="whowhen-media-"))
    rollouts(args.tasks)
    if args.pipeline:
        pipeline(args.cores)


if __name__ == "__main__":
    main()
