"""The in-process scripted stand-in model (`scripted/standin`) of the offline default: it
answers through the same ModelClient as the real providers (usage, cost, cache, retries),
deterministically, with the test server's responders — so it gives the same predictions
and token counts as the HTTP test server — and every protocol runs end to end on it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml

from whowhen.attribution.kinds import PROTOCOLS
from whowhen.attribution.llm import LLMAttributor
from whowhen.attribution.llm_protocols import attribute_llm
from whowhen.attribution.stage import stage
from whowhen.config import load_config
from whowhen.errors import WhowhenError
from whowhen.models import (
    DEFAULT_PRICES,
    ChatRequest,
    Message,
    ModelClient,
    ResponseCache,
    load_prices,
    parse_model,
)
from whowhen.models import scripted_provider as sp
from whowhen.models.batch import BatchRunner
from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, read_table, write_table
from whowhen.standin.responders import default_responder
from whowhen.standin.server import TestServer

from .conftest import ROOT
from .helpers import hand_trajectories, pipeline

PRICES = load_prices(DEFAULT_PRICES)
MODES = ["reasoning.wrong_operand"]
SYSTEM = "You debug multi-agent systems."
PROMPT = (
    "Agents: planner, solver\n\nTrajectory:\n[0] user (message): Add 2 and 3.\n"
    "[1] planner (message): Add them.\n[2] solver (action): 2 + 3 = 6"
)
SCHEMA = {
    "type": "object",
    "properties": {"agent": {"type": "string", "enum": ["planner", "solver"]}},
}


def _client(cache: Path | None = None, **kw: Any) -> ModelClient:
    spec = parse_model("standin", {"standin": {"id": "scripted/standin"}})
    return ModelClient(spec, PRICES, ResponseCache(cache) if cache else None, progress=False, **kw)


def _answer_with(mp: pytest.MonkeyPatch, responder: sp.Responder, **kw: Any) -> None:
    """Make `scripted/standin` answer with `responder` for one test (same revision unless
    `kw` says otherwise), restored afterwards."""
    entry = dataclasses.replace(sp.RESPONDERS["standin"], respond=responder, **kw)
    mp.setitem(sp.RESPONDERS, "standin", entry)


def _request(prompt: str = PROMPT, **kw: Any) -> ChatRequest:
    messages = (Message.text("system", SYSTEM), Message.text("user", prompt))
    return ChatRequest(messages, schema=SCHEMA, **kw)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every prompt the stand-in's responder is actually run on (a cache hit runs none)."""
    seen: list[str] = []

    def responder(prompt: str, schema: dict[str, Any] | None) -> str:
        seen.append(prompt)
        return default_responder(prompt, schema)

    _answer_with(monkeypatch, responder)
    return seen


def test_answers_through_the_client_with_usage_and_cost() -> None:
    [res] = _client().complete([_request()])
    assert res.ok and not res.cached and res.attempts == 1 and res.finish_reason == "stop"
    assert json.loads(res.text or "")["agent"] == "planner"  # the first agent step
    prompt = f"{SYSTEM}\n{PROMPT}"  # every message's text, joined by newlines
    assert res.usage.input_tokens == len(prompt) // 4
    assert res.usage.output_tokens == len(res.text or "") // 4 > 0
    assert res.usage.cached_tokens == 0
    price = PRICES.price("scripted/standin")
    assert price is not None and price.family == "standin" and price.open_weight
    expected = (res.usage.input_tokens * 0.10 + res.usage.output_tokens * 0.40) / 1e6
    assert res.cost_usd == pytest.approx(expected) and res.cost_usd > 0


def test_is_deterministic() -> None:
    requests = [_request(), _request(PROMPT.replace("6", "5")), _request(sample=1)]
    a, b = _client().complete(requests), _client().complete(requests)
    assert [(r.text, r.usage, r.cost_usd) for r in a] == [(r.text, r.usage, r.cost_usd) for r in b]


def test_cached_answer_is_not_recomputed(tmp_path: Path, counted: list[str]) -> None:
    first = _client(tmp_path)
    [res1] = first.complete([_request()])
    assert len(counted) == 1 and first.stats.calls == 1
    second = _client(tmp_path)  # a fresh client, as in a rerun
    [res2] = second.complete([_request()])
    assert len(counted) == 1  # the responder did not run again
    assert res2.cached and second.stats.as_dict()["calls"] == 0 and second.stats.cache_hits == 1
    assert (res2.text, res2.usage, res2.cost_usd) == (res1.text, res1.usage, res1.cost_usd)
    second.complete([_request(sample=1)])  # another sample is another entry
    assert len(counted) == 2


