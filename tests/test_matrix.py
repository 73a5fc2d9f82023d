"""The default config's (benchmark, system) matrix: breadth, and every scripted pair solving
all its tasks with slips off (otherwise an environment or an evaluator is wrong)."""

from __future__ import annotations

import pytest

from whowhen.config import load_config
from whowhen.registry import BENCHMARKS, get_benchmark, has_policy
from whowhen.rollouts import run_rollouts

from .conftest import ROOT

CONFIG = load_config(ROOT / "config" / "config.yaml", root=ROOT)
PAIRS = [(b, s) for b in CONFIG["benchmarks"] for s in CONFIG["systems"] if has_policy(s, b)]


def test_default_run_covers_every_benchmark_system_modality_and_category() -> None:
    benches = {b for b, _ in PAIRS}
    packages = {p.parent.name for p in (ROOT / "src/whowhen/benchmarks").glob("*/__init__.py")}
    assert benches == set(BENCHMARKS) == packages and len(packages) >= 8
    assert {"react", "code_act", "orchestrator", "pipeline"} <= {s for _, s in PAIRS}
    assert {get_benchmark(b).modality for b in benches} == {"text", "image", "video"}
    assert len({get_benchmark(b).category for b in benches}) >= 6


@pytest.mark.parametrize(("benchmark", "system"), PAIRS)
def test_every_pair_succeeds_on_every_task_without_slips(benchmark: str, system: str) -> None:
    cfg = {**CONFIG["benchmarks"][benchmark], "n_tasks": 12}
    runs, _, slips = run_rollouts(
        benchmark, system, cfg, CONFIG["seed"], 0.0, CONFIG["rollouts"]["max_steps"]
    )
    assert runs.height == 12 and slips.height == 0
    bad = runs.filter(~runs["success"]).select("task_id", "end_reason", "final_answer")
    assert bad.height == 0, bad.to_dicts()
    assert set(runs["end_reason"]) == {"done"}


@pytest.mark.parametrize(("benchmark", "system"), PAIRS)
def test_every_pair_has_role_prompts_and_tool_schemas(benchmark: str, system: str) -> None:
    """What an LLM playing each agent of the pair would be given."""
    from whowhen.assembly import make_system
    from whowhen.registry import pair_tools, role_prompt

    agents = make_system(system, benchmark).agents
    for agent in agents:
        prompt = role_prompt(system, benchmark, agent)
        assert prompt and len(prompt) > 40, (benchmark, system, agent)
    tools = pair_tools(system, benchmark)
    assert tools and all({"name", "description", "parameters"} <= set(t) for t in tools)
    # every tool the scripted policy calls is offered to a model in the same seat
    _, steps, _ = run_rollouts(
        benchmark, system, {**CONFIG["benchmarks"][benchmark], "n_tasks": 3}, 1, 0.0, 60
    )
    used = set(steps.filter(steps["kind"] == "action")["tool"])
    assert used <= {t["name"] for t in tools}, used - {t["name"] for t in tools}
