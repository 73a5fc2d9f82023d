# Shared helpers: the (benchmark, system) shards, the datasets, and path patterns.
import os

from whowhen.attribution.kinds import ATTRIBUTORS as ATTRIBUTOR_KINDS
from whowhen.registry import has_policy, slow_shards

# the (benchmark, system) matrix: every configured pair that has a policy (of the
# benchmarks `only_benchmarks` names, where it names some)
RUN_BENCHMARKS = sorted(config.get("only_benchmarks") or config["benchmarks"])
SHARDS = [(b, s) for b in RUN_BENCHMARKS for s in config["systems"] if has_policy(s, b)]
IMPORTS = {item["name"]: item for item in config["imports"]}
# imported datasets whose labels tracer-lite also learns from
TRACER_IMPORTS = [n for n, item in IMPORTS.items() if item["train"]]
ATTRIBUTORS = config["attribution"]["attributors"] + [a["name"] for a in config["attribution"]["llm"]]


def attributor_needs(name, need):
    """Whether registered attributor `name` has `need` (`needs_tracer_model`: the fitted
    model is its input; `needs_environment`: it replays runs, the longest jobs); an LLM
    attributor (`attribution.llm`) has neither."""
    return name in ATTRIBUTOR_KINDS and getattr(ATTRIBUTOR_KINDS.get(name), need)


def attribution_priority(wildcards):
    """The replay oracle first (the longest jobs); an import's attributions fill idle cores
    at the barriers."""
    if attributor_needs(wildcards.attributor, "needs_environment"):
        return 1
    return -(wildcards.dataset != "built")


# the feedback loop's shards: the configured pairs it reruns (config `feedback`)
FEEDBACK_SHARDS = [
    (b, s)
    for b, s in SHARDS
    if b in config["feedback"]["benchmarks"] and s in config["feedback"]["systems"]
]
# every dataset attribution and analysis cover: the built one and each import
DATASETS = {"built": "results/dataset"} | {n: f"results/imports/{n}" for n in IMPORTS}


def answers(attributor, dataset):
    """Whether `attributor` can predict anything on `dataset`: the replay oracle replays
    built runs only, and a predictor fitted on the train split finds none in an import
    (imported labels are all test), so neither gets a job there."""
    if dataset == "built" or attributor not in ATTRIBUTOR_KINDS:
        return True
    kind = ATTRIBUTOR_KINDS.get(attributor)
    return not (kind.needs_environment or kind.fitted_on_train)


# every (dataset, attributor) prediction a run makes
PREDICTION_PATHS = [
    f"results/predictions/{d}/{a}.parquet" for d in DATASETS for a in ATTRIBUTORS if answers(a, d)
]
# shards whose agents run code in the sandbox (a process per run) or whose runs are long
# take longest: the scheduler starts them first, so the short ones fill the other cores at
# the end (the system registry says which: `whowhen.registry.slow_shards`)


def shard_priority(wildcards):
    return 1 if slow_shards(wildcards.system) else 0


def shard_paths(pattern):
    """Expand a {benchmark}/{system} pattern over every configured shard."""
    return [pattern.format(benchmark=b, system=s) for b, s in SHARDS]


def feedback_paths(table):
    """One table (attempts, runs, steps) of every feedback shard."""
    return [f"results/feedback/{b}/{s}/{table}.parquet" for b, s in FEEDBACK_SHARDS]


def dataset_paths(table):
    """One table (runs, steps, labels) of every dataset."""
    return [f"{folder}/{table}.parquet" for folder in DATASETS.values()]


def bench_config(wildcards):
    return config["benchmarks"][wildcards.benchmark]


def import_spec(wildcards):
    return IMPORTS[wildcards.dataset]


def import_source(wildcards):
    """The imported file or folder, and its labels and outcomes files, when present (an
    optional import may be absent)."""
    spec = IMPORTS[wildcards.dataset]
    paths = [spec["path"], spec.get("labels"), spec.get("outcomes")]
    return [p for p in paths if p and os.path.exists(p)]


wildcard_constraints:
    benchmark="[a-z][a-z0-9_]*",
    system="[a-z][a-z0-9_]*",
    attributor="[a-z][a-z0-9_]*",
    dataset="[a-z][a-z0-9_]*",
