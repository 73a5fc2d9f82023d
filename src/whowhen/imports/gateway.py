"""Import gateway recordings (`whowhen record`, `whowhen gateway`): one run per recording.

Steps come in call order. For each call, the input messages its agent's previous call
did not carry (`conversation.new_inputs`: the task or a hand-off as a `user` step, a
tool result as an observation of the tool it answers, whether sent as a tool message
or, as smolagents sends it, as a user message `Observation: ...`), then its answer: the
text as a message step, or each tool call as an action step (the first carrying the
text). These are the rules of the OpenTelemetry importer, so a program recorded both
ways imports as the same steps. The outcome is the program's (`<run>.run.json`); a run
whose outcome is unknown (interrupted, cut off, the model failed) is not imported, with
one line saying why: it is neither a success nor a failure of the agents.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whowhen.errors import WhowhenError
from whowhen.gateway.exchange import Exchange
from whowhen.gateway.recording import Recording, read_recording, recording_files
from whowhen.imports.common import ImportResult, base_run, regular_files, step_row
from whowhen.imports.conversation import (
    OBSERVATION_ROLES,
    Message,
    OpenCalls,
    ToolCall,
    canonical,
    new_inputs,
)
from whowhen.imports.formats import FORMATS, entry_file
from whowhen.imports.otel import load_outcomes
from whowhen.schema import canonical_json

BENCHMARK = "gateway"


@dataclass(frozen=True)
class StepSource:
    """Where an agent step came from: call `call`'s answer, part `part` (its text, or
    its tool call number `part`)."""

    call: int
    part: int


def chat_message(raw: Any) -> Message:
    """A Chat Completions message as a `Message` (text parts joined; images named)."""
    if not isinstance(raw, dict):
        raise ValueError("a message that is not an object")
    content = raw.get("content")
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            elif isinstance(part, dict):
                texts.append(f"[{part.get('type', 'part')}]")
        content = "\n".join(texts)
    calls = []
    for call in raw.get("tool_calls") or []:
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict):
            raise ValueError("a tool call without a function")
        calls.append(ToolCall(call.get("id"), str(fn.get("name", "")), fn.get("arguments")))
    return Message(
        role=str(raw.get("role", "")),
        content="" if content is None else str(content),
        tool_calls=calls,
        tool_call_id=raw.get("tool_call_id"),
        name=raw.get("name"),
    )


def _messages(request: dict[str, Any]) -> list[Message]:
    raw = request.get("messages")
    if not isinstance(raw, list):
        raise ValueError("request.messages is not a list")
    return [chat_message(m) for m in raw]


def recording_steps(
    run_id: str, exchanges: list[Exchange]
) -> tuple[list[dict[str, Any]], list[StepSource | None]]:
    """The run's step rows and, for each, the answer part it came from (None for the
    inputs: the task, hand-offs, tool results). ValueError names a call it cannot read."""
    steps: list[dict[str, Any]] = []
    sources: list[StepSource | None] = []
    previous: dict[str, list[Message]] = {}  # agent -> its previous call's messages
    open_calls = OpenCalls()  # the tool calls each agent issued, not yet answered

    def add(row: dict[str, Any], source: StepSource | None) -> None:
        steps.append(row)
        sources.append(source)

    for exchange in exchanges:
        where = f"call {exchange.index}"
        try:
            messages = _messages(exchange.request)
            answer = chat_message(exchange.message)
        except (ValueError, TypeError, AttributeError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        for m in new_inputs(previous.get(exchange.agent), messages):
            if m.role in OBSERVATION_ROLES:
                tool = open_calls.answer(exchange.agent, m)
                row = step_row(run_id, len(steps), tool, m.content, role="tool", kind="observation")
                add(row, None)
            else:
                add(step_row(run_id, len(steps), "user", m.content, role=m.role), None)
        previous[exchange.agent] = messages
        open_calls.issue(exchange.agent, answer.tool_calls)
        usage = {
            "tokens_in": exchange.input_tokens,
            "tokens_out": exchange.output_tokens,
            "cost_usd": exchange.cost_usd,
        }
        parts = answer.tool_calls or [None]
        for part, call in enumerate(parts):
            text = answer.content if part == 0 else ""
            if call is None:
                row = step_row(run_id, len(steps), exchange.agent, text, role="assistant")
            else:
                row = step_row(
                    run_id,
                    len(steps),
                    exchange.agent,
                    text,
                    role="assistant",
                    kind="action",
                    tool=call.name,
                    tool_args=canonical(call.arguments),
                )
            if part == 0:
                row.update(usage)
            add(row, StepSource(exchange.index, part))
    return steps, sources


def program_name(command: list[Any]) -> str:
    """What names a program: its script for `python x.py`, else its executable."""
    words = [Path(str(w)).name for w in command]
    if len(words) > 1 and words[0].startswith(("python", "node", "uv", "bash", "sh")):
        return next((w for w in words[1:] if not w.startswith("-")), words[0])
    return words[0] if words else ""


def run_row(rec: Recording, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs row of a recording whose outcome is known."""
    outcome = rec.outcome or {}
    agents = sorted({e.agent for e in rec.exchanges})
    question = next((s["content"] for s in steps if s["actor"] == "user"), None)
    final = next((s["content"] for s in reversed(steps) if s["actor"] in agents), None)
    command = outcome.get("command") or []
    program = program_name(command if isinstance(command, list) else [])
    return base_run(
        rec.run_id,
        BENCHMARK,
        rec.run_id,
        program or "program",
        "multi" if len(agents) > 1 else "single",
        question=question,
        success=bool(outcome.get("success")),
        score=float(bool(outcome.get("success"))),
        final_answer=final,
        end_reason=str(outcome.get("reason", "")) or None,
        n_steps=len(steps),
        tokens_in=sum(e.input_tokens for e in rec.exchanges),
        tokens_out=sum(e.output_tokens for e in rec.exchanges),
        cost_usd=sum(e.cost_usd for e in rec.exchanges),
        meta=canonical_json(
            {
                "calls": len(rec.exchanges),
                "agents": agents,
                "outcome": outcome.get("outcome"),
                "command": command,
            }
        ),
    )


