"""The feedback loop with an LLM-played system, end to end: Snakemake runs the rollouts and
the feedback stage against the HTTP test server, whose agent errs on some tasks and takes
a visible feedback message into account; a rerun pays for no call twice."""

from __future__ import annotations

import json
import re
import zlib

import polars as pl
import pytest

from whowhen.agents.protocol import RULES_END
from whowhen.benchmarks.arithmetic.actions import calc_action
from whowhen.benchmarks.arithmetic.tasks import parse_problem
from whowhen.standin.responders import default_responder
from whowhen.standin.server import Behaviour, TestServer

from .helpers import mock_model_config
from .workdir import make_project, snakemake

pytestmark = pytest.mark.slow  # end to end: python -m pytest -m 'not slow' skips it

FIXED = "the decisive error was made by assistant at step 1."


def calc_agent(prompt: str) -> str:
    """A terse arithmetic agent: one calculator call per operation from its first turn
    (step 1), carrying the last observation, then final_answer."""
    prompt = prompt.split(RULES_END, 1)[-1]  # the run, not the rules' worked example
    problem = prompt.split("Problem: ", 1)[-1].split("\n", 1)[0]
    start, ops = parse_problem(problem)
    observations = re.findall(r"^Observation \(calculator\): (\S+)", prompt, re.M)
    total = observations[-1] if observations else str(start)
    if len(observations) >= len(ops):
        return f'Thought: done.\nAction: final_answer({{"answer": "{total}"}})'
    op, n = ops[len(observations)]
    action = calc_action("assistant", op, total, str(n))
    return f"Thought: {action.content}\nAction: calculator({json.dumps(action.tool_args)})"


def slipping_agent(prompt: str, schema: dict | None) -> str:
    """A terse agent (`calc_agent`), except that on half the problems its first
    calculation is off by one, unless a feedback message in the prompt points at that
    step (step 1). Attribution requests get the stand-in's answers."""
    if RULES_END not in prompt or "Problem: " not in prompt.split(RULES_END, 1)[-1]:
        return default_responder(prompt, schema)
    text = calc_agent(prompt)
    run = prompt.split(RULES_END, 1)[-1]
    problem = run.split("Problem: ", 1)[1].split("\n", 1)[0]
    if zlib.crc32(problem.encode()) % 2 or "Observation (calculator)" in run or FIXED in run:
        return text
    return re.sub(
        r"\d+", lambda m: str(int(m.group(0)) + 1), text.split("Action:", 1)[1], count=1
    ).join([text.split("Action:", 1)[0] + "Action:", ""])


SOURCES = ["none", "self_critique", "first_agent_step", "last_agent_step",
           "mock_all_at_once", "oracle"]  # fmt: skip


def _config(url: str) -> dict:
    return mock_model_config(
        url,
        benchmarks={"arithmetic": {"n_tasks": 8, "min_ops": 2, "max_ops": 3}},
        systems=["llm_react"],
        agents={"model": "mock"},
        feedback={
            "benchmarks": ["arithmetic"],
            "systems": ["llm_react"],
            "rounds": 2,
            "sources": SOURCES,
        },
    )


def test_feedback_loop_with_an_llm_policy_over_http(tmp_path) -> None:
    target = "results/feedback/arithmetic/llm_react/attempts.parquet"
    with TestServer(Behaviour(responder=slipping_agent)) as srv:
        project = make_project(tmp_path / "p", _config(srv.url))
        proc = snakemake(project, "--cores", "2", target)
        assert proc.returncode == 0, proc.stderr[-3000:]
        calls = srv.completed
        attempts = pl.read_parquet(project / target)
        rollouts = pl.read_parquet(project / "results/rollouts/arithmetic/llm_react/runs.parquet")
        failed = rollouts.filter(~pl.col("success")).height
        assert 0 < failed < rollouts.height
        solved = dict(
            attempts.filter("success").group_by("source").agg(pl.col("task_id").n_unique()).rows()
        )
        # pointing at the agent's real error (step 1) fixes every failure in round 1
        first = attempts.filter(pl.col("source") == "first_agent_step")
        assert first.filter(pl.col("round") == 1)["success"].all() and first.height == failed
        # pointing elsewhere, or nowhere, does not: the model repeats itself
        assert "last_agent_step" not in solved and "none" not in solved
        assert solved["first_agent_step"] == failed
        # the feedback was a message the model saw, and model attribution was paid for
        asked = [json.dumps(b["messages"]) for b in srv.bodies]
        assert any(FIXED in text for text in asked)
        critique = attempts.filter(pl.col("source") == "self_critique")
        assert (critique["fb_tokens_in"] > 0).all() and (critique["fb_cost_usd"] >= 0).all()
        # no replay of a model-played system: no gold, so no accuracy, and the oracle says so
        assert set(attempts["gold_status"]) == {"skipped"}
        assert attempts["step_correct"].null_count() == attempts.height
        oracle = attempts.filter(pl.col("source") == "oracle")
        assert not oracle["fb_ok"].any() and oracle["message"].str.contains("named no step").all()

        before = pl.read_parquet(project / target)
        proc = snakemake(project, "--cores", "2", target, "--forcerun", "feedback")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert srv.completed == calls  # every agent turn and attribution came from the cache
        assert pl.read_parquet(project / target).equals(before)
