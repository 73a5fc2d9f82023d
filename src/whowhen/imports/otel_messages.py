"""What a span says, in either tracing convention: a model call's input and output
messages, a tool execution, an agent. Three encodings of messages are read:

- OpenInference (Arize Phoenix, the `openinference-instrumentation-*` packages):
  `llm.input_messages.{i}.message.role|content|tool_calls.{j}.tool_call.function.name`...
- OpenTelemetry GenAI semantic conventions, current form: `gen_ai.input.messages` and
  `gen_ai.output.messages`, JSON lists of `{role, parts: [{type: text|tool_call|
  tool_call_response, ...}]}`.
- The indexed GenAI form OpenLLMetry writes: `gen_ai.prompt.{i}.role|content`,
  `gen_ai.completion.{i}.role|content|tool_calls.{j}.name|arguments`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from whowhen.imports.conversation import Message, ToolCall
from whowhen.imports.otlp import Span
from whowhen.io import load_json

MODEL_OPERATIONS = ("chat", "text_completion", "generate_content", "completion")
AGENT_OPERATIONS = ("invoke_agent", "create_agent")
_OI_MESSAGE = re.compile(r"^llm\.(input|output)_messages\.(\d+)\.message\.(.+)$")
_OL_MESSAGE = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(.+)$")
_CALL = re.compile(r"^tool_calls\.(\d+)\.(?:tool_call\.)?(?:function\.)?(name|arguments|id)$")
_PART = re.compile(r"^contents\.(\d+)\.message_content\.(text|type)$")
_ENUM_REPR = re.compile(r"^[A-Z]\w*\.([A-Z][A-Z0-9_]*)$")


def role_of(value: Any) -> str:
    """A message's role; a str-enum member written as its repr ('MessageRole.TOOL_RESPONSE':
    smolagents' roles through the GenAI OpenAI instrumentation) read as its value
    ('tool-response')."""
    role = str(value)
    m = _ENUM_REPR.match(role)
    return m.group(1).lower().replace("_", "-") if m else role


def is_model_span(span: Span) -> bool:
    a = span.attributes
    return a.get("openinference.span.kind") == "LLM" or a.get("gen_ai.operation.name") in (
        MODEL_OPERATIONS
    )


def is_tool_span(span: Span) -> bool:
    a = span.attributes
    return a.get("openinference.span.kind") == "TOOL" or (
        a.get("gen_ai.operation.name") == "execute_tool"
    )


def agent_name(span: Span, extra_key: str | None = None) -> str | None:
    """The agent a span declares: `gen_ai.agent.name`, an OpenInference AGENT span's
    `agent.name` (or its span name), an invoke_agent span's name, or `extra_key`."""
    a = span.attributes
    for key in (extra_key, "gen_ai.agent.name", "agent.name"):
        if key and isinstance(a.get(key), str) and a[key]:
            return a[key]
    if a.get("openinference.span.kind") == "AGENT":
        return agent_span_name(span.name) or None
    if a.get("gen_ai.operation.name") in AGENT_OPERATIONS:
        return span.name.removeprefix("invoke_agent ").strip() or None
    return None


def model_messages(span: Span) -> tuple[list[Message], list[Message]]:
    """(input, output) messages of a model span; ValueError on a malformed encoding."""
    a = span.attributes
    if "gen_ai.input.messages" in a or "gen_ai.output.messages" in a:
        return (
            _genai(a.get("gen_ai.input.messages"), "gen_ai.input.messages"),
            _genai(a.get("gen_ai.output.messages"), "gen_ai.output.messages"),
        )
    found = _indexed(a, _OI_MESSAGE, {"input": 0, "output": 1})
    if not any(found):
        found = _indexed(a, _OL_MESSAGE, {"prompt": 0, "completion": 1})
    return found


