"""The Who&When protocols (step_by_step, binary_search, hybrid) beside all_at_once, over real
HTTP against the test server: hand-computed call counts and answers, prefix sharing,
deterministic tie-breaking, garbage answers, failed calls, gold answers and media."""

from __future__ import annotations

import base64
import itertools
import json
from pathlib import Path

import polars as pl
import pytest

from whowhen.attribution.baselines import agent_steps
from whowhen.attribution.kinds import PROTOCOLS
from whowhen.attribution.llm import LLMAttributor, ParseError, build_request
from whowhen.attribution.llm_protocols import attribute_llm, parse_half, parse_judgment
from whowhen.errors import WhowhenError
from whowhen.media import media_path
from whowhen.models import DEFAULT_PRICES, ModelClient, ResponseCache, load_prices, parse_model
from whowhen.rollouts import run_rollouts
from whowhen.standin.responders import default_responder, suspect_steps
from whowhen.standin.server import TestServer

from .helpers import hand_trajectories, pipeline

PRICES = load_prices(DEFAULT_PRICES)
MODES = ["reasoning.wrong_operand"]
GARBAGE = "<<< I refuse to answer in JSON >>>"


def _client(server: TestServer, cache: Path | None = None, **kw) -> ModelClient:
    spec = parse_model(
        "openai-compatible/mock", {"openai-compatible/mock": {"base_url": server.url}}
    )
    return ModelClient(spec, PRICES, ResponseCache(cache) if cache else None, progress=False, **kw)


def _dead_client() -> ModelClient:
    spec = parse_model(
        "openai-compatible/mock", {"openai-compatible/mock": {"base_url": "http://127.0.0.1:9/v1"}}
    )
    return ModelClient(spec, PRICES, None, progress=False, max_retries=0, timeout_s=1)


@pytest.fixture(scope="module")
def server():
    """One test server for the module (stopping one takes half a second); each `_run`
    sets its responder and reads only its own requests."""
    with TestServer() as srv:
        yield srv


def _run(
    srv: TestServer, protocol: str, runs, steps, responder=default_responder, **kw
) -> tuple[pl.DataFrame, list]:
    srv.behaviour.responder = responder
    start = len(srv.bodies)
    preds = attribute_llm(
        runs, steps, LLMAttributor(protocol, "mock", protocol, **kw), _client(srv), MODES
    )
    return preds, list(srv.bodies[start:])


@pytest.fixture(scope="module")
def hand() -> dict[str, pl.DataFrame]:
    return hand_trajectories()


@pytest.fixture(scope="module")
def data() -> dict[str, pl.DataFrame]:
    return pipeline("solver_verifier")


# (agent, step, calls) per run, computed by hand from the mock's rules (see `hand`)
EXPECTED = {
    "all_at_once": {"h1": ("planner", 1, 1), "h2": ("solver", 1, 1)},
    "step_by_step": {"h1": ("solver", 6, 4), "h2": ("solver", 3, 2)},
    "binary_search": {"h1": ("solver", 6, 2), "h2": ("solver", 3, 1)},
    "hybrid": {"h1": ("planner", 1, 3), "h2": ("solver", 1, 3)},
}


def test_protocols_list() -> None:
    assert PROTOCOLS.names() == ("all_at_once", "step_by_step", "binary_search", "hybrid")
    assert suspect_steps("Trajectory:\n[0] user (message): 2\n[1] a (action): 2 and 3") == [1]
    task = "Trajectory:\n[0] user (message): Count.\n\nQuestion: How many? 4\n"
    asked = "\n\nQuestion: Is step [3] (a) the decisive error?"
    assert suspect_steps(
        task + "[1] a (action): 4\n[2] t (observation): 5\n[3] a (action): 6" + asked
    ) == [3]


@pytest.mark.parametrize("protocol", PROTOCOLS.names())
def test_hand_computed_answers_and_call_counts(server, hand, protocol) -> None:
    preds, bodies = _run(server, protocol, hand["runs"], hand["steps"])
    got = {r["run_id"]: (r["agent"], r["step"], r["calls"]) for r in preds.iter_rows(named=True)}
    assert got == EXPECTED[protocol]
    assert preds["parse_ok"].all() and len(bodies) == preds["calls"].sum()
    assert (preds["tokens_in"] > 0).all() and (preds["cost_usd"] > 0).all()
    for body in bodies:  # a JSON schema on every call
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["schema"]["required"]


def test_fallbacks_are_documented_in_the_reason(server, hand) -> None:
    sbs, _ = _run(server, "step_by_step", hand["runs"], hand["steps"])
    assert sbs.filter(run_id="h2")["reason"][0].startswith("no step judged decisive")
    hyb, _ = _run(server, "hybrid", hand["runs"], hand["steps"])
    assert "the all-at-once step is kept" in hyb.filter(run_id="h1")["reason"][0]


