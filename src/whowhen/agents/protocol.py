"""How a model playing an agent sees the run and how its turn is read back.

Servers differ: some return native tool calls, some (llama.cpp with many chat templates)
only text. The tools are offered natively where the model's `native_tools` setting
allows, and the system prompt also states a *text action protocol* every chat model can
follow:

    Thought: <reasoning>
    Action: calculator({"expression": "84 - 9"})

A turn is stored as the model wrote it: `content` is its text before the `Action:` line
(a `Thought:` prefix included, if it wrote one), so rendering it back adds nothing and a
prefix can never pile up turn after turn. Other agents' turns reach a team member as
`[name]: ...` blocks; observations as `Observation (tool): ...`; consecutive user-side
blocks merge into one message, so chat templates that insist on alternating roles work.
A turn that cannot be read gets a one-line format reminder after it.

`json` turns (agents.turn_format) are for small models on servers with structured output
(llama.cpp's): each turn is one JSON object `{"thought", "tool", "arguments"}` whose
schema lists the tools and their arguments, so the server's grammar makes every turn a
well-formed tool call (a team member may also send `{"tool": "message", "arguments":
{"to", "text"}}`). The turn is shown back as that object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from whowhen.media import media_path
from whowhen.models import Message
from whowhen.models.types import ImagePart, Part, TextPart
from whowhen.runtime import Action, Step

ACTION = re.compile(r"^\s*Action:\s*(\w+)\s*\((.*)\)\s*$", re.M | re.S)
RULES_END = "Call one tool per turn. Finish with final_answer."
"""The system prompt's last line (the stand-in model finds the history after it)."""
REMINDER = (
    "Format reminder: your last turn had no valid Action line. Answer as\n"
    'Thought: <one or two sentences>\nAction: <tool>({"<argument>": "<value>"})'
)
JSON_REMINDER = (
    'Format reminder: answer with one JSON object: {"tool": "<tool>", "arguments": {...}, '
    '"thought": "..."}'
)
REPEAT_REMINDER = (
    "Reminder: you made this same call just before and got the same result. Do not repeat "
    "it: use the result for the next step, or finish with final_answer."
)
MESSAGE = "message"
"""The pseudo-tool a team member sends a message with, in `json` turns."""
_TO = re.compile(r"^To (\w+): ", re.S)
OTHER = re.compile(r"^\[([\w-]+)\]: ", re.M)
TRIMMED = "[observation trimmed to fit the context]"


def system_prompt(
    tools: Sequence[dict[str, Any]],
    role: str | None = None,
    agent: str | None = None,
    team: Sequence[str] = (),
    json_turns: bool = False,
    example: Sequence[Step] = (),
) -> str:
    """The rules one agent gets: its role, its team, the tools, the turn format and a
    worked example run in that format (as this agent would see it)."""
    lines = [role or "You are an agent that solves the user's task step by step with tools."]
    if len(team) > 1:
        others = ", ".join(a for a in team if a != agent)
        lines += [
            f"You are {agent}, working with {others}. Their turns appear as '[name]: ...'.",
            "A tool call keeps the turn with you; a message hands it over."
            + ("" if json_turns else " Write a message without an Action line, starting "
               "'To <name>: '."),
        ]  # fmt: skip
    lines.append("Tools (arguments as a JSON object):")
    for tool in tools:
        args = ", ".join(tool["parameters"].get("properties", {}))
        lines.append(f"- {tool['name']}({args}): {tool['description']}")
    if json_turns:
        lines.append(
            'Answer every turn with one JSON object: {"tool": "<tool>", "arguments": '
            '{"<argument>": "<value>"}, "thought": "<one sentence>"}'
            + (f'; to talk to another agent, "tool": "{MESSAGE}" with "to" and "text".'
               if len(team) > 1 else ".")
        )  # fmt: skip
    else:
        lines += [
            "Answer every turn in exactly this form:",
            "Thought: <one or two sentences>",
            'Action: <tool>({"<argument>": "<value>"})',
        ]
    if example:
        lines.append("Example run:")
        for m in to_messages(example, agent or "assistant", len(team) > 1, json_turns):
            lines.append(m.joined_text())
        lines.append("(end of example)")
    lines.append(RULES_END)
    return "\n".join(lines)


