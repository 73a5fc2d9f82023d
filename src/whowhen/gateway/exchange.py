"""One model call of a framework run as the gateway keeps it, and how two requests are
compared.

Why requests are compared at all: a Chat Completions request carries the whole
conversation so far, tool results included. When a warm start replays a run, the
framework's k-th request must equal the recorded k-th request; if it does, the framework
saw exactly the same observations up to there, so the prefix is faithful by
construction. Fields that differ from run to run for no reason of the run's (a
framework's timestamps or random ids) are listed per adapter as *volatile* and dropped
before the comparison.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

ALWAYS_VOLATILE = ("model", "stream", "stream_options", "user", "store", "metadata")
"""Request fields that never decide an answer here: the gateway names the model itself
(the framework's `model` is a placeholder) and always answers in one piece."""


@dataclass(frozen=True)
class Exchange:
    """One request and the assistant message that answered it, in call order."""

    index: int
    agent: str
    request: dict[str, Any]  # the normalised request body
    message: dict[str, Any]  # {"role": "assistant", "content": ..., "tool_calls": [...]}
    source: str  # live | replayed | injected
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cached: bool = False
    steps: list[int] = field(default_factory=list)  # the run's steps this answer became


def normalise(body: dict[str, Any], volatile: tuple[str, ...] = ()) -> dict[str, Any]:
    """`body` without the always-volatile fields and the adapter's `volatile` paths
    (dotted; `*` matches every list item or key: `messages.*.timestamp`)."""
    out = json.loads(json.dumps(body))  # a deep copy of plain JSON
    for key in ALWAYS_VOLATILE:
        out.pop(key, None)
    for path in volatile:
        _drop(out, path.split("."))
    return out


def _drop(node: Any, parts: list[str]) -> None:
    head, rest = parts[0], parts[1:]
    if isinstance(node, dict):
        keys = list(node) if head == "*" else [head] if head in node else []
        for key in keys:
            if rest:
                _drop(node[key], rest)
            else:
                del node[key]
    elif isinstance(node, list):
        picked = head.isdigit() and int(head) < len(node)
        items = node if head == "*" else [node[int(head)]] if picked else []
        for item in items:
            if rest:
                _drop(item, rest)


def first_difference(recorded: Any, incoming: Any, path: str = "") -> str | None:
    """The path of the first field where `incoming` differs from `recorded` (None when
    equal), with both values shortened: what a fidelity error names."""
    if isinstance(recorded, dict) and isinstance(incoming, dict):
        for key in sorted(set(recorded) | set(incoming)):
            where = f"{path}.{key}" if path else key
            if key not in incoming:
                return f"{where}: missing (recorded {_short(recorded[key])})"
            if key not in recorded:
                return f"{where}: unexpected {_short(incoming[key])}"
            found = first_difference(recorded[key], incoming[key], where)
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(incoming, list):
        for k, (a, b) in enumerate(zip(recorded, incoming, strict=False)):
            found = first_difference(a, b, f"{path}[{k}]")
            if found:
                return found
        if len(recorded) != len(incoming):
            return f"{path}: {len(incoming)} items, recorded {len(recorded)}"
        return None
    if recorded != incoming:
        return f"{path}: {_short(incoming)}, recorded {_short(recorded)}"
    return None


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def assistant_message(
    content: str | None, calls: tuple[tuple[str, str], ...], index: int
) -> dict[str, Any]:
    """The answer as a Chat Completions assistant message. Tool-call ids are the gateway's
    own (`call_<exchange>_<k>`): providers make random ones, which the framework would echo
    in every later request and so break the replay's comparison."""
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{index}_{k}", "type": "function",
             "function": {"name": name, "arguments": arguments}}
            for k, (name, arguments) in enumerate(calls)
        ]  # fmt: skip
    if message["content"] is None and not calls:
        message["content"] = ""
    return message


def completion(message: dict[str, Any], exchange: Exchange, run_id: str) -> dict[str, Any]:
    """A whole Chat Completion around `message`, deterministic (no clock, no random id)."""
    return {
        "id": f"chatcmpl-{run_id}-{exchange.index}",
        "object": "chat.completion",
        "created": 0,
        "model": "whowhen-gateway",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                "message": message,
            }
        ],
        "usage": {
            "prompt_tokens": exchange.input_tokens,
            "completion_tokens": exchange.output_tokens,
            "total_tokens": exchange.input_tokens + exchange.output_tokens,
        },
    }