def _user_text(body: dict) -> str:
    content = body["messages"][1]["content"]
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)


def test_step_by_step_calls_share_a_growing_prefix(server, hand) -> None:
    _, bodies = _run(server, "step_by_step", hand["runs"].filter(run_id="h1"), hand["steps"])
    assert len(bodies) == 4
    asked = [int(_user_text(b).rsplit("Is step [", 1)[1].split("]")[0]) for b in bodies]
    assert asked == [1, 2, 4, 6]  # agent steps only, in order, up to the first yes
    for prev, nxt in itertools.pairwise(bodies):
        assert prev["messages"][0] == nxt["messages"][0]  # the fixed instructions
        text, following = _user_text(prev), _user_text(nxt)
        prefix = text[: text.rindex("\nQuestion:")]  # everything but the question
        assert following.startswith(prefix) and len(following) > len(text)
    assert "[3] calculator (observation): 42" not in _user_text(bodies[0])
    assert "[5] calculator (observation): 84" in _user_text(bodies[-1])
    assert "[7]" not in _user_text(bodies[-1])  # never beyond the step in question


def test_binary_search_segments_show_indices_and_context(server, hand) -> None:
    _, bodies = _run(server, "binary_search", hand["runs"].filter(run_id="h1"), hand["steps"])
    first, second = (_user_text(b) for b in bodies)
    assert "steps [1] to [7]. Is it in the first half (steps [1] to [5])" in first
    assert "steps [6] to [7]. Is it in the first half (steps [6] to [6])" in second
    assert "[2] solver (action): Adding." in second  # the context before the segment


def test_binary_search_is_deterministic_and_ends_on_an_agent_step(server, data) -> None:
    a, bodies_a = _run(server, "binary_search", data["runs"], data["steps"])
    b, bodies_b = _run(server, "binary_search", data["runs"], data["steps"])
    assert a.drop("latency_s").equals(b.drop("latency_s"))
    assert sorted(map(json.dumps, bodies_a)) == sorted(map(json.dumps, bodies_b))
    cands = agent_steps(data["steps"]).select("run_id", agent="actor", step="step")
    assert a.join(cands, on=["run_id", "agent", "step"]).height == a.height
    sbs, _ = _run(server, "step_by_step", data["runs"], data["steps"])
    # the stand-in model judges the same way in both protocols, so they agree
    assert a.select("run_id", "agent", "step").equals(sbs.select("run_id", "agent", "step"))


def test_binary_search_ties_break_to_the_earlier_half(server, hand) -> None:
    def responder(prompt: str, schema):
        if "steps [1] to [7]. Is it" in prompt.split("could not be used")[0]:
            return json.dumps({"half": "second", "mode": None, "reason": "late"})
        return json.dumps({"half": "both", "mode": None, "reason": "unsure"})  # ambiguous

    preds, _ = _run(
        server, "binary_search", hand["runs"].filter(run_id="h1"), hand["steps"], responder
    )
    row = preds.row(0, named=True)
    # second half [6, 7], then an ambiguous answer twice (call + repair): the earlier half
    assert (row["agent"], row["step"], row["calls"], row["parse_ok"]) == ("solver", 6, 3, True)
    assert "1 unusable answer(s) read as the earlier half" in row["reason"]
    preds, _ = _run(
        server,
        "binary_search",
        hand["runs"].filter(run_id="h1"),
        hand["steps"],
        lambda p, s: '{"half": "both", "mode": null, "reason": ""}',
    )
    row = preds.row(0, named=True)
    # always the earlier half: 5 agent steps -> 3 -> 2 -> 1, three decisions, each repaired
    assert (row["parse_ok"], row["agent"], row["step"], row["calls"]) == (False, None, None, 6)


def test_every_protocol_end_to_end_on_a_built_dataset(server, data) -> None:
    cands = agent_steps(data["steps"])
    by_run = {k[0]: f for k, f in cands.group_by("run_id")}
    aao = None
    for protocol in PROTOCOLS.names():
        preds, bodies = _run(server, protocol, data["runs"], data["steps"])
        assert preds.height == data["runs"].height and preds["parse_ok"].all()
        assert preds["run_id"].to_list() == sorted(data["runs"]["run_id"])
        assert len(bodies) == len(set(map(_canonical, bodies)))  # every request sent once
        assert preds["calls"].sum() >= len(bodies) and (preds["cost_usd"] > 0).all()
        for row in preds.iter_rows(named=True):
            frame = by_run[row["run_id"]]
            agent_of = dict(zip(frame["step"], frame["actor"], strict=True))
            assert agent_of[row["step"]] == row["agent"]
            if protocol == "step_by_step" and not row["reason"].startswith("no step"):
                assert row["calls"] == frame["step"].to_list().index(row["step"]) + 1
            if protocol == "hybrid":  # the step belongs to the all-at-once agent
                assert row["agent"] == aao[row["run_id"]]
        if protocol == "all_at_once":
            aao = dict(zip(preds["run_id"], preds["agent"], strict=True))