def test_the_cache_key_follows_the_responders_code(
    tmp_path: Path, counted: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Editing the responders is a new model version: old answers are not served."""
    _client(tmp_path).complete([_request()])
    _answer_with(monkeypatch, sp.RESPONDERS["standin"].respond, revision="edited")
    _client(tmp_path).complete([_request()])
    assert len(counted) == 2


def test_a_failing_responder_is_one_unretried_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(prompt: str, schema: dict[str, Any] | None) -> str:
        raise ValueError("no rule for this prompt")

    _answer_with(monkeypatch, broken)
    client = _client(backoff_s=0.0)
    [res] = client.complete([_request()])
    assert not res.ok and res.error is not None and res.error.startswith("bad_request")
    assert res.attempts == 1 and client.stats.retries == 0


def test_offered_tools_come_back_as_native_tool_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    def agent(prompt: str, schema: dict[str, Any] | None) -> str:
        return 'Thought: add.\nAction: calculator({"expression": "2 + 3"})'

    _answer_with(monkeypatch, agent)
    tool = {"name": "calculator", "description": "", "parameters": {"type": "object"}}
    [res] = _client().complete([_request(tools=(tool,))])
    assert res.finish_reason == "tool_calls" and res.text == "Thought: add."
    assert res.tool_calls == (("calculator", '{"expression": "2 + 3"}'),)


def test_unknown_scripted_model_and_batch_mode_are_refused() -> None:
    with pytest.raises(WhowhenError, match="scripted/standin"):
        parse_model("scripted/oracle")
    with pytest.raises(WhowhenError, match="batch"):
        BatchRunner(_client(), "unused")


@pytest.fixture(scope="module")
def hand() -> dict[str, pl.DataFrame]:
    return hand_trajectories()


# (agent, step, calls) per run, by hand from the stand-in's rules: all_at_once names the
# first agent step; a step is decisive when it writes a number seen in no earlier step
EXPECTED = {
    "all_at_once": {"h1": ("planner", 1, 1), "h2": ("solver", 1, 1)},
    "step_by_step": {"h1": ("solver", 6, 4), "h2": ("solver", 3, 2)},
    "binary_search": {"h1": ("solver", 6, 2), "h2": ("solver", 3, 1)},
    "hybrid": {"h1": ("planner", 1, 3), "h2": ("solver", 1, 3)},
}


def _attribute(protocol: str, data: dict[str, pl.DataFrame], client: Any) -> pl.DataFrame:
    a = LLMAttributor(f"standin_{protocol}", "standin", protocol)
    return attribute_llm(data["runs"], data["steps"], a, client, MODES)


@pytest.mark.parametrize("protocol", PROTOCOLS.names())
def test_every_protocol_end_to_end(tmp_path: Path, hand, protocol: str) -> None:
    client = _client(tmp_path)
    preds = _attribute(protocol, hand, client)
    got = {r["run_id"]: (r["agent"], r["step"], r["calls"]) for r in preds.iter_rows(named=True)}
    assert got == EXPECTED[protocol]
    assert preds["parse_ok"].all() and client.stats.calls == preds["calls"].sum()
    assert (preds["tokens_in"] > 0).all() and (preds["tokens_out"] > 0).all()
    assert (preds["cost_usd"] > 0).all()
    rerun = _client(tmp_path)
    again = _attribute(protocol, hand, rerun)
    assert rerun.stats.calls == 0 and rerun.stats.cache_hits == preds["calls"].sum()
    assert again.drop("latency_s").equals(preds.drop("latency_s"))  # cost too, from the cache


def test_same_answers_and_tokens_as_the_http_test_server(hand) -> None:
    """One set of responders, one token rule: only the HTTP hop (and the price) differ."""
    same = ["run_id", "agent", "step", "mode", "reason", "raw_output", "calls"]
    same += ["tokens_in", "tokens_out"]
    with TestServer() as server:
        mock = "openai-compatible/mock"
        http = ModelClient(parse_model(mock, {mock: {"base_url": server.url}}), PRICES)
        http.progress = False
        for protocol in PROTOCOLS.names():
            over_http = _attribute(protocol, hand, http).select(same)
            in_process = _attribute(protocol, hand, _client()).select(same)
            assert in_process.equals(over_http), protocol


def _default_config() -> dict[str, Any]:
    return load_config(ROOT / "config" / "config.yaml", root=ROOT)


def test_default_config_runs_one_standin_attributor_per_protocol() -> None:
    cfg = _default_config()
    llm = cfg["attribution"]["llm"]
    assert sorted(item["protocol"] for item in llm) == sorted(PROTOCOLS.names())
    for item in llm:
        spec = parse_model(item["model"], cfg["models"])
        assert spec.model_id == "scripted/standin"
        assert item["name"] == f"standin_{item['protocol']}"  # <family>_<protocol>
    price = PRICES.price("scripted/standin")
    assert price is not None and price.family == "standin"
    raw = yaml.safe_load(DEFAULT_PRICES.read_text())
    assert raw["models"]["scripted/standin"]["open_weight"] is True


def test_the_attribution_stage_runs_the_default_standin_attributors(tmp_path: Path) -> None:
    """The Snakemake edge with the default config's attributors and models, on a tiny
    built dataset: one priced prediction per run, and a rerun makes no new call."""
    cfg = _default_config()
    data = pipeline("solver_verifier")
    inputs = {}
    for name, spec in (("runs", RUNS), ("steps", STEPS), ("labels", LABELS)):
        inputs[name] = str(write_table(data[name], spec, tmp_path / f"{name}.parquet"))
    llm = {**cfg["llm"], "cache_dir": str(tmp_path / "cache"), "progress": False}
    llm["prices"] = str(DEFAULT_PRICES)
    params = {
        "attribution": cfg["attribution"],
        "models": cfg["models"],
        "llm": llm,
        "taxonomy": str(ROOT / cfg["taxonomy"]["file"]),
    }
    calls = _count_calls(stage, params, inputs, tmp_path)
    assert calls > 0
    assert _count_calls(stage, params, inputs, tmp_path) == 0  # all from the cache


def _count_calls(run: Callable[..., None], params: dict, inputs: dict, out: Path) -> int:
    """Run every configured LLM attributor; the responder runs it took."""
    seen: list[str] = []

    def responder(prompt: str, schema: dict[str, Any] | None) -> str:
        seen.append(prompt)
        return default_responder(prompt, schema)

    with pytest.MonkeyPatch.context() as mp:
        _answer_with(mp, responder)
        for item in params["attribution"]["llm"]:
            path = out / f"{item['name']}.parquet"
            run(params, inputs, {"predictions": str(path)}, {"attributor": item["name"]})
            preds = read_table(path, PREDICTIONS)
            assert preds.height == len(read_table(inputs["runs"], RUNS))
            assert preds["parse_ok"].all() and (preds["cost_usd"] > 0).any()
    return len(seen)
