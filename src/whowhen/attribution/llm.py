"""LLM attribution through the model layer: the all-at-once protocol (the whole trajectory
in one prompt), structured JSON output, robust parsing and one repair request.

An answer that still cannot be used after the repair is recorded with its raw text
and `parse_ok = False`, and is scored as wrong; it never stops the other items.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

import polars as pl

from whowhen.attribution.baselines import agent_steps
from whowhen.models import ChatRequest, ChatResult, Message, Settings
from whowhen.schema import PREDICTIONS, to_arrow

log = logging.getLogger(__name__)

PROTOCOLS = ("all_at_once",)
SYSTEM = (
    "You are an expert at debugging multi-agent LLM systems. The trajectory below failed "
    "its task. Find the decisive error: the earliest agent step whose mistake made the "
    "run fail. Answer with the agent's name, the step index as shown in brackets, the "
    "failure mode if you can name one, and a one-sentence reason."
)


@dataclass(frozen=True)
class LLMAttributor:
    name: str
    model: str
    protocol: str = "all_at_once"
    with_gold_answer: bool = False
    max_step_chars: int = 2000


class ParseError(ValueError):
    pass


def answer_schema(agents: list[str], modes: list[str]) -> dict[str, Any]:
    """Strict-mode compatible: every property required, nulls spelled out."""
    mode: dict[str, Any] = {"type": ["string", "null"]}
    if modes:
        mode["enum"] = [*modes, None]
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["agent", "step", "mode", "reason"],
        "properties": {
            "agent": {"type": "string", "enum": agents},
            "step": {"type": "integer"},
            "mode": mode,
            "reason": {"type": "string"},
        },
    }


def render_steps(steps: pl.DataFrame, max_chars: int) -> str:
    lines = []
    for s in steps.sort("step").iter_rows(named=True):
        text = s["content"]
        if len(text) > max_chars:
            text = text[:max_chars] + f" [... {len(s['content']) - max_chars} characters cut]"
        call = f"\n    -> {s['tool']}({s['tool_args'] or ''})" if s["tool"] else ""
        lines.append(f"[{s['step']}] {s['actor']} ({s['kind']}): {text}{call}")
    return "\n".join(lines)


def build_request(
    attributor: LLMAttributor,
    run: dict[str, Any],
    steps: pl.DataFrame,
    agents: list[str],
    modes: list[str] | dict[str, str],
) -> ChatRequest:
    """`modes` is a list of mode ids, or {id: definition} to put the taxonomy in the prompt."""
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
    parts.append("Trajectory:\n" + render_steps(steps, attributor.max_step_chars))
    parts.append(
        'Reply with a JSON object: {"agent": ..., "step": ..., "mode": ..., "reason": ...}.'
    )
    return ChatRequest(
        (Message.text("system", SYSTEM), Message.text("user", "\n\n".join(parts))),
        schema=answer_schema(agents, list(modes)),
        settings=Settings(temperature=0.0, max_tokens=400, seed=0),
        tag=run["run_id"],
    )


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def _json_object(text: str) -> dict[str, Any]:
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    start = text.find("{")
    if start < 0:
        raise ParseError("no JSON object in the answer")
    depth = 0
    for i, ch in enumerate(text[start:], start):
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0:
            try:
                value = json.loads(text[start : i + 1])
            except json.JSONDecodeError as exc:
                raise ParseError(f"invalid JSON ({exc.msg})") from None
            if not isinstance(value, dict):
                raise ParseError("the JSON answer is not an object")
            return value
    raise ParseError("unterminated JSON object")


def parse_answer(
    text: str,
    agents: list[str],
    steps: list[int],
    modes: list[str] | None = None,
) -> tuple[str, int, str | None, str]:
    """(agent, step, mode, reason) from a model answer, normalising common drift
    ("Orchestrator (thought)", "Step 5", different case)."""
    data = _json_object(text)
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
    step = int(digits.group(0))
    if step not in steps:
        raise ParseError(f"step {step} is not an agent step of this trajectory")
    mode = data.get("mode")
    return (
        agent,
        step,
        mode if isinstance(mode, str) and mode and (not modes or mode in modes) else None,
        str(data.get("reason") or ""),
    )


def repair_request(request: ChatRequest, answer: str, problem: str) -> ChatRequest:
    note = (
        f"Your answer could not be used: {problem}. Reply again with only the JSON "
        "object, using an agent name from the list and a step index from the brackets."
    )
    return ChatRequest(
        (*request.messages, Message.text("assistant", answer), Message.text("user", note)),
        request.schema,
        request.settings,
        request.sample,
        request.tag,
    )


def attribute_llm(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    attributor: LLMAttributor,
    client: Any,
    modes: list[str] | dict[str, str] | None = None,
) -> pl.DataFrame:
    """One prediction per run. `client` is a ModelClient (concurrent live calls) or a
    BatchRunner (OpenAI Batch API): both have `complete(requests)` and `stats`."""
    modes = modes or []
    mode_ids = list(modes)
    candidates = agent_steps(steps)
    by_run = {k[0]: f for k, f in steps.group_by("run_id")}
    cand_by_run = {k[0]: f for k, f in candidates.group_by("run_id")}
    items = []
    for run in runs.sort("run_id").iter_rows(named=True):
        cands = cand_by_run.get(run["run_id"], candidates.clear())
        agents = sorted(set(cands["actor"])) or ["unknown"]
        req = build_request(
            attributor, run, by_run.get(run["run_id"], steps.clear()), agents, modes
        )
        items.append((run["run_id"], req, agents, cands["step"].to_list()))
    first = client.complete([req for _, req, _, _ in items])
    outcome: dict[str, tuple[list[ChatResult], Any]] = {}
    retry: list[int] = []
    for i, ((run_id, _, agents, cand_steps), res) in enumerate(zip(items, first, strict=True)):
        outcome[run_id] = ([res], _try_parse(res, agents, cand_steps, mode_ids))
        if res.ok and isinstance(outcome[run_id][1], ParseError):
            retry.append(i)
    if retry:
        repairs = client.complete(
            [
                repair_request(items[i][1], first[i].text or "", str(outcome[items[i][0]][1]))
                for i in retry
            ]
        )
        for i, res in zip(retry, repairs, strict=True):
            run_id, _, agents, cand_steps = items[i]
            outcome[run_id] = (
                outcome[run_id][0] + [res],
                _try_parse(res, agents, cand_steps, mode_ids),
            )
    rows = [_row(attributor.name, run_id, *outcome[run_id]) for run_id, *_ in items]
    ok = sum(r["parse_ok"] for r in rows)
    log.info(
        "attribution %s (%s): %d predictions, %d parsed, %d repaired",
        attributor.name,
        attributor.model,
        len(rows),
        ok,
        len(retry),
    )
    return pl.from_arrow(to_arrow(rows, PREDICTIONS))


def _try_parse(res: ChatResult, agents: list[str], steps: list[int], modes: list[str]) -> Any:
    if not res.ok:
        return ParseError(f"call failed: {res.error}")
    try:
        return parse_answer(res.text or "", agents, steps, modes)
    except ParseError as exc:
        return exc


def _row(name: str, run_id: str, results: list[ChatResult], parsed: Any) -> dict[str, Any]:
    last = results[-1]
    ok = not isinstance(parsed, ParseError)
    agent, step, mode, reason = parsed if ok else (None, None, None, str(parsed))
    return {
        "run_id": run_id,
        "attributor": name,
        "agent": agent,
        "step": step,
        "mode": mode,
        "reason": reason,
        "raw_output": last.text if last.text is not None else last.error,
        "parse_ok": ok,
        "calls": len(results),  # calls this answer took (cache hits included)
        "tokens_in": sum(r.usage.input_tokens for r in results),
        "tokens_out": sum(r.usage.output_tokens for r in results),
        "cost_usd": round(sum(r.cost_usd for r in results), 10),
        "latency_s": round(sum(r.latency_s for r in results), 6),
    }
