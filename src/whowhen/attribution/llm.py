"""LLM attribution through the model layer: the all-at-once protocol (the whole trajectory
in one prompt), structured JSON output, robust parsing and one repair request, and the
engine every protocol runs on: a protocol is a generator per run that yields questions
(`Ask`) and receives answers; `drive` advances all runs in lockstep, one round of
concurrent calls (plus one repair round) at a time. The sequential protocols of Who&When
(step_by_step, binary_search, hybrid) and `attribute_llm`, which dispatches them through
`kinds.PROTOCOLS`, live in `llm_protocols`: this module is what they share, so it imports
none of them.

An answer that still cannot be used after the repair is recorded with its raw text
and `parse_ok = False`, and is scored as wrong; it never stops the other items.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, cast

import polars as pl

from whowhen.media import media_path
from whowhen.models import ChatRequest, ChatResult, ImagePart, Message, Settings, TextPart
from whowhen.schema import step_label

SYSTEM = (
    "You are an expert at debugging multi-agent LLM systems. The trajectory below failed "
    "its task. Find the decisive error: the earliest agent step whose mistake made the "
    "run fail. Answer with the agent's name, the step index as shown in brackets, the "
    "failure mode if you can name one, and a one-sentence reason."
)
REPAIR_HINT = "using an agent name from the list and a step index from the brackets"

Chunk = str | ImagePart
"""A piece of a user message: text (joined to its neighbours by newlines) or an image."""


@dataclass(frozen=True)
class LLMAttributor:
    name: str
    model: str
    protocol: str = "all_at_once"
    with_gold_answer: bool = False
    max_step_chars: int = 2000
    with_media: bool = False  # attach the steps' images / video frames as image parts


class ParseError(ValueError):
    pass


def mode_property(modes: list[str]) -> dict[str, Any]:
    mode: dict[str, Any] = {"type": ["string", "null"]}
    if modes:
        mode["enum"] = [*modes, None]
    return mode


def answer_schema(agents: list[str], modes: list[str]) -> dict[str, Any]:
    """Strict-mode compatible: every property required, nulls spelled out."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["agent", "step", "mode", "reason"],
        "properties": {
            "agent": {"type": "string", "enum": agents},
            "step": {"type": "integer"},
            "mode": mode_property(modes),
            "reason": {"type": "string"},
        },
    }


def step_line(s: dict[str, Any], max_chars: int) -> str:
    """One step as the model sees it: `[index] actor (kind): content`, then its tool call
    (an imported role's detail in place of the kind: `schema.step_label`)."""
    text = s["content"]
    if len(text) > max_chars:
        text = text[:max_chars] + f" [... {len(s['content']) - max_chars} characters cut]"
    call = f"\n    -> {s['tool']}({s['tool_args'] or ''})" if s["tool"] else ""
    return f"[{s['step']}] {step_label(s)}: {text}{call}"


def render_steps(steps: pl.DataFrame, max_chars: int) -> str:
    return "\n".join(step_line(s, max_chars) for s in steps.sort("step").iter_rows(named=True))


def step_chunks(s: dict[str, Any], max_chars: int, with_media: bool) -> tuple[Chunk, ...]:
    """The step's line, followed by its images or frames when media are attached."""
    if not with_media or not s.get("media"):
        return (step_line(s, max_chars),)
    return (step_line(s, max_chars), *(ImagePart(str(media_path(r))) for r in s["media"]))


def user_message(chunks: list[Chunk]) -> Message:
    """Text chunks joined by newlines (one text part when there is no image, so a text-only
    prompt is exactly the joined string); images as their own parts, in place."""
    parts: list[TextPart | ImagePart] = []
    text: list[str] = []
    for chunk in chunks:
        if isinstance(chunk, str):
            text.append(chunk)
            continue
        if text:
            parts.append(TextPart("\n".join(text)))
            text = []
        parts.append(chunk)
    if text:
        parts.append(TextPart("\n".join(text)))
    return Message("user", tuple(parts))