def _genai(value: Any, key: str) -> list[Message]:
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = load_json(value)
        except ValueError:
            raise ValueError(f"{key} is not JSON") from None
    if not isinstance(value, list):
        raise ValueError(f"{key} is not a list of messages")
    out = []
    for m in value:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise ValueError(f"{key}: a message without a role")
        msg = Message(role_of(m["role"]), name=m.get("name"))
        texts = []
        for part in m.get("parts") or []:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                texts.append(str(part.get("content", "")))
            elif kind == "tool_call":
                msg.tool_calls.append(
                    ToolCall(part.get("id"), str(part.get("name", "")), part.get("arguments"))
                )
            elif kind == "tool_call_response":
                msg.tool_call_id = part.get("id")
                response = part.get("response")
                texts.append(response if isinstance(response, str) else json.dumps(response))
            elif isinstance(part, dict) and part.get("type"):
                texts.append(f"[{part['type']}]")
        msg.content = "\n".join(texts)
        out.append(msg)
    return out


def _indexed(
    attrs: dict[str, Any], pattern: re.Pattern[str], sides: dict[str, int]
) -> tuple[list[Message], list[Message]]:
    """Messages spread over indexed attribute keys (OpenInference, OpenLLMetry)."""
    grouped: dict[tuple[int, int], dict[str, Any]] = {}
    for key, value in attrs.items():
        m = pattern.match(key)
        if m:
            grouped.setdefault((sides[m.group(1)], int(m.group(2))), {})[m.group(3)] = value
    sides_out: tuple[list[Message], list[Message]] = ([], [])
    for (side, _), fields in sorted(grouped.items()):
        sides_out[side].append(_message(fields))
    return sides_out


def _message(fields: dict[str, Any]) -> Message:
    calls: dict[int, dict[str, Any]] = {}
    parts: dict[int, dict[str, Any]] = {}
    for key, value in fields.items():
        if m := _CALL.match(key):
            calls.setdefault(int(m.group(1)), {})[m.group(2)] = value
        elif m := _PART.match(key):
            parts.setdefault(int(m.group(1)), {})[m.group(2)] = value
    content = fields.get("content")
    if content is None and parts:
        content = "\n".join(
            str(p.get("text", f"[{p.get('type')}]")) for _, p in sorted(parts.items())
        )
    return Message(
        role=role_of(fields.get("role", "assistant")),
        content="" if content is None else str(content),
        tool_calls=[
            ToolCall(c.get("id"), str(c.get("name", "")), c.get("arguments"))
            for _, c in sorted(calls.items())
        ],
        tool_call_id=fields.get("tool_call_id"),
        name=fields.get("name"),
    )


def tool_execution(span: Span) -> tuple[str | None, str, Any, str]:
    """(call id, tool name, arguments, result text) of a tool span. OpenInference's
    `tool.parameters` is the tool's schema, not the call: the call is `input.value`
    (smolagents wraps it as {"args": [...], "kwargs": {...}})."""
    a = span.attributes
    name = a.get("gen_ai.tool.name") or a.get("tool.name") or span.name
    name = str(name).removeprefix("execute_tool ").strip()
    args = _call_arguments(a.get("gen_ai.tool.call.arguments", a.get("input.value")))
    result = a.get("gen_ai.tool.call.result", a.get("output.value", ""))
    call_id = a.get("gen_ai.tool.call.id") or a.get("tool_call.id") or a.get("tool.id")
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    return (str(call_id) if call_id else None), name, args, text


def _call_arguments(value: Any) -> Any:
    """A tool call's arguments; a {"args": [], "kwargs": {...}} wrapper is unwrapped."""
    parsed = value
    if isinstance(value, str):
        try:
            parsed = load_json(value)
        except ValueError:
            return value
    if isinstance(parsed, dict) and set(parsed) >= {"args", "kwargs"} and not parsed["args"]:
        return parsed["kwargs"]
    return parsed


_METHOD = re.compile(r"\.(?:run|arun|invoke|ainvoke|__call__|execute)$")


def agent_span_name(name: str) -> str:
    """'ToolCallingAgent.run' -> 'ToolCallingAgent': an agent span named after the
    method that runs the agent (smolagents) names the agent by its class."""
    return _METHOD.sub("", name)