def test_hybrid_searches_only_the_all_at_once_agent(server, data) -> None:
    """All-at-once names the last agent step's actor (the verifier)."""

    def responder(prompt: str, schema):
        if '{"agent": ...' in prompt:
            lines = [ln for ln in prompt.splitlines() if ln.startswith("[")]
            last = [ln for ln in lines if "(observation)" not in ln][-1]
            actor, step = last.split()[1], int(last[1:].split("]")[0])
            return json.dumps({"agent": actor, "step": step, "mode": None, "reason": "r"})
        return default_responder(prompt, schema)

    preds, bodies = _run(server, "hybrid", data["runs"], data["steps"], responder)
    assert preds["parse_ok"].all() and (preds["agent"] == "verifier").all()
    judged = [_user_text(b).rsplit("Is step [", 1)[1] for b in bodies if "Is step [" in str(b)]
    assert judged and all(q.split("(", 1)[1].startswith("verifier)") for q in judged)


def test_hybrid_falls_back_to_its_agents_nearest_step(server, hand) -> None:
    """All-at-once says planner at step 6 (a solver step); no planner step (1, 7) is judged
    decisive, so the planner's step nearest to 6 is predicted: 7."""

    def responder(prompt: str, schema):
        if '{"agent": ...' in prompt:
            return json.dumps({"agent": "planner", "step": 6, "mode": None, "reason": "r"})
        return default_responder(prompt, schema)

    preds, _ = _run(server, "hybrid", hand["runs"].filter(run_id="h1"), hand["steps"], responder)
    row = preds.row(0, named=True)
    assert (row["agent"], row["step"], row["calls"], row["parse_ok"]) == ("planner", 7, 3, True)
    assert "its step 7 nearest" in row["reason"]


@pytest.mark.parametrize("protocol", PROTOCOLS.names())
def test_garbage_answers_are_recorded_not_fatal(server, data, protocol) -> None:
    runs, steps = data["runs"], data["steps"]
    clean, _ = _run(server, protocol, runs, steps)
    bad_question = runs.sort("run_id")["question"][0]
    bad = set(runs.filter(question=bad_question)["run_id"])

    def responder(prompt: str, schema):
        return GARBAGE if f"Task: {bad_question}\n" in prompt else default_responder(prompt, schema)

    mixed, _ = _run(server, protocol, runs, steps, responder)
    broken = mixed.filter(pl.col("run_id").is_in(bad))
    assert not broken["parse_ok"].any() and broken["agent"].is_null().all()
    assert broken["step"].is_null().all() and (broken["raw_output"] == GARBAGE).all()
    assert (broken["calls"] % 2 == 0).all()  # every call got its repair request
    keep = ["run_id", "agent", "step", "mode", "reason", "parse_ok", "calls"]
    others = pl.col("run_id").is_in(bad).not_()
    assert mixed.filter(others).select(keep).equals(clean.filter(others).select(keep))
    everything, _ = _run(server, protocol, runs, steps, lambda p, s: GARBAGE)
    assert everything.height == runs.height and not everything["parse_ok"].any()
    assert everything["step"].is_null().all()


@pytest.mark.parametrize("protocol", PROTOCOLS.names())
def test_a_failed_call_ends_the_run(hand, protocol) -> None:
    preds = attribute_llm(
        hand["runs"], hand["steps"], LLMAttributor("x", "m", protocol), _dead_client()
    )
    assert not preds["parse_ok"].any() and (preds["calls"] == 1).all()
    assert preds["reason"].str.starts_with("call failed").all()


def test_gold_answer_in_every_call_only_when_asked(server, hand) -> None:
    for protocol in PROTOCOLS.names():
        _, with_gold = _run(server, protocol, hand["runs"], hand["steps"], with_gold_answer=True)
        _, without = _run(server, protocol, hand["runs"], hand["steps"])
        assert all("Correct answer: " in _user_text(b) for b in with_gold)
        assert not any("Correct answer: " in _user_text(b) for b in without)


def test_rerun_is_served_from_the_cache(hand, tmp_path) -> None:
    """Every call of a sequential protocol is deterministic, so a rerun makes none."""
    with TestServer() as srv:
        for protocol in PROTOCOLS.names():
            attributor = LLMAttributor(protocol, "mock", protocol)
            first = attribute_llm(
                hand["runs"], hand["steps"], attributor, _client(srv, tmp_path), MODES
            )
            n = len(srv.requests)
            again = attribute_llm(
                hand["runs"], hand["steps"], attributor, _client(srv, tmp_path), MODES
            )
            assert len(srv.requests) == n
            keep = ["agent", "step", "calls", "tokens_in", "cost_usd"]
            assert first.select(keep).equals(again.select(keep))