def prompt_head(
    attributor: LLMAttributor,
    run: dict[str, Any],
    agents: list[str],
    modes: list[str] | dict[str, str],
) -> str:
    """Task, optional gold answer, agents and modes: the fixed start of every prompt."""
    parts = []
    if run.get("question"):
        parts.append(f"Task: {run['question']}")
    if attributor.with_gold_answer and run.get("gold_answer") is not None:
        parts.append(f"Correct answer: {run['gold_answer']}")
    parts.append(f"Agents: {', '.join(agents)}")
    if isinstance(modes, dict) and modes:
        parts.append("Failure modes:\n" + "\n".join(f"- {k}: {v}" for k, v in modes.items()))
    elif modes:
        parts.append(f"Failure modes: {', '.join(modes)}")
    return "\n\n".join(parts)


def build_request(
    attributor: LLMAttributor,
    run: dict[str, Any],
    steps: pl.DataFrame,
    agents: list[str],
    modes: list[str] | dict[str, str],
) -> ChatRequest:
    """`modes` is a list of mode ids, or {id: definition} to put the taxonomy in the prompt.
    Without media the user message is one text, the same as before media existed."""
    chunks: list[Chunk] = [prompt_head(attributor, run, agents, modes) + "\n\nTrajectory:"]
    for s in steps.sort("step").iter_rows(named=True):
        chunks.extend(step_chunks(s, attributor.max_step_chars, attributor.with_media))
    chunks.append(
        '\nReply with a JSON object: {"agent": ..., "step": ..., "mode": ..., "reason": ...}.'
    )
    return ChatRequest(
        (Message.text("system", SYSTEM), user_message(chunks)),
        schema=answer_schema(agents, list(modes)),
        settings=Settings(temperature=0.0, max_tokens=400, seed=0),
        tag=run["run_id"],
    )


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
_DECODER = json.JSONDecoder()