def import_gateway(path: str | Path, outcomes: dict[str, bool] | None = None) -> ImportResult:
    """Every recording in FILE or DIR: one run each (see the module). `outcomes` (run id
    -> success) gives the outcome of runs recorded without one (`whowhen gateway`
    serves many runs and cannot know how each ended)."""
    result = ImportResult()
    try:
        files = recording_files(Path(path))
    except WhowhenError as exc:
        result.fail(exc)
        return result
    root = Path(path) if Path(path).is_dir() else None
    for file in regular_files(files, result, root):
        rec = read_recording(file)
        for error in rec.errors:
            result.fail(error)
        if outcomes and rec.run_id in outcomes:
            success = outcomes[rec.run_id]
            rec.outcome = {**(rec.outcome or {}), "success": success,
                           "outcome": "success" if success else "failure",
                           "reason": "outcomes file"}  # fmt: skip
        _add(result, rec)
    return result


def _add(result: ImportResult, rec: Recording) -> None:
    source, record = str(rec.path), f"run {rec.run_id}"
    if not rec.exchanges:
        if not rec.errors:
            result.fail(f"{source}: {record}: no model call recorded: not imported")
        return
    outcome = rec.outcome
    if outcome is None or outcome.get("success") is None:
        why = (
            f"outcome {outcome.get('outcome')} ({outcome.get('reason')})"
            if outcome
            else "no outcome (the program did not end under `whowhen record`, or was cut "
            "off; give one with --outcomes FILE)"
        )
        result.fail(
            f"{source}: {record}: {why}: not imported; its {len(rec.exchanges)} "
            "calls stay in the recording (replay or record it again)"
        )
        return
    try:
        steps, _ = recording_steps(rec.run_id, rec.exchanges)
    except ValueError as exc:
        result.fail(f"{source}: {record}: {exc}")
        return
    result.add(run_row(rec, steps), steps, None, source, record)


@FORMATS.register(
    "gateway",
    description="recordings of `whowhen record` / `whowhen gateway`: a run per recording",
    options=("outcomes",),
    metavar="FILE|DIR",
    path_help="a recording (RUN.jsonl), or a folder of them",
)
def read(path: Path, options: dict[str, Any], root: Path | None) -> ImportResult:
    """An `imports:` entry of this format: an `outcomes` file (unset: the recordings' own)."""
    outcomes = options.get("outcomes")
    return import_gateway(path, load_outcomes(entry_file(root, outcomes)) if outcomes else None)


def answer_part(message: dict[str, Any], part: int) -> dict[str, Any]:
    """The step `part` of an answer as `{content, tool, arguments}` (what replacing it
    starts from)."""
    answer = chat_message(message)
    if not answer.tool_calls:
        return {"content": answer.content, "tool": None, "arguments": None}
    call = answer.tool_calls[part]
    return {
        "content": answer.content if part == 0 else "",
        "tool": call.name,
        "arguments": json.loads(canonical(call.arguments)),
    }
