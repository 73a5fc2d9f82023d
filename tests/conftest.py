"""Shared fixtures: a tiny config, the repository root and one finished small run."""

from __future__ import annotations

import compileall
import copy
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

TINY: dict[str, Any] = {
    "seed": 5,
    "benchmarks": {
        "arithmetic": {"n_tasks": 6, "min_ops": 3, "max_ops": 4},
        "table_qa": {"n_tasks": 4},
    },
    "systems": ["react", "solver_verifier"],
    "rollouts": {"max_steps": 240, "slip_rate": 0.1},
    "replay": {"max_probes": 10, "max_steps": 300},
    "taxonomy": {"file": "config/taxonomy.yaml"},
    "injection": {"seed": 7, "per_run": 2, "modes": []},
    "continuation": {"max_steps": 300, "train_fraction": 0.5, "split_seed": 3},
    "dataset": {},
    "attribution": {"seed": 11, "attributors": ["random", "first_agent_step", "last_agent_step"]},
    "imports": [],
    "agents": {"model": None},
    "models": {},
    "llm": {"progress": False},
    "analysis": {"tolerance": 2},
    "feedback": {
        "benchmarks": ["arithmetic"],
        "systems": ["react", "solver_verifier"],
        "rounds": 2,
        "sources": ["none", "random", "oracle"],
    },
}


def one_benchmark(config: dict[str, Any] | None = None) -> dict[str, Any]:
    """TINY (or `config`) on arithmetic alone, without feedback pairs: for end-to-end tests
    that check the workflow's machinery (DVC, the cluster, resuming, reruns), not the
    benchmarks. Each shard adds several jobs, each job a second or more of start-up."""
    out = copy.deepcopy(config or TINY)
    out["benchmarks"] = {"arithmetic": out["benchmarks"]["arithmetic"]}
    out["feedback"] = {**out["feedback"], "benchmarks": [], "systems": []}
    return out


def small() -> dict[str, Any]:
    """`one_benchmark()` with one feedback pair: every stage has jobs, few of them. The
    config of `small_run`, the finished run that tests inspect or rerun from."""
    out = one_benchmark()
    out["feedback"] = {
        **TINY["feedback"],
        "benchmarks": ["arithmetic"],
        "systems": ["react", "code_act"],  # code_act: a feedback pair once `systems` names it
        "rounds": 1,
        "sources": ["none", "random"],
    }
    return out


LONGEST = (
    "test_local_model.py",  # minutes of a real model on the CPU, where llama.cpp is installed
    "test_dvc.py",
    "test_workflow.py",
    "test_frameworks_pipeline.py",
    "test_llm_attribution.py",
    "test_cluster.py",
    "test_profiles.py",
    "test_humaneval.py",
    "test_resume.py",
    "test_model_pipeline.py",
)
"""The longest test files, longest first (alone on 2 cores): they are handed out first."""


def pytest_configure(config: pytest.Config) -> None:
    """Keep the collection order when pytest-xdist hands out whole files: by default it
    reorders them by their number of tests, which sends the one-test end-to-end files last.
    Compile the package's modules once for the whole run (in the controller, before the
    workers start): where Python writes no bytecode on import (PYTHONDONTWRITEBYTECODE is
    set), every Snakemake job, command-line call and worker would otherwise compile the
    modules it imports again, about a tenth of a second each. pip compiled the
    dependencies when it installed them; the package itself is installed editable."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(ROOT / "src", quiet=1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files run first (`LONGEST`), then the other files holding a slow
    (end-to-end) test, then the rest, those with the most tests first: with the workers
    taking whole files in this order (`--dist loadfile`), the long files run side by side
    and the short ones fill in at the end, instead of one long file running alone last."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    tests = Counter(item.path for item in items)

    def rank(item: pytest.Item) -> tuple[int, bool, int]:
        name = item.path.name
        first = LONGEST.index(name) if name in LONGEST else len(LONGEST)
        return first, item.path not in slow_files, -tests[item.path]

    items.sort(key=rank)  # stable: each file's tests keep their order


@pytest.fixture(autouse=True)
def media_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Rendered images and frames go to a temp store, never into the checkout."""
    path = tmp_path_factory.mktemp("media")
    monkeypatch.setenv("WHOWHEN_MEDIA_DIR", str(path))
    return path


@pytest.fixture(scope="session", autouse=True)
def run_temp(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tables that several test files compute (`workdir.shared_tables`) are built in the
    run's temporary folder, once for all xdist workers."""
    from .workdir import RUN_TEMP

    RUN_TEMP[:] = [tmp_path_factory]


@pytest.fixture(scope="session")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished `snakemake --cores 2` run of `small()`, built once for the whole test run
    (all xdist workers share it). Read it in place; to run Snakemake in it, work on a copy
    (`workdir.copy_run`), which is up to date as it stands."""
    from .workdir import built_once, finished_run

    return built_once(tmp_path_factory, "small-run", lambda dest: finished_run(dest, small()))


@pytest.fixture
def tiny_config() -> dict[str, Any]:
    return copy.deepcopy(TINY)


@pytest.fixture
def root() -> Path:
    return ROOT


MAX_STEPS = 300
"""Step budget (observations included) for rollouts and warm starts in tests: room for the
longest reference runs (agent steps past 40, each with its observation)."""
