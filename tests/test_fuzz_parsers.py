"""Property-based tests of the model-output parsers: any text gives a parse that satisfies
the invariants (agent in the list, step an agent step, mode in the taxonomy or None) or
the documented `ParseError`, never another exception; well-formed answers read back."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from whowhen.attribution.llm import (
    ParseError,
    Verdict,
    failed,
    json_object,
    parse_answer,
    prediction_row,
)
from whowhen.attribution.llm_protocols import parse_half, parse_judgment
from whowhen.models.types import ChatResult, Usage
from whowhen.schema import PREDICTIONS, to_arrow

from .fuzz_strategies import fuzz_settings, json_values, truncated

AGENTS = ["solver", "Verifier", "web_surfer", "Orchestrator"]
STEPS = [0, 2, 3, 7, 12]
MODES = ["reasoning.wrong_operand", "action.wrong_argument", "verification.skipped_check"]
KEYS = ["agent", "step", "mode", "reason", "decisive", "half"]

LONG_DIGITS = "9" * 5000
DEEP = '{"agent": ' + "[" * 100_000 + "]" * 100_000 + "}"

key_values = st.one_of(
    json_values,
    st.sampled_from([*AGENTS, *MODES, "first", "second", "yes", "No", "first half", "both"]),
    st.sampled_from(AGENTS).map(lambda a: f"{a} (thought)"),
    st.integers(-3, 15).flatmap(lambda n: st.sampled_from([f"Step {n}", f" {n} ", f"[{n}]", n])),
)
answer_objects = st.dictionaries(
    st.sampled_from(KEYS) | st.text(max_size=6), key_values, max_size=6
)


@st.composite
def answers(draw: st.DrawFn) -> str:
    """Model-like replies: a JSON object, bare, fenced, in prose, truncated or corrupted."""
    body = json.dumps(draw(answer_objects), ensure_ascii=draw(st.booleans()))
    form = draw(st.sampled_from(["bare", "fenced", "prose", "truncated", "spliced"]))
    if form == "fenced":
        return f"```{draw(st.sampled_from(['json', '']))}\n{body}\n```"
    if form == "prose":
        return draw(st.text(max_size=20)) + body + draw(st.text(max_size=20))
    if form == "truncated":
        return truncated(body, draw(st.integers(0, len(body))))
    if form == "spliced":
        at = draw(st.integers(0, len(body)))
        return body[:at] + draw(st.text(min_size=1, max_size=5)) + body[at:]
    return body


replies = st.one_of(st.text(), answers())
mode_lists = st.sampled_from([None, [], MODES])


def _check_mode(mode: Any, modes: list[str] | None) -> None:
    assert mode is None or (isinstance(mode, str) and mode)
    if modes and mode is not None:
        assert mode in modes


@fuzz_settings(200)
@given(replies)
@example('{"agent": "solver", "step": ' + LONG_DIGITS + "}")
@example(DEEP)
@example("```json\n{}\n```{")
def test_json_object_gives_a_dict_or_parse_error(text: str) -> None:
    try:
        value = json_object(text)
    except ParseError as exc:
        assert str(exc)
    else:
        assert isinstance(value, dict)


_plain = st.text(max_size=15).filter(lambda s: "{" not in s and "`" not in s)


@fuzz_settings(200)
@given(
    st.dictionaries(st.text(max_size=8), json_values, max_size=5),
    _plain,
    st.text(max_size=15).filter(lambda s: "`" not in s),
    st.booleans(),
    st.booleans(),
)
@example({"reason": "the {x} was wrong"}, "", "", True, False)
@example({"reason": "}"}, "Answer: ", " done", True, True)
def test_json_object_reads_back_the_first_object(
    data: dict[str, Any], before: str, after: str, ascii_only: bool, fenced: bool
) -> None:
    """A JSON object in a reply (prose around it, or a code fence) is read back exactly,
    braces inside its strings included."""
    body = json.dumps(data, ensure_ascii=ascii_only)
    if "`" in body or any(isinstance(v, float) and v != v for v in _leaves(data)):
        return  # a backtick inside the object could close a fence; NaN != NaN
    text = f"{before}```json\n{body}\n```{after}" if fenced else before + body + after
    assert json_object(text) == data


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


@fuzz_settings(200)
@given(replies, mode_lists)
@example('{"agent": "solver", "step": "' + LONG_DIGITS + '"}', None)
@example('{"agent": "solver", "step": ' + LONG_DIGITS + "}", None)
@example('{"agent": "solver (thought)", "step": "Step 3", "reason": "a } b"}', MODES)
@example(DEEP, None)
def test_parse_answer_invariants(text: str, modes: list[str] | None) -> None:
    try:
        agent, step, mode, reason = parse_answer(text, AGENTS, STEPS, modes)
    except ParseError as exc:
        assert str(exc)
        return
    assert agent in AGENTS
    assert isinstance(step, int) and step in STEPS
    _check_mode(mode, modes)
    assert isinstance(reason, str)


names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,10}", fullmatch=True)


@fuzz_settings(150)
@given(
    st.lists(names, min_size=1, max_size=5, unique_by=str.lower),
    st.lists(st.integers(0, 10**6), min_size=1, max_size=6, unique=True),
    st.data(),
)
def test_parse_answer_reads_a_well_formed_answer(
    agents: list[str], steps: list[int], data: st.DataObject
) -> None:
    agent = data.draw(st.sampled_from(agents))
    step = data.draw(st.sampled_from(steps))
    mode = data.draw(st.sampled_from([None, *MODES]))
    reason = data.draw(st.text(max_size=30))
    reply = json.dumps({"agent": agent, "step": step, "mode": mode, "reason": reason})
    assert parse_answer(reply, agents, steps, MODES) == (agent, step, mode, reason)


@fuzz_settings(200)
@given(replies, mode_lists)
@example('{"decisive": ' + LONG_DIGITS + "}", None)
@example(DEEP, None)
def test_parse_judgment_invariants(text: str, modes: list[str] | None) -> None:
    try:
        decisive, mode, reason = parse_judgment(text, modes)
    except ParseError as exc:
        assert str(exc)
        return
    assert isinstance(decisive, bool)
    _check_mode(mode, modes)
    assert isinstance(reason, str)


@fuzz_settings(200)
@given(replies, mode_lists)
@example('{"half": ' + LONG_DIGITS + "}", None)
@example(DEEP, None)
def test_parse_half_invariants(text: str, modes: list[str] | None) -> None:
    try:
        half, mode, reason = parse_half(text, modes)
    except ParseError as exc:
        assert str(exc)
        return
    assert half in ("first", "second")
    _check_mode(mode, modes)
    assert isinstance(reason, str)


@fuzz_settings(100)
@given(st.booleans(), st.sampled_from(["first", "second"]), st.sampled_from([None, *MODES]))
def test_judgment_and_half_read_well_formed_answers(
    decisive: bool, half: str, mode: str | None
) -> None:
    judged = json.dumps({"decisive": decisive, "mode": mode, "reason": "r {x}"})
    assert parse_judgment(judged, MODES) == (decisive, mode, "r {x}")
    halved = json.dumps({"half": half, "mode": mode, "reason": "r"})
    assert parse_half(f"```json\n{halved}\n```", MODES) == (half, mode, "r")


surrogate_text = st.text(st.characters(categories=["Cs"]) | st.characters(), max_size=8)
surrogate_replies = st.fixed_dictionaries(
    {"agent": st.sampled_from(AGENTS), "step": st.sampled_from(STEPS)},
    optional={"mode": surrogate_text, "reason": surrogate_text},
).flatmap(lambda d: st.sampled_from([json.dumps(d), json.dumps(d, ensure_ascii=False)]))


@fuzz_settings(150)
@given(st.one_of(replies, surrogate_replies, surrogate_text), mode_lists)
@example('{"agent": "solver", "step": 3, "mode": "\\udfff", "reason": "\\ud800"}', None)
def test_any_reply_makes_a_storable_prediction(text: str, modes: list[str] | None) -> None:
    """Whatever the reply (lone surrogates from JSON escapes included), its prediction row
    fits the predictions table: one odd reply never fails the attributor's whole table."""
    try:
        verdict = Verdict(*parse_answer(text, AGENTS, STEPS, modes), True)
    except ParseError as exc:
        verdict = failed(str(exc))
    result = ChatResult(text, Usage(3, 2), 0.0, 0.1, False, 1)
    row = prediction_row("fuzz", "r1", verdict, [result])
    table = to_arrow([row], PREDICTIONS)
    assert table.num_rows == 1 and table.column("parse_ok")[0].as_py() == verdict.ok
