"""What the sandbox costs: `code_act` on arithmetic (every action a sandboxed program),
and the latency of one `run_python` call.

    python perf/sandbox_overhead.py [--tasks 40] [--calls 50]

Run it on two checkouts to compare sandbox implementations on the same machine;
docs/performance.md holds the current figures.
"""

from __future__ import annotations

import argparse
import statistics
import time

from whowhen.rollouts import run_rollouts
from whowhen.sandbox import run_python


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    run_python("print(1)")  # warm up (imports, the sandbox's one-time probe)
    latencies = []
    for _ in range(args.calls):
        start = time.perf_counter()
        run_python("print(sum(range(10)))")
        latencies.append(time.perf_counter() - start)
    print(
        f"run_python('print(...)'): median {statistics.median(latencies) * 1000:.1f} ms, "
        f"p90 {sorted(latencies)[int(0.9 * len(latencies))] * 1000:.1f} ms"
    )
    cfg = {"n_tasks": args.tasks, "min_ops": 3, "max_ops": 6}
    start = time.perf_counter()
    runs, steps, _ = run_rollouts(
        "arithmetic", "code_act", cfg, seed=1, slip_rate=0.0, max_steps=80
    )
    total = time.perf_counter() - start
    print(
        f"code_act on arithmetic: {runs.height} runs in {total:.2f} s = "
        f"{runs.height / total:.1f} runs/s ({steps.height} steps)"
    )


if __name__ == "__main__":
    main()
