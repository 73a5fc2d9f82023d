"""Counterfactual replay of a recorded program: rerun it with one step changed.

Every call before the changed step's call is answered from the recording, each request
checked against the recorded one (a program that asks anything else stops the replay
with the call and the first differing field); the changed step's call is answered with
the recorded answer, that step replaced and the answer's later tool calls dropped; the
calls after it go to the live model. Because each replayed request equals its
recording, the program saw exactly the recorded observations up to the change: only
the change differs.

A step is named by its number in the imported run (`imports.gateway.recording_steps`),
so `whowhen show`, `attribute` and `replay` speak of the same steps.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whowhen.errors import WhowhenError
from whowhen.gateway.exchange import Exchange
from whowhen.gateway.program import Ended, run_behind
from whowhen.gateway.recording import (
    Recorder,
    Recording,
    read_recording,
    record_path,
    write_outcome,
)
from whowhen.gateway.session import Forward, Plan, Session
from whowhen.imports.gateway import StepSource, answer_part, recording_steps


@dataclass(frozen=True)
class Change:
    """A step's replacement: text, or a tool call (`tool` with `arguments`)."""

    content: str
    tool: str | None = None
    arguments: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"content": self.content, "tool": self.tool, "arguments": self.arguments}


def parse_change(text: str, step: dict[str, Any]) -> Change:
    """`--replace TEXT` for a step: for an action step, a JSON object of arguments for the
    same tool, or {"tool"|"name": ..., "arguments": {...}} for another; any other text
    (or any text for a message step) becomes the agent's answer in words."""
    if step["kind"] == "action":
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            tool = data.get("tool") or data.get("name")
            if isinstance(tool, str) and isinstance(data.get("arguments"), dict):
                return Change(step["content"], tool, data["arguments"])
            return Change(step["content"], step["tool"], data)
    return Change(text)


def replaced_answer(exchange: Exchange, part: int, change: Change) -> dict[str, Any]:
    """The answer of `exchange` with its step `part` replaced by `change` (earlier tool
    calls kept, later ones dropped). Tool-call ids follow the gateway's own scheme."""
    calls = list(exchange.message.get("tool_calls") or [])[:part]
    content = exchange.message.get("content") if part else None
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if change.tool is not None:
        if part == 0:
            message["content"] = change.content or None
        args = json.dumps(change.arguments or {}, sort_keys=True)
        calls.append({"type": "function", "function": {"name": change.tool, "arguments": args}})
    elif part == 0:
        message["content"] = change.content
    else:  # a later tool call replaced by words: the words follow the kept calls
        message["content"] = "\n".join(t for t in (content, change.content) if t)
    if calls:
        message["tool_calls"] = [
            {**call, "id": f"call_{exchange.index}_{k}"} for k, call in enumerate(calls)
        ]
    if message["content"] is None and not calls:
        message["content"] = ""
    return message


@dataclass
class Located:
    """A recording's run as steps, and where each agent step came from."""

    recording: Recording
    steps: list[dict[str, Any]]
    sources: list[StepSource | None]

    def agent_steps(self) -> list[int]:
        return [k for k, source in enumerate(self.sources) if source is not None]

    def source(self, step: int) -> StepSource:
        """The answer part of agent step `step`; a WhowhenError naming the agent steps."""
        source = self.sources[step] if 0 <= step < len(self.sources) else None
        if source is None:
            what = (
                "not in the run"
                if not 0 <= step < len(self.steps)
                else (f"{self.steps[step]['actor']}'s {self.steps[step]['kind']}")
            )
            agents = ", ".join(map(str, self.agent_steps()[:40]))
            raise WhowhenError(
                f"step {step} is {what}: only an agent's step can be replaced "
                f"(agent steps: {agents})",
                path=str(self.recording.path),
            )
        return source

    def current(self, step: int) -> dict[str, Any]:
        """What agent step `step` is now: {content, tool, arguments}."""
        source = self.source(step)
        return answer_part(self.recording.exchanges[source.call].message, source.part)


def locate(folder: Path, run_id: str) -> Located:
    """Run `run_id` of the recordings in `folder`, read and turned into steps."""
    path = record_path(Path(folder), run_id)
    if not path.is_file():
        raise WhowhenError(f"no recording of run {run_id}", path=str(path))
    rec = read_recording(path)
    if rec.errors:
        raise WhowhenError(rec.errors[0])
    try:
        steps, sources = recording_steps(run_id, rec.exchanges)
    except ValueError as exc:
        raise WhowhenError(str(exc), path=str(path), record=f"run {run_id}") from None
    return Located(rec, steps, sources)


@dataclass(frozen=True)
class Replayed:
    """A replay's outcome and its calls: replayed from the recording, injected, live."""

    ended: Ended
    session: Session

    def count(self, source: str) -> int:
        return sum(1 for e in self.session.exchanges if e.source == source)

    @property
    def cost_usd(self) -> float:
        return sum(e.cost_usd for e in self.session.exchanges if e.source == "live")


def replay(
    located: Located,
    step: int,
    change: Change,
    forward: Forward,
    command: Sequence[str],
    *,
    out: Path | None = None,
    run_id: str | None = None,
    judge: str | None = None,
    timeout_s: float | None = None,
    volatile: tuple[str, ...] = (),
    echo: bool = True,
) -> Replayed:
    """Rerun `command` with agent step `step` replaced by `change` (see the module); with
    `out`, the new run is recorded there as `run_id` (default: the recorded run's id)."""
    source = located.source(step)
    exchanges = located.recording.exchanges
    injected = replaced_answer(exchanges[source.call], source.part, change)
    plan = Plan(list(exchanges), source.call, injected, volatile)
    new_id = run_id or located.recording.run_id
    listener = None
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        path = record_path(Path(out), new_id)
        path.unlink(missing_ok=True)
        listener = Recorder(path)
    session = Session(new_id, forward, plan, listener)
    ended = run_behind(session, command, judge=judge, timeout_s=timeout_s, echo=echo)
    if out is not None:
        write_outcome(Path(out), new_id, outcome_record(session, ended, command, judge))
    return Replayed(ended, session)


def outcome_record(
    session: Session, ended: Ended, command: Sequence[str], judge: str | None, **extra: Any
) -> dict[str, Any]:
    """The `<run>.run.json` of a run that ended (record and replay write the same)."""
    calls = session.exchanges
    return {
        "run_id": session.run_id,
        "command": list(command),
        "judge": judge,
        "outcome": ended.outcome,
        "success": ended.success,
        "reason": ended.reason,
        "exit_status": ended.exit_status,
        "judge_status": ended.judge_status,
        "calls": session.first_index + len(calls),
        "agents": sorted({e.agent for e in calls}),
        "tokens_in": sum(e.input_tokens for e in calls),
        "tokens_out": sum(e.output_tokens for e in calls),
        "cost_usd": round(sum(e.cost_usd for e in calls), 8),
        **extra,
    }
