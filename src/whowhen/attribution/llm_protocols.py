"""The Who&When attribution protocols as per-run conversations driven in lockstep, and
`attribute_llm`, the entry point that runs an attributor's protocol over a dataset.

- `all_at_once`: the whole trajectory, one answer (agent, step, mode, reason).
- `step_by_step`: for each agent step i in order, the trajectory up to step i and the
  question "is step i the decisive error?"; stop at the first yes. The prompt is the fixed
  instructions, then the growing history, then the question, so every call shares the
  previous call's prompt up to its question (provider prefix caching applies). If no step
  is judged decisive, the last agent step is predicted and the reason says so.
- `binary_search`: over the agent steps. The model sees the trajectory from step 0 to the
  end of the current segment (the earlier steps are the context) and says whether the
  decisive error is in the first half (the larger one when odd) or the second half; the
  search ends on one agent step, whose actor is the agent.
- `hybrid`: all_at_once names the agent; then step_by_step over that agent's steps only
  (the history still shows every step). No yes: the all-at-once step is kept.

Every call asks for a JSON schema and gets one repair request. A *call* that fails
(transport, cost limit) ends that run's protocol with `parse_ok = False` and no answer (a
rerun resumes from the response cache). An *answer* still unusable after the
repair falls back deterministically: step_by_step and hybrid read it as "not decisive",
binary_search takes the earlier half (never a coin flip); the reason counts fallbacks.
A run with no usable answer at all (or no usable all-at-once answer in hybrid) gets
`parse_ok = False` and no agent or step, so it is scored as wrong. Calls, tokens, cost
and latency are summed over all of a run's calls, repairs included.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import polars as pl

from whowhen.attribution.baselines import agent_steps
from whowhen.attribution.kinds import PROTOCOLS
from whowhen.attribution.llm import (
    Answer,
    Ask,
    Chunk,
    Conversation,
    LLMAttributor,
    ParseError,
    Verdict,
    build_request,
    clean_mode,
    drive,
    failed,
    json_object,
    mode_property,
    parse_answer,
    prediction_row,
    problem_of,
    prompt_head,
    step_chunks,
    user_message,
)
from whowhen.models import ChatRequest, Message, Settings
from whowhen.schema import PREDICTIONS, to_arrow

log = logging.getLogger(__name__)

JUDGE_SYSTEM = (
    "You are an expert at debugging multi-agent LLM systems. The trajectory below failed "
    "its task. It is shown one step at a time; judge whether its latest step is the "
    "decisive error: the earliest agent step whose mistake made the run fail. Judge only "
    "from the steps shown."
)
HALF_SYSTEM = (
    "You are an expert at debugging multi-agent LLM systems. The trajectory below failed "
    "its task. The decisive error (the earliest agent step whose mistake made the run "
    "fail) lies in a segment of it; the steps before the segment are context. Say "
    "whether the decisive error is in the first or the second half of the segment."
)
JUDGE_QUESTION = "Question: Is step [{step}] ({actor}) the decisive error?"
HALF_QUESTION = (
    "Question: The decisive error is in steps [{a}] to [{b}]. Is it in the first half "
    "(steps [{a}] to [{m}]) or in the second half (steps [{m2}] to [{b}])?"
)
JUDGE_HINT = 'with "decisive" true or false'
HALF_HINT = 'with "half" set to "first" or "second"'
SETTINGS = Settings(temperature=0.0, max_tokens=300, seed=0)


@dataclass(frozen=True)
class Trajectory:
    """One run prepared once: its steps in order, rendered, and its agent steps."""

    run: dict[str, Any]
    frame: pl.DataFrame
    steps: list[dict[str, Any]]
    chunks: list[tuple[Chunk, ...]]  # per step, in order
    candidates: list[tuple[int, str]]  # agent steps: (step, actor)
    agents: list[str]
    head: str


def judge_schema(modes: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["decisive", "mode", "reason"],
        "properties": {
            "decisive": {"type": "boolean"},
            "mode": mode_property(modes),
            "reason": {"type": "string"},
        },
    }


def half_schema(modes: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["half", "mode", "reason"],
        "properties": {
            "half": {"type": "string", "enum": ["first", "second"]},
            "mode": mode_property(modes),
            "reason": {"type": "string"},
        },
    }


_YES, _NO = ("true", "yes", "y", "1"), ("false", "no", "n", "0")


def parse_judgment(text: str, modes: list[str] | None = None) -> tuple[bool, str | None, str]:
    """(decisive, mode, reason); "yes"/"no" strings and 0/1 are accepted for the boolean."""
    data = json_object(text)
    raw = data.get("decisive")
    word = str(raw).strip().lower().rstrip(".")
    if isinstance(raw, bool):
        decisive = raw
    elif word in _YES or word in _NO:
        decisive = word in _YES
    else:
        raise ParseError(f"decisive {raw!r} is not true or false")
    return decisive, clean_mode(data.get("mode"), modes), str(data.get("reason") or "")


def parse_half(text: str, modes: list[str] | None = None) -> tuple[str, str | None, str]:
    """("first" | "second", mode, reason); "1"/"2" and "first half" are accepted, anything
    naming both halves or neither is ambiguous (a ParseError)."""
    data = json_object(text)
    word = str(data.get("half", "")).strip().lower()
    first = word == "1" or word.startswith("first")
    second = word == "2" or word.startswith("second")
    if first == second:
        raise ParseError(f"half {data.get('half')!r} is not 'first' or 'second'")
    half = "first" if first else "second"
    return half, clean_mode(data.get("mode"), modes), str(data.get("reason") or "")


def prepare(
    attributor: LLMAttributor,
    run: dict[str, Any],
    frame: pl.DataFrame,
    candidates: pl.DataFrame,
    modes: list[str] | dict[str, str],
) -> Trajectory:
    frame = frame.sort("step")
    rows = list(frame.iter_rows(named=True))
    agents = sorted(set(candidates["actor"])) or ["unknown"]
    return Trajectory(
        run,
        frame,
        rows,
        [step_chunks(s, attributor.max_step_chars, attributor.with_media) for s in rows],
        list(zip(candidates["step"], candidates["actor"], strict=True)),
        agents,
        prompt_head(attributor, run, agents, modes),
    )


def _history(t: Trajectory, last_step: int) -> list[Chunk]:
    """Head and every step up to `last_step`, in order: the shared prefix of the calls."""
    out: list[Chunk] = [t.head + "\n\nTrajectory:"]
    for s, chunks in zip(t.steps, t.chunks, strict=True):
        if s["step"] > last_step:
            break
        out.extend(chunks)
    return out


def judge_request(t: Trajectory, step: int, actor: str, modes: list[str]) -> ChatRequest:
    question = JUDGE_QUESTION.format(step=step, actor=actor) + (
        ' Reply with a JSON object: {"decisive": true or false, "mode": ..., "reason": ...}.'
    )
    return ChatRequest(
        (
            Message.text("system", JUDGE_SYSTEM),
            user_message([*_history(t, step), "\n" + question]),
        ),
        schema=judge_schema(modes),
        settings=SETTINGS,
        tag=t.run["run_id"],
    )


def half_request(t: Trajectory, lo: int, mid: int, hi: int, modes: list[str]) -> ChatRequest:
    """Segment = agent steps lo..hi-1 (candidate positions); it runs up to the step before
    the next agent step (or the end), so the observations after its last action are shown."""
    c = t.candidates
    end = c[hi][0] - 1 if hi < len(c) else t.steps[-1]["step"]
    question = HALF_QUESTION.format(a=c[lo][0], b=end, m=c[mid][0] - 1, m2=c[mid][0]) + (
        ' Reply with a JSON object: {"half": "first" or "second", "mode": ..., "reason": ...}.'
    )
    return ChatRequest(
        (Message.text("system", HALF_SYSTEM), user_message([*_history(t, end), "\n" + question])),
        schema=half_schema(modes),
        settings=SETTINGS,
        tag=t.run["run_id"],
    )


@PROTOCOLS.register("all_at_once")
def all_at_once(a: LLMAttributor, t: Trajectory, modes: list[str] | dict[str, str]) -> Conversation:
    mode_ids = list(modes)
    steps = [s for s, _ in t.candidates]
    answer = yield Ask(
        build_request(a, t.run, t.frame, t.agents, modes),
        lambda text: parse_answer(text, t.agents, steps, mode_ids),
    )
    if not answer.ok:
        return failed(problem_of(answer))
    return Verdict(*answer.value, True)


@dataclass(frozen=True)
class Scan:
    found: Verdict | None
    usable: int
    fallbacks: int
    problem: str | None  # the last unusable answer's problem
    call_failed: bool = False


def _scan(
    t: Trajectory, targets: list[tuple[int, str]], modes: list[str]
) -> Generator[Ask, Answer, Scan]:
    """Ask about each target step in order; stop at the first yes or a failed call."""
    usable = fallbacks = 0
    problem = None
    for step, actor in targets:
        answer = yield Ask(
            judge_request(t, step, actor, modes),
            lambda text: parse_judgment(text, modes),
            JUDGE_HINT,
        )
        if answer.call_failed:
            return Scan(None, usable, fallbacks, problem_of(answer), call_failed=True)
        if not answer.ok:
            problem, fallbacks = problem_of(answer), fallbacks + 1
            continue
        usable += 1
        decisive, mode, reason = answer.value
        if decisive:
            return Scan(Verdict(actor, step, mode, reason, True), usable, fallbacks, problem)
    return Scan(None, usable, fallbacks, problem)


def _note(fallbacks: int, what: str) -> str:
    return f" [{fallbacks} unusable answer(s) read as {what}]" if fallbacks else ""


@PROTOCOLS.register("step_by_step")
def step_by_step(
    a: LLMAttributor, t: Trajectory, modes: list[str] | dict[str, str]
) -> Conversation:
    if not t.candidates:
        return failed("no agent step to judge")
    scan = yield from _scan(t, t.candidates, list(modes))
    if scan.call_failed:
        return failed(scan.problem or "call failed")
    if scan.found is not None:
        v = scan.found
        return Verdict(v.agent, v.step, v.mode, v.reason + _note(scan.fallbacks, "no"), True)
    if scan.usable == 0:
        return failed(f"no usable answer: {scan.problem}")
    step, actor = t.candidates[-1]
    reason = "no step judged decisive: the last agent step is predicted"
    return Verdict(actor, step, None, reason + _note(scan.fallbacks, "no"), True)


@PROTOCOLS.register("binary_search")
def binary_search(
    a: LLMAttributor, t: Trajectory, modes: list[str] | dict[str, str]
) -> Conversation:
    c, mode_ids = t.candidates, list(modes)
    if not c:
        return failed("no agent step to search")
    lo, hi = 0, len(c)
    usable = fallbacks = 0
    mode, reason, problem = None, "the only agent step", None
    while hi - lo > 1:
        mid = lo + (hi - lo + 1) // 2  # the first half is the larger one when odd
        answer = yield Ask(
            half_request(t, lo, mid, hi, mode_ids),
            lambda text: parse_half(text, mode_ids),
            HALF_HINT,
        )
        if answer.call_failed:
            return failed(problem_of(answer))
        if answer.ok:
            usable += 1
            half, mode, reason = answer.value
        else:
            fallbacks, problem, half = fallbacks + 1, problem_of(answer), "first"
        lo, hi = (lo, mid) if half == "first" else (mid, hi)
    if len(c) > 1 and usable == 0:
        return failed(f"no usable answer: {problem}")
    step, actor = c[lo]
    return Verdict(actor, step, mode, reason + _note(fallbacks, "the earlier half"), True)


@PROTOCOLS.register("hybrid")
def hybrid(a: LLMAttributor, t: Trajectory, modes: list[str] | dict[str, str]) -> Conversation:
    first = yield from all_at_once(a, t, modes)
    if not first.ok:
        return first
    targets = [(s, actor) for s, actor in t.candidates if actor == first.agent]
    scan = yield from _scan(t, targets, list(modes))
    if scan.call_failed:
        return failed(scan.problem or "call failed")
    if scan.found is not None:
        v = scan.found
        return Verdict(v.agent, v.step, v.mode, v.reason + _note(scan.fallbacks, "no"), True)
    # no yes: the all-at-once step, or (when it is another agent's) the agent's step
    # nearest to it, the earlier one on a tie
    step = min((s for s, _ in targets), key=lambda s: (abs(s - (first.step or 0)), s))
    kept = "the all-at-once step is kept" if step == first.step else f"its step {step} nearest"
    note = f" [no step of {first.agent} judged decisive: {kept}]"
    reason = first.reason + note + _note(scan.fallbacks, "no")
    return Verdict(first.agent, step, first.mode, reason, True)


def run_protocol(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    attributor: LLMAttributor,
    client: Any,
    modes: list[str] | dict[str, str],
) -> pl.DataFrame:
    """PREDICTIONS rows, one per run (sorted by run_id), with `attributor.protocol`."""
    protocol = PROTOCOLS.get(attributor.protocol).converse
    candidates = agent_steps(steps)
    by_run = {k[0]: f for k, f in steps.group_by("run_id")}
    cand_by_run = {k[0]: f for k, f in candidates.group_by("run_id")}
    ids, conversations = [], []
    for run in runs.sort("run_id").iter_rows(named=True):
        rid = run["run_id"]
        t = prepare(
            attributor,
            run,
            by_run.get(rid, steps.clear()),
            cand_by_run.get(rid, candidates.clear()),
            modes,
        )
        ids.append(rid)
        conversations.append(protocol(attributor, t, modes))
    rows = [
        prediction_row(attributor.name, rid, verdict, results)
        for rid, (verdict, results) in zip(ids, drive(client, conversations), strict=True)
    ]
    return pl.from_arrow(to_arrow(rows, PREDICTIONS))


def attribute_llm(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    attributor: LLMAttributor,
    client: Any,
    modes: list[str] | dict[str, str] | None = None,
) -> pl.DataFrame:
    """One prediction per run with the attributor's protocol. `client` is a ModelClient
    (concurrent live calls) or a BatchRunner (OpenAI Batch API): both have
    `complete(requests)` and `stats`. Sequential protocols advance all runs in lockstep,
    one round of concurrent calls at a time."""
    PROTOCOLS.get(attributor.protocol)  # an unknown protocol: one line naming the known ones
    preds = run_protocol(runs, steps, attributor, client, modes or [])
    log.info(
        "attribution %s (%s, %s): %d predictions, %d parsed, %d calls",
        attributor.name,
        attributor.model,
        attributor.protocol,
        preds.height,
        int(preds["parse_ok"].sum()),
        int(preds["calls"].sum()),
    )
    return preds