def turn_schema(tools: Sequence[dict[str, Any]], team: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON schema of one `json` turn: one alternative per tool (and the message)."""

    def turn(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        # the call first: a small model's rambling thought then cannot derail it
        thought = {"type": "string", "maxLength": 200}
        props = {"tool": {"const": name}, "arguments": arguments, "thought": thought}
        return {"type": "object", "properties": props, "required": list(props)}

    options = [turn(t["name"], t["parameters"]) for t in tools]
    if len(team) > 1:
        to = {"to": {"enum": list(team)}, "text": {"type": "string"}}
        options.append(
            turn(MESSAGE, {"type": "object", "properties": to, "required": ["to", "text"]})
        )
    return {"anyOf": options}


def parse_json_turn(
    actor: str, text: str, tools: Sequence[dict[str, Any]], team: bool = False
) -> Turn:
    """A `json` turn as an Action (a message to another agent for the message tool)."""
    try:
        turn = json.loads(text)
    except json.JSONDecodeError:
        turn = None
    if not isinstance(turn, dict) or not isinstance(turn.get("arguments"), dict):
        return Turn(Action(actor, text.strip()), "not a JSON turn")
    tool, args = turn.get("tool"), turn["arguments"]
    thought = str(turn.get("thought") or "")
    if tool == MESSAGE:  # a lone agent has no one to talk to: read, but not valid
        to, said = str(args.get("to") or ""), str(args.get("text") or "")
        problem = None if team else "a lone agent's message"
        return Turn(Action(actor, f"To {to}: {said}" if to else said), problem)
    if tool not in {t["name"] for t in tools}:
        return Turn(Action(actor, text.strip()), f"unknown tool {tool!r}")
    return Turn(Action(actor, thought, tool, args))


def render_json_turn(step: Step) -> str:
    """An agent turn as the JSON object a `json` turn is written as."""
    if step.tool is not None:
        turn = {"tool": step.tool, "arguments": step.tool_args or {}, "thought": step.content}
    else:
        m = _TO.match(step.content)
        to, said = (m.group(1), step.content[m.end() :]) if m else ("", step.content)
        turn = {"tool": MESSAGE, "arguments": {"to": to, "text": said}, "thought": ""}
    return json.dumps(turn, ensure_ascii=False)


@dataclass(frozen=True)
class Turn:
    """A model's turn read back: the action, and why it could not be read (None if fine)."""

    action: Action
    problem: str | None = None


def parse_turn(actor: str, text: str, tools: Sequence[dict[str, Any]], team: bool = False) -> Turn:
    """The model's text as an Action. A turn without an `Action:` line is a message (in a
    team, a message to another agent; alone, a turn that could not be read); an `Action:`
    line naming an unknown tool is recorded as a message that could not be read."""
    matches = list(ACTION.finditer(text))
    names = {t["name"]: t for t in tools}
    if not matches:
        problem = None if team else "no Action line"
        return Turn(Action(actor, text.strip()), problem)
    last = matches[-1]
    tool, raw = last.group(1), last.group(2).strip()
    if tool not in names:
        return Turn(Action(actor, text.strip()), f"unknown tool {tool!r}")
    try:
        args = json.loads(raw) if raw.startswith("{") else None
    except json.JSONDecodeError:
        args = None
    if not isinstance(args, dict):
        first = next(iter(names[tool]["parameters"].get("properties", {})), "input")
        args = {first: raw.strip("'\"")}
    return Turn(Action(actor, text[: last.start()].strip(), tool, args))


def parse_action(actor: str, text: str, tools: Sequence[dict[str, Any]]) -> Action:
    """The action of a lone agent's turn (see `parse_turn`)."""
    return parse_turn(actor, text, tools).action


def render_turn(step: Step) -> str:
    """An agent turn as text: its content, then its tool call as an `Action:` line."""
    if step.tool is None:
        return step.content
    call = f"Action: {step.tool}({json.dumps(step.tool_args, ensure_ascii=False)})"
    return f"{step.content}\n{call}" if step.content else call


def unreadable(step: Step, team: bool, json_turns: bool = False) -> bool:
    """Whether an agent's recorded turn is one its protocol could not read."""
    if step.tool is not None:
        return False
    if json_turns:  # a JSON turn that was not one, or a lone agent's message
        return not team or step.content.lstrip().startswith("{")
    return bool(ACTION.search(step.content)) or not team


def to_messages(
    history: Sequence[Step], actor: str, team: bool = False, json_turns: bool = False
) -> list[Message]:
    """The history as `actor` sees it: its own turns as assistant messages, exactly as
    written; the task, observations and other agents' turns as user blocks."""
    render = render_json_turn if json_turns else render_turn
    out: list[tuple[str, list[Part]]] = []

    def add(role: str, text: str, media: Sequence[str] = ()) -> None:
        parts: list[Part] = [TextPart(text), *(ImagePart(str(media_path(r))) for r in media)]
        if out and out[-1][0] == role == "user":
            out[-1][1].extend([TextPart("\n\n"), *parts])
        else:
            out.append((role, parts))

    last_call: tuple[str | None, str] | None = None
    repeated = False  # the agent's last call is the same as its call before
    for s in history:
        if s.kind == "observation":
            add("user", f"Observation ({s.actor}): {s.content}", s.media)
            if repeated:
                add("user", REPEAT_REMINDER)
        elif s.actor == actor:
            add("assistant", render(s))
            if unreadable(s, team, json_turns):
                add("user", JSON_REMINDER if json_turns else REMINDER)
            call = (s.tool, json.dumps(s.tool_args, sort_keys=True))
            repeated = s.tool is not None and call == last_call
            last_call = call if s.tool is not None else last_call
        elif s.step == 0:
            add("user", s.content, s.media)
        else:
            add("user", f"[{s.actor}]: {render_turn(s)}", s.media)
    return [Message(role, _joined(parts)) for role, parts in out]


def _joined(parts: list[Part]) -> tuple[Part, ...]:
    """Adjacent text parts as one (a merged block reads as one text)."""
    merged: list[Part] = []
    for p in parts:
        if merged and isinstance(p, TextPart) and isinstance(merged[-1], TextPart):
            merged[-1] = TextPart(merged[-1].text + p.text)
        else:
            merged.append(p)
    return tuple(merged)


def fit(history: Sequence[Step], budget_chars: int) -> tuple[list[Step], int]:
    """`history` cut to `budget_chars` of text: the oldest observations' text goes first
    (the task and every agent turn stay); returns (history, observations trimmed)."""
    steps = list(history)
    size = sum(len(s.content) for s in steps)
    trimmed = 0
    for i, s in enumerate(steps):
        if size <= budget_chars:
            break
        if s.kind == "observation" and s.content != TRIMMED and i < len(steps) - 1:
            size -= len(s.content) - len(TRIMMED)
            steps[i] = Step(s.step, s.actor, s.kind, TRIMMED, s.tool, s.tool_args, ())
            trimmed += 1
    return steps, trimmed