def json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a reply (inside a code fence if there is one). Braces inside
    its strings are fine; anything unusable (bad or truncated JSON, an over-long number,
    nesting too deep for the decoder) is a ParseError."""
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    start = text.find("{")
    if start < 0:
        raise ParseError("no JSON object in the answer")
    try:
        value = _DECODER.raw_decode(text, start)[0]
    except json.JSONDecodeError as exc:
        depth = 0
        for ch in text[start:]:
            depth += ch == "{"
            depth -= ch == "}"
            if depth == 0:
                raise ParseError(f"invalid JSON ({exc.msg})") from None
        raise ParseError("unterminated JSON object") from None
    except RecursionError:
        raise ParseError("invalid JSON (nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer over Python's 4300-digit limit
        raise ParseError(f"invalid JSON ({str(exc).split(':')[0]})") from None
    if not isinstance(value, dict):
        raise ParseError("the JSON answer is not an object")
    return value


_json_object = json_object  # the earlier private name


def clean_mode(mode: Any, modes: list[str] | None) -> str | None:
    """A named mode, or None when it is empty or not one of `modes` (not fatal)."""
    return mode if isinstance(mode, str) and mode and (not modes or mode in modes) else None


def parse_answer(
    text: str,
    agents: list[str],
    steps: list[int],
    modes: list[str] | None = None,
) -> tuple[str, int, str | None, str]:
    """(agent, step, mode, reason) from a model answer, normalising common drift
    ("Orchestrator (thought)", "Step 5", different case)."""
    data = json_object(text)
    raw_agent = str(data.get("agent") or "").strip()
    by_lower = {a.lower(): a for a in agents}
    agent = by_lower.get(raw_agent.lower())
    if agent is None:
        first = re.match(r"[\w.-]+", raw_agent)
        agent = by_lower.get(first.group(0).lower()) if first else None
    if agent is None:
        raise ParseError(f"agent {raw_agent!r} is not one of {', '.join(agents)}")
    digits = re.search(r"-?\d+", str(data.get("step", "")))
    if not digits:
        raise ParseError(f"step {data.get('step')!r} is not a number")
    try:
        step = int(digits.group(0))
    except ValueError:  # more digits than Python converts
        raise ParseError(f"step of {len(digits.group(0))} digits is not a step index") from None
    if step not in steps:
        raise ParseError(f"step {step} is not an agent step of this trajectory")
    return agent, step, clean_mode(data.get("mode"), modes), str(data.get("reason") or "")


def repair_request(
    request: ChatRequest, answer: str, problem: str, hint: str = REPAIR_HINT
) -> ChatRequest:
    note = (
        f"Your answer could not be used: {problem}. Reply again with only the JSON object, {hint}."
    )
    return ChatRequest(
        (*request.messages, Message.text("assistant", answer), Message.text("user", note)),
        request.schema,
        request.settings,
        request.sample,
        request.tag,
    )


# The conversation engine: protocols are generators that yield questions (Ask) and
# receive answers; `drive` runs all runs' conversations in lockstep rounds.


@dataclass(frozen=True)
class Ask:
    """One question to the model and how to read its answer (the parser raises ParseError)."""

    request: ChatRequest
    parse: Callable[[str], Any]
    hint: str = REPAIR_HINT


@dataclass
class Answer:
    results: list[ChatResult]  # the call, and the repair if there was one
    value: Any  # the parsed answer, or the ParseError

    @property
    def ok(self) -> bool:
        return not isinstance(self.value, ParseError)

    @property
    def call_failed(self) -> bool:
        return not self.results[-1].ok


@dataclass(frozen=True)
class Verdict:
    agent: str | None
    step: int | None
    mode: str | None
    reason: str
    ok: bool


Conversation = Generator[Ask, Answer, Verdict]


def failed(reason: str) -> Verdict:
    return Verdict(None, None, None, reason, False)


def problem_of(answer: Answer) -> str:
    return f"call failed: {answer.results[-1].error}" if answer.call_failed else str(answer.value)


def ask_all(client: Any, asks: list[Ask]) -> list[Answer]:
    """One round: every question concurrently, then one repair round for the answers that
    came back but could not be used."""
    first = client.complete([q.request for q in asks])
    answers = [Answer([res], _parse(q, res)) for q, res in zip(asks, first, strict=True)]
    retry = [i for i, ans in enumerate(answers) if not ans.ok and not ans.call_failed]
    if retry:
        repairs = client.complete(
            [
                repair_request(
                    asks[i].request, first[i].text or "", str(answers[i].value), asks[i].hint
                )
                for i in retry
            ]
        )
        for i, res in zip(retry, repairs, strict=True):
            answers[i] = Answer([first[i], res], _parse(asks[i], res))
    return answers


def _parse(ask: Ask, res: ChatResult) -> Any:
    if not res.ok:
        return ParseError(f"call failed: {res.error}")
    try:
        return ask.parse(res.text or "")
    except ParseError as exc:
        return exc


def drive(client: Any, conversations: list[Conversation]) -> list[tuple[Verdict, list[ChatResult]]]:
    """Run the conversations in lockstep: each round sends every waiting question at once."""
    results: list[list[ChatResult]] = [[] for _ in conversations]
    verdicts: list[Verdict | None] = [None] * len(conversations)
    waiting: dict[int, Ask] = {}

    def advance(i: int, answer: Answer | None) -> None:
        try:
            conv = conversations[i]
            waiting[i] = next(conv) if answer is None else conv.send(answer)
        except StopIteration as stop:
            waiting.pop(i, None)
            verdicts[i] = stop.value

    for i in range(len(conversations)):
        advance(i, None)
    while waiting:
        order = sorted(waiting)
        for i, answer in zip(order, ask_all(client, [waiting[i] for i in order]), strict=True):
            results[i].extend(answer.results)
            advance(i, answer)
    return list(zip(cast(list[Verdict], verdicts), results, strict=True))  # all finished


def _storable(text: str | None) -> str | None:
    """Text as Parquet can hold it: a lone surrogate (a reply's `"\\ud800"` JSON escape)
    becomes "?" instead of failing the whole predictions table."""
    return None if text is None else text.encode("utf-8", "replace").decode("utf-8")


def prediction_row(name: str, run_id: str, v: Verdict, results: list[ChatResult]) -> dict[str, Any]:
    last = results[-1] if results else None
    raw = (last.text if last.text is not None else last.error) if last else None
    return {
        "run_id": run_id,
        "attributor": name,
        "agent": _storable(v.agent) if v.ok else None,
        "step": v.step if v.ok else None,
        "mode": _storable(v.mode) if v.ok else None,
        "reason": _storable(v.reason),
        "raw_output": _storable(raw),
        "parse_ok": v.ok,
        "calls": len(results),  # requests this answer took: repairs, cache hits, shared
        "tokens_in": sum(r.usage.input_tokens for r in results),
        "tokens_out": sum(r.usage.output_tokens for r in results),
        "cost_usd": round(sum(r.cost_usd for r in results), 10),
        "latency_s": round(sum(r.latency_s for r in results), 6),
    }
