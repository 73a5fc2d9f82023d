"""The test server playing a user's own agent, and correcting one of its steps.

A program the project has never seen asks the test server as it would ask a real
model: its own system prompt, its own tools. The server answers any request that is
none of the stand-in's own roles with one generic policy:

- tools are offered and none has been called yet in this conversation: call the first
  offered tool (not `final_answer`), its arguments taken from the task (the last user
  message: a string parameter gets its text, a number parameter its numbers in order);
- otherwise: answer with the last tool result (through a `final_answer` tool when one
  is offered, as smolagents expects), or, with no tool result, with the task's text.

Like the harness's scripted agents, the policy slips: for a seeded share of requests
(`slip_rate`, decided by a hash of the request) the first number it copies is one
more than it should be. That is how a user's program comes to fail under the test
server, deterministically. Asked to correct a step (`whowhen blame`'s prompt, which
carries the agent's request), it answers with the policy's step for that request,
slips off: the harness's notion of the right step.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from whowhen.correction import REQUEST_CLOSE, REQUEST_OPEN

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_OWN_ROLES = ("Trajectory:", "Mistake to make:")


def applies(prompt: str, schema: dict[str, Any] | None) -> bool:
    """Whether a request is a user's agent rather than a role of the stand-in's own."""
    return schema is None and not any(mark in prompt for mark in _OWN_ROLES)


def tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            names.append(fn["name"])
    return names


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def policy_step(body: dict[str, Any], slip_rate: float = 0.0, seed: int = 0) -> dict[str, Any]:
    """The generic policy's step for a request: {content, tool, arguments}."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    users = [k for k, m in enumerate(messages) if m.get("role") == "user"]
    first_task = users[0] if users else -1
    task = _text(messages[users[-1]]) if users else ""
    acted = any(
        m.get("role") == "tool" or (m.get("role") == "assistant" and k > first_task)
        for k, m in enumerate(messages)
    )
    results = [_text(m) for m in messages if m.get("role") == "tool"]
    if not results and acted and users and users[-1] > first_task:  # a converted tool result
        results = [_text(messages[users[-1]]).removeprefix("Observation:").strip()]
    slip = _slips(body, slip_rate, seed)
    names = tool_names(body)
    actions = [n for n in names if n != "final_answer"]
    if actions and not acted:
        schema = _parameters(body, actions[0])
        return {"content": "", "tool": actions[0], "arguments": _arguments(schema, task, slip)}
    answer = results[-1] if results else task
    if "final_answer" in names:
        schema = _parameters(body, "final_answer")
        return {
            "content": "",
            "tool": "final_answer",
            "arguments": _arguments(schema, answer, slip),
        }
    return {"content": _slip(answer) if slip else answer, "tool": None, "arguments": None}


def answer_text(body: dict[str, Any], slip_rate: float, seed: int) -> str:
    """The policy's step in the text action protocol the server turns into a native tool
    call when tools are offered (`Action: name({...})`)."""
    step = policy_step(body, slip_rate, seed)
    if step["tool"] is None:
        return step["content"]
    return f"Action: {step['tool']}({json.dumps(step['arguments'], sort_keys=True)})"


def _slips(body: dict[str, Any], slip_rate: float, seed: int) -> bool:
    if slip_rate <= 0:
        return False
    key = json.dumps([seed, body.get("messages"), body.get("tools")], sort_keys=True)
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < slip_rate


def _slip(text: str) -> str:
    """The first number in `text`, one more."""
    m = _NUMBER.search(text)
    if m is None:
        return text
    value = m.group(0)
    bumped = str(float(value) + 1) if "." in value else str(int(value) + 1)
    return text[: m.start()] + bumped + text[m.end() :]


def _parameters(body: dict[str, Any], name: str) -> dict[str, Any]:
    for tool in body.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and fn.get("name") == name:
            params = fn.get("parameters")
            return params if isinstance(params, dict) else {}
    return {}


def _arguments(schema: dict[str, Any], text: str, slip: bool) -> dict[str, Any]:
    """Arguments for a tool's parameters, taken from `text` (see the module)."""
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = [p for p in schema.get("required") or [] if p in props] or list(props)
    numbers = [float(n) if "." in n else int(n) for n in _NUMBER.findall(text)]
    out: dict[str, Any] = {}
    for name in required or ["input"]:
        kind = (props.get(name) or {}).get("type") if isinstance(props.get(name), dict) else None
        if kind in ("number", "integer"):
            out[name] = numbers.pop(0) if numbers else 0
        elif kind == "boolean":
            out[name] = False
        else:
            out[name] = text
    if slip:
        out = json.loads(_slip(json.dumps(out, sort_keys=True)))
    return out


def corrector_responder(prompt: str) -> str:
    """The corrected step for the agent request that a correction prompt carries."""
    start = prompt.rfind(REQUEST_OPEN)
    end = prompt.find(REQUEST_CLOSE, start)
    if start < 0 or end < 0:
        return json.dumps({"content": "", "tool": None, "arguments": None})
    body = json.loads(prompt[start + len(REQUEST_OPEN) : end])
    return json.dumps(policy_step(body), sort_keys=True)
