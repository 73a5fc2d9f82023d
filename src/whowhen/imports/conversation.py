"""Chat messages as importers see them, and which of a model call's input messages are
new: the one rule every importer of model calls (OpenTelemetry spans, gateway
recordings) follows, so the same program imports as the same steps whichever way it
was recorded.

Why by position: a chat model is sent the whole conversation on every call. What is
new in a call is what comes after the part its agent's previous call already carried,
in the same places. Matching by content anywhere in the trace instead drops messages
that were really sent twice (a second, identical error message), and loses one agent's
input when another agent happened to see the same text.

Tool results come in two forms, and both are read as one (`tool_results`): a message of
a tool role, or, from frameworks that write their tool calls as text and send the
results back as user messages (smolagents after its role conversion, text ReAct loops),
a user message labelled `Observation:` (or `Error:`, after an optional `Call id: ...`
line) right after the agent's own turn. Either way the step is an observation of the
tool it answers, its text without the `Observation:` label: what the tool returned, as
a tool span records it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from whowhen.io import load_json

INPUT_ROLES = ("user", "human", "tool", "tool-response", "function", "ipython")
"""Roles whose messages are the world talking to the agent: the task, a hand-off, a tool
result. System prompts and the agent's own re-sent turns are not steps."""

OBSERVATION_ROLES = ("tool", "tool-response", "function", "ipython")
"""Roles of a tool's result (`tool-response` is smolagents' own, before its role
conversion; `function` the Chat Completions role before tools; `ipython` Llama's)."""

AGENT_ROLES = ("assistant", "tool-call", "model")
"""Roles of the agent's own turns as a framework re-sends them (`tool-call`: smolagents'
tool calls written as text; `model`: Gemini's)."""

FINAL_ANSWER = "final_answer"
"""The tool an agent answers with (smolagents', and the built-in systems'): its result is
the agent's answer handed back to its caller, not something the world told the agent."""

_LABEL = re.compile(r"\A(?:Call id: *(?P<id>\S+)\n)?(?:Observation: *\n?|(?=Error:))")


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


def tool_results(messages: list[Message]) -> list[Message]:
    """`messages` with every tool result in one form (see the module): role
    `tool-response` for a labelled user message, the text without its `Observation:`
    label, the call id from a `Call id:` line when the message has none."""
    out: list[Message] = []
    for m in messages:
        label = _LABEL.match(m.content)
        after_turn = bool(out) and out[-1].role in (*AGENT_ROLES, *OBSERVATION_ROLES)
        if m.role in OBSERVATION_ROLES or (label and after_turn and m.role in ("user", "human")):
            role = m.role if m.role in OBSERVATION_ROLES else "tool-response"
            call_id = m.tool_call_id or (label.group("id") if label else None)
            text = m.content[label.end() :] if label else m.content
            m = Message(role, text, m.tool_calls, call_id, m.name)
        out.append(m)
    return out


def inputs(messages: list[Message]) -> list[Message]:
    """The messages of a call that the world sent (see `INPUT_ROLES`), in order."""
    return [m for m in messages if m.role in INPUT_ROLES]


def new_inputs(previous: list[Message] | None, current: list[Message]) -> list[Message]:
    """The input messages of `current` that its agent's `previous` call did not carry.

    Both are compared as their input messages only (a framework may re-render its own
    earlier turns or its system prompt from call to call), tool results in one form
    (`tool_results`): the longest common prefix, position by position, is history; the
    rest is new, repeats included."""
    now = inputs(tool_results(current))
    if not previous:
        return now
    before = inputs(tool_results(previous))
    shared = 0
    for old, new in zip(before, now, strict=False):
        if old.fingerprint() != new.fingerprint():
            break
        shared += 1
    return now[shared:]


@dataclass
class OpenCalls:
    """The tool calls each agent issued that no tool result sent to it has answered yet:
    which tool a result answers when it carries no call id (smolagents' do not)."""

    open: dict[str, list[ToolCall]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # call id -> tool name, latest

    def issue(self, agent: str, calls: list[ToolCall]) -> None:
        self.open.setdefault(agent, []).extend(calls)
        self.names.update({c.id: c.name for c in calls if c.id})

    def answer(self, agent: str, result: Message) -> str:
        """The tool `result` (a tool result sent to `agent`) answers, that call closed: the
        agent's open call with its id, else the tool its id or its name names, else the
        agent's earliest open call, else `tool`."""
        calls = self.open.get(agent, [])
        call_id = result.tool_call_id
        k = next((i for i, c in enumerate(calls) if call_id and c.id == call_id), None)
        if k is not None:
            return calls.pop(k).name
        if call_id and call_id in self.names:
            return self.names[call_id]
        if result.name:
            return result.name
        return calls.pop(0).name if calls else "tool"
