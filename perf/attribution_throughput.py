"""Attribution throughput: trajectories per second and model calls per trajectory, per
attributor, on a labelled dataset built as the pipeline builds it.

    python perf/attribution_throughput.py [--tasks 30] [--from-results [DIR]]

The dataset: for every (benchmark, system) pair of the default config, seeded rollouts
(`--tasks` tasks per pair), injections, warm-start continuations (no re-rollout) and the
dataset step (splits, agent balance, single-error filter), all with the config's settings;
built first and not timed. `--from-results` reads `results/dataset/{runs,steps,labels}
.parquet` of a finished default run instead (the counterfactual oracle then regenerates
the default config's tasks, as the pipeline does).

Timed, each over every labelled trajectory as the attribution stage runs it: the
baselines, shortcut predictors and heuristics (`attribute`), tracer-lite (fit on the train
split, then predict every trajectory; both timed), the counterfactual oracle (replay warm
starts) and the config's LLM protocols on `scripted/standin`, the in-process scripted
stand-in (not an LLM: rules over the prompt text, no latency), each with a fresh temporary
response cache, then once more on that cache (a rerun: 0 calls). Requests per trajectory
count every request (repairs and cache hits included); calls are the requests that reached
the provider.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

from whowhen.attribution.factory import llm_attributors
from whowhen.attribution.llm_protocols import attribute_llm
from whowhen.attribution.offline import attribute
from whowhen.attribution.oracle import oracle_attribute
from whowhen.attribution.tracer import fit as tracer_fit
from whowhen.attribution.tracer import predict as tracer_predict
from whowhen.config import load_config
from whowhen.continuation import continue_injections
from whowhen.dataset.build import dataset_from_config
from whowhen.injection.plan import plan_injections
from whowhen.models import make_runner
from whowhen.registry import has_policy
from whowhen.rollouts import run_rollouts
from whowhen.schema import LABELS, RUNS, STEPS, read_table
from whowhen.taxonomy import load_taxonomy

ROOT = Path(__file__).resolve().parents[1]


def bench_configs(cfg: dict[str, Any], tasks: int | None) -> dict[str, dict[str, Any]]:
    """The config's benchmarks, with `tasks` tasks each (HumanEval has 164) if given."""
    out = {}
    for bench, bench_cfg in cfg["benchmarks"].items():
        n = bench_cfg.get("n_tasks") if tasks is None else tasks
        out[bench] = {**bench_cfg, "n_tasks": min(n, 164) if bench == "humaneval" else n}
    return out


def build(cfg: dict[str, Any], benches: dict[str, dict[str, Any]]) -> dict[str, pl.DataFrame]:
    """Rollouts, injections, continuations and the dataset step for every default pair."""
    taxonomy = load_taxonomy(ROOT / cfg["taxonomy"]["file"])
    inj, cont = cfg["injection"], cfg["continuation"]
    parts = []
    for bench in sorted(benches):
        for system in cfg["systems"]:
            if not has_policy(system, bench):
                continue
            runs, steps, slips = run_rollouts(
                bench,
                system,
                benches[bench],
                cfg["seed"],
                cfg["rollouts"]["slip_rate"],
                cfg["rollouts"]["max_steps"],
            )
            planned = plan_injections(
                runs,
                steps,
                taxonomy,
                inj["seed"],
                inj["per_run"],
                inj.get("modes") or None,
                step_selection=inj.get("benchmarks", {}).get(bench, {}).get("steps", inj["steps"]),
            )
            parts.append(
                continue_injections(
                    planned,
                    runs,
                    steps,
                    benches[bench],
                    cfg["seed"],
                    cont["max_steps"],
                    slips=slips,
                )
            )
    return dataset_from_config(parts, cont)


