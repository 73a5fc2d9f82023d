"""Chat messages as importers see them, and which of a model call's input messages are
new: the one rule every importer of model calls (OpenTelemetry spans, gateway
recordings) follows, so the same program imports as the same steps whichever way it
was recorded.

Why by position: a chat model is sent the whole conversation on every call. What is
new in a call is what comes after the part its agent's previous call already carried,
in the same places. Matching by content anywhere in the trace instead drops messages
that were really sent twice (a second, identical error message), and loses one agent's
input when another agent happened to see the same text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from whowhen.io import load_json

INPUT_ROLES = ("user", "human", "tool", "tool-response", "function", "ipython")
"""Roles whose messages are the world talking to the agent: the task, a hand-off, a tool
result. System prompts and the agent's own re-sent turns are not steps."""

OBSERVATION_ROLES = ("tool", "tool-response", "function", "ipython")
"""Roles of a tool's result (`tool-response` is smolagents' own, before its role
conversion; `function` the Chat Completions role before tools; `ipython` Llama's)."""


@dataclass
class ToolCall:
    id: str | None
    name: str
    arguments: Any


@dataclass
class Message:
    role: str
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None

    def fingerprint(self) -> str:
        """What makes two messages the same message re-sent."""
        calls = [(c.id, c.name, canonical(c.arguments)) for c in self.tool_calls]
        return json.dumps([self.role, self.content, self.tool_call_id, calls])


def canonical(arguments: Any) -> str:
    """Tool arguments as canonical JSON (a JSON string is parsed first)."""
    if isinstance(arguments, str):
        try:
            arguments = load_json(arguments)
        except ValueError:
            return json.dumps(arguments)
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def inputs(messages: list[Message]) -> list[Message]:
    """The messages of a call that the world sent (see `INPUT_ROLES`), in order."""
    return [m for m in messages if m.role in INPUT_ROLES]


def new_inputs(previous: list[Message] | None, current: list[Message]) -> list[Message]:
    """The input messages of `current` that its agent's `previous` call did not carry.

    Both are compared as their input messages only (a framework may re-render its own
    earlier turns or its system prompt from call to call): the longest common prefix,
    position by position, is history; the rest is new, repeats included."""
    now = inputs(current)
    if not previous:
        return now
    before = inputs(previous)
    shared = 0
    for old, new in zip(before, now, strict=False):
        if old.fingerprint() != new.fingerprint():
            break
        shared += 1
    return now[shared:]