def _canonical(body: dict) -> str:
    return json.dumps(body, sort_keys=True)


def test_fresh_cache_step_by_step_makes_one_call_per_distinct_request(data, tmp_path) -> None:
    """Runs that share a prefix ask identical questions in one round: each is sent once,
    and the predictions equal a rerun's from the cache (shared answers cost what a cache
    hit reports, so no row depends on which duplicate went first)."""
    attributor = LLMAttributor("sbs", "mock", "step_by_step")
    with TestServer() as srv:
        client = _client(srv, tmp_path)
        first = attribute_llm(data["runs"], data["steps"], attributor, client, MODES)
        distinct = len(set(map(_canonical, srv.bodies)))
        assert first["calls"].sum() > distinct, "no duplicate request: the test shows nothing"
        assert len(srv.requests) == distinct == client.stats.calls
        assert client.stats.calls + client.stats.shared == first["calls"].sum()
        rerun = _client(srv, tmp_path)
        again = attribute_llm(data["runs"], data["steps"], attributor, rerun, MODES)
        assert len(srv.requests) == distinct and rerun.stats.calls == 0
    assert first.drop("latency_s").equals(again.drop("latency_s"))


def test_unknown_protocol_is_refused(hand) -> None:
    with pytest.raises(WhowhenError, match="unknown LLM protocol 'vibes'; known: all_at_once, "):
        attribute_llm(hand["runs"], hand["steps"], LLMAttributor("x", "m", "vibes"), None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"decisive": true, "mode": "reasoning.wrong_operand", "reason": "r"}', (True, MODES[0])),
        ('```json\n{"decisive": "No", "mode": "vibes", "reason": "r"}\n```', (False, None)),
        ('{"decisive": 1, "reason": "r"}', (True, None)),
    ],
)
def test_parse_judgment(text, expected) -> None:
    assert parse_judgment(text, MODES)[:2] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"half": "first"}', "first"),
        ('{"half": "Second half"}', "second"),
        ('{"half": 2}', "second"),
    ],
)
def test_parse_half(text, expected) -> None:
    assert parse_half(text)[0] == expected


@pytest.mark.parametrize(
    "text", ['{"half": "both"}', '{"half": null}', "first", '{"decisive": "maybe"}']
)
def test_parse_half_and_judgment_reject(text) -> None:
    with pytest.raises(ParseError):
        parse_half(text) if "decisive" not in text else parse_judgment(text)


def _images(bodies: list[dict]) -> list[list[str]]:
    out = []
    for body in bodies:
        content = body["messages"][1]["content"]
        parts = [] if isinstance(content, str) else content
        out.append([p["image_url"]["url"] for p in parts if p.get("type") == "image_url"])
    return out


@pytest.mark.parametrize("protocol", PROTOCOLS.names())
def test_media_attached_only_when_asked(server, protocol) -> None:
    """chart_qa: the chart is attached to the task (step 0), so every call shows it."""
    runs, steps, _ = run_rollouts("chart_qa", "react", {"n_tasks": 2}, 1, 0.0, 40)
    charts = {media_path(ref).read_bytes() for ref in steps.filter(step=0)["media"].explode()}
    assert len(charts) == 2 and steps["media"].list.len().sum() == 2
    with_media, bodies = _run(server, protocol, runs, steps, with_media=True)
    without, plain = _run(server, protocol, runs, steps)
    images = _images(bodies)
    assert images and all(len(urls) == 1 for urls in images)
    assert {base64.b64decode(urls[0].split(",", 1)[1]) for urls in images} == charts
    assert not any(_images(plain))
    keep = ["run_id", "agent", "step", "parse_ok", "calls"]
    assert with_media.select(keep).equals(without.select(keep)) and with_media["parse_ok"].all()


def test_all_at_once_text_prompt_unchanged_without_media(hand) -> None:
    """One text part, laid out as before media existed (cached answers stay valid)."""
    run = hand["runs"].row(1, named=True)
    req = build_request(
        LLMAttributor("x", "m"), run, hand["steps"].filter(run_id="h2"), ["solver"], MODES
    )
    (part,) = req.messages[1].parts
    assert part.text == (
        "Task: What is 5 + 4?\n\nAgents: solver\n\nFailure modes: reasoning.wrong_operand"
        "\n\nTrajectory:\n[0] user (message): What is 5 + 4?\n"
        '[1] solver (action): Computing.\n    -> calculator({"expression": "5 + 4"})\n'
        "[2] calculator (observation): 9\n"
        '[3] solver (action): Done.\n    -> final_answer({"answer": "9"})\n\n'
        'Reply with a JSON object: {"agent": ..., "step": ..., "mode": ..., "reason": ...}.'
    )