def row(name: str, n: int, seconds: float, requests: float = 0.0, calls: float = 0.0) -> str:
    """One table line: trajectories, seconds, trajectories/s, requests and calls per one."""
    return (
        f"{name:<30} {n:>6} {seconds:>8.2f} {n / max(seconds, 1e-9):>10.1f} "
        f"{requests:>10.2f} {calls:>9.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=30, help="tasks per pair when building")
    parser.add_argument(
        "--from-results",
        nargs="?",
        const=str(ROOT / "results/dataset"),
        default=None,
        metavar="DIR",
        help="read a built dataset (default: results/dataset) instead of building one",
    )
    parser.add_argument("--config", default=str(ROOT / "config/config.yaml"))
    args = parser.parse_args()
    os.environ.setdefault("WHOWHEN_MEDIA_DIR", tempfile.mkdtemp(prefix="whowhen-media-"))
    cfg = load_config(args.config)
    start = time.perf_counter()
    if args.from_results:
        folder = Path(args.from_results)
        benches = bench_configs(cfg, None)
        data = {
            "runs": read_table(folder / "runs.parquet", RUNS),
            "steps": read_table(folder / "steps.parquet", STEPS),
            "labels": read_table(folder / "labels.parquet", LABELS),
        }
        source = str(folder)
    else:
        benches = bench_configs(cfg, args.tasks)
        data = build(cfg, benches)
        source = f"built, {args.tasks} tasks per pair"
    runs, steps, labels = data["runs"], data["steps"], data["labels"]
    n = runs.height
    splits = dict(labels["split"].value_counts().sort("split").rows())
    print(
        f"dataset ({source}, {time.perf_counter() - start:.1f} s): {n} labelled trajectories, "
        f"{steps.height} steps, splits {splits}"
    )
    print(
        f"{'attributor':<30} {'trajs':>6} {'time s':>8} {'trajs/s':>10} "
        f"{'requests/t':>10} {'calls/t':>9}"
    )
    att = cfg["attribution"]
    for name in att["attributors"]:
        start = time.perf_counter()
        if name == "tracer_lite":
            model = tracer_fit(runs, steps, labels)
            n_train = labels.filter(pl.col("split") == "train").height
            print(row("tracer_lite (fit, train)", n_train, time.perf_counter() - start))
            start = time.perf_counter()
            tracer_predict(model, runs, steps)
            print(row("tracer_lite (predict)", n, time.perf_counter() - start))
        elif name == "counterfactual_oracle":
            preds = oracle_attribute(
                runs,
                steps,
                benches,
                cfg["seed"],
                cfg["replay"]["max_probes"],
                cfg["replay"]["max_steps"],
            )
            s = time.perf_counter() - start
            probes = sum(json.loads(r).get("n_probes", 0) for r in preds["raw_output"] if r)
            print(row(name, n, s) + f"   ({probes / max(n, 1):.2f} warm starts/t)")
        else:
            attribute(runs, steps, name, att["seed"], labels)
            print(row(name, n, time.perf_counter() - start))
    modes = [m.id for m in load_taxonomy(ROOT / cfg["taxonomy"]["file"]).modes]
    reruns: list[int] = []
    for name, attributor in llm_attributors(att).items():
        with tempfile.TemporaryDirectory(prefix="whowhen-cache-") as cache:
            llm_cfg = {**cfg["llm"], "cache_dir": cache, "progress": False}
            for rerun in (False, True):
                client = make_runner(attributor.model, llm_cfg, cfg["models"], ROOT)
                start = time.perf_counter()
                preds = attribute_llm(runs, steps, attributor, client, modes)
                s = time.perf_counter() - start
                requests = int(preds["calls"].sum())
                label = f"{name} ({'cached' if rerun else 'fresh'})"
                print(row(label, n, s, requests / max(n, 1), client.stats.calls / max(n, 1)))
                if rerun:
                    reruns.append(client.stats.calls)
    print(f"cached reruns: {sum(reruns)} provider calls in all ({len(reruns)} attributors)")


if __name__ == "__main__":
    main()
