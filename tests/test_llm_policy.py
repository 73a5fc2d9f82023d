"""The LLM-played agent system over real HTTP: native tool calls and the text protocol."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from whowhen.agents.protocol import parse_action, system_prompt
from whowhen.assembly import make_system
from whowhen.benchmarks.arithmetic.env import TOOL_SPECS, ArithmeticEnv
from whowhen.benchmarks.arithmetic.tasks import generate_tasks
from whowhen.errors import WhowhenError
from whowhen.rollouts import run_rollouts
from whowhen.runtime import Action, run_episode, warm_start
from whowhen.standin.server import Behaviour, TestServer

from .key_hunt import SECRET
from .model_clients import mock_client


@pytest.mark.parametrize(
    ("text", "tool", "args"),
    [
        (
            'Thought: add.\nAction: calculator({"expression": "1 + 2"})',
            "calculator",
            {"expression": "1 + 2"},
        ),
        ("Thought: done\nAction: final_answer(42)", "final_answer", {"answer": "42"}),
        ('Action: calculator("3 * 4")', "calculator", {"expression": "3 * 4"}),
    ],
)
def test_text_protocol_parsing(text, tool, args) -> None:
    action = parse_action("assistant", text, TOOL_SPECS)
    assert (action.tool, action.tool_args) == (tool, args)


def test_unparseable_turn_is_a_message() -> None:
    action = parse_action("assistant", "I will think about it.", TOOL_SPECS)
    assert action.tool is None and action.content == "I will think about it."
    assert parse_action("assistant", "Action: rm(-rf)", TOOL_SPECS).tool is None
    assert "calculator(expression)" in system_prompt(TOOL_SPECS)


@pytest.mark.parametrize("native", [True, False])
def test_model_played_rollouts_with_and_without_native_tools(native: bool) -> None:
    with TestServer(Behaviour(native_tools=native)) as srv:
        runs, steps, _ = run_rollouts(
            "arithmetic", "llm_react", {"n_tasks": 3}, 1, 0.0, 150, client=mock_client(srv)
        )
        assert "tools" in srv.bodies[0]
        native_replies = srv.tool_call_replies
    assert runs["success"].all() and (runs["policy"] == "openai-compatible/mock").all()
    assert (runs["cost_usd"] > 0).all() and (runs["tokens_in"] > 0).all()
    actions = steps.filter(pl.col("kind") == "action")
    assert (actions["tokens_in"] > 0).all() and (actions["cost_usd"] > 0).all()
    # native tool calls came back (and were used) only from the server that has them
    assert (native_replies == actions.height) if native else (native_replies == 0)


def test_tools_not_offered_when_the_server_lacks_them() -> None:
    with TestServer(Behaviour(native_tools=False)) as srv:
        client = mock_client(srv, native=False)
        run_rollouts("arithmetic", "llm_react", {"n_tasks": 1}, 1, 0.0, 60, client=client)
        assert "tools" not in srv.bodies[0]


def test_warm_start_with_a_model_policy_replays_from_cache(tmp_path) -> None:
    task = generate_tasks(1, seed=4)[0]
    with TestServer() as srv:
        agent = make_system("llm_react", "arithmetic", client=mock_client(srv, cache=tmp_path))
        original = run_episode(ArithmeticEnv(task), agent, 60)
        calls = len(srv.requests)
        t = [i for i, s in enumerate(original.history) if s.tool == "calculator"][1]
        wrong = Action(
            "assistant", original.history[t].content, "calculator", {"expression": "1000 + 1000"}
        )
        result = warm_start(ArithmeticEnv(task), agent, original.history, t, wrong, 60)
        assert result.fidelity.exact and not result.episode.verdict.success
        # the prefix is replayed from the record: the model is asked only after step t
        assert len(srv.requests) - calls == sum(
            1 for s in result.episode.history[t + 1 :] if s.is_agent_step
        )


def test_llm_system_needs_a_model() -> None:
    with pytest.raises(WhowhenError, match=r"agents\.model"):
        make_system("llm_react", "arithmetic")


def test_an_agent_that_hunts_for_keys_finds_none(tmp_path) -> None:
    """The model-driven agent asks run_python to read the key every way it can; no
    observation, artifact, cache entry or request body holds it."""
    env = {**os.environ, "OPENAI_COMPATIBLE_API_KEY": SECRET, "OPENAI_API_KEY": SECRET}
    code = f"from tests.key_hunt import hunt\nhunt({str(tmp_path)!r})"
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    steps = pl.read_parquet(tmp_path / "steps.parquet")
    observations = steps.filter(pl.col("kind") == "observation")["content"].to_list()
    assert any("FileNotFoundError" in o for o in observations), observations
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) > 3  # the cache holds the model's answers
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
