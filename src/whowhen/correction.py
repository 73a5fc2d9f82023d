"""The prompt that asks a model to correct one step of a failed run, and how its answer
is read: what `whowhen blame` sends, one module so the test server (which plays the
corrector offline) reads exactly what is sent.

The prompt shows the run up to the step, the step, and the agent's own request for it
(its conversation and tools, as JSON, cut to `MAX_REQUEST_CHARS` from the front), and
asks for the step rewritten as JSON: `{"content", "tool", "arguments"}`.
"""

from __future__ import annotations

import json
from typing import Any

from whowhen.errors import preview
from whowhen.io import load_json

CORRECTION_MARK = "Rewrite the step so that the run can succeed."
REQUEST_OPEN, REQUEST_CLOSE = "Agent request (JSON):\n", "\nEnd of agent request."
MAX_REQUEST_CHARS = 60_000
MAX_STEP_CHARS = 2_000
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "content": {"type": "string"},
        "tool": {"type": ["string", "null"]},
        "arguments": {"type": ["object", "null"]},
    },
    "required": ["content", "tool", "arguments"],
    "additionalProperties": False,
}


def render_step(step: dict[str, Any]) -> str:
    """`[k] actor (kind): content -> tool(args)`, cut to MAX_STEP_CHARS."""
    text = str(step.get("content") or "")
    if step.get("tool") and step["kind"] == "action":
        text = f"{text} -> {step['tool']}({step.get('tool_args') or '{}'})".strip()
    if len(text) > MAX_STEP_CHARS:
        text = text[:MAX_STEP_CHARS] + f" [... {len(text) - MAX_STEP_CHARS} characters cut]"
    return f"[{step['step']}] {step['actor']} ({step['kind']}): {text}"


def correction_prompt(
    steps: list[dict[str, Any]], at: int, request: dict[str, Any], outcome: str
) -> str:
    """Ask for step `at` of `steps` rewritten; `request` is what its agent was sent."""
    body = json.dumps(request, ensure_ascii=False, sort_keys=True)
    if len(body) > MAX_REQUEST_CHARS:  # keep the valid JSON: drop the oldest messages
        trimmed = dict(request)
        messages = list(request.get("messages") or [])
        while len(body) > MAX_REQUEST_CHARS and len(messages) > 2:
            messages.pop(1)  # the system prompt (0) and the latest stay
            trimmed["messages"] = messages
            body = json.dumps(trimmed, ensure_ascii=False, sort_keys=True)
    lines = [
        f"A run of an agent program ended in {outcome}. Below is the run up to one agent "
        "step. If that step is wrong, write what the agent should have done instead; if it "
        "is right, write it unchanged.",
        "",
        "Trajectory:",
        *(render_step(s) for s in steps[:at]),
        "",
        "The step:",
        render_step(steps[at]),
        "",
        REQUEST_OPEN + body + REQUEST_CLOSE,
        "",
        CORRECTION_MARK,
        'Answer with JSON only: {"content": the words of the step, "tool": the tool it '
        'calls or null, "arguments": the tool\'s arguments as an object, or null}.',
    ]
    return "\n".join(lines)


def parse_correction(text: str) -> dict[str, Any]:
    """The model's answer as {content, tool, arguments}; ValueError saying what is wrong."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError(f"no JSON object in the answer {preview(text)}")
    try:
        data = load_json(text[start : end + 1])
    except ValueError as exc:
        raise ValueError(f"the answer is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")
    tool, arguments = data.get("tool"), data.get("arguments")
    if tool is not None and not isinstance(tool, str):
        raise ValueError("tool must be a name or null")
    if tool and not isinstance(arguments, dict):
        arguments = {}
    content = data.get("content")
    return {
        "content": content if isinstance(content, str) else "",
        "tool": tool or None,
        "arguments": arguments if tool else None,
    }
