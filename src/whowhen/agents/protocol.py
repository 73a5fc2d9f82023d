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
OTHER = re.compile(r"^\[([\w-]+)\]: ", re.M)
TRIMMED = "[observation trimmed to fit the context]"


def system_prompt(
    tools: Sequence[dict[str, Any]],
    role: str | None = None,
    agent: str | None = None,
    team: Sequence[str] = (),
) -> str:
    """The rules one agent gets: its role, its team, the tools and the text protocol."""
    lines = [role or "You are an agent that solves the user's task step by step with tools."]
    if len(team) > 1:
        others = ", ".join(a for a in team if a != agent)
        lines += [
            f"You are {agent}, working with {others}. Their turns appear as '[name]: ...'.",
            "To talk to another agent, write a message without an Action line, starting "
            "'To <name>: '. A tool call keeps the turn with you.",
        ]
    lines.append("Tools (arguments as a JSON object):")
    for tool in tools:
        args = ", ".join(tool["parameters"].get("properties", {}))
        lines.append(f"- {tool['name']}({args}): {tool['description']}")
    lines += [
        "Answer every turn in exactly this form:",
        "Thought: <one or two sentences>",
        'Action: <tool>({"<argument>": "<value>"})',
        RULES_END,
    ]
    return "\n".join(lines)


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


def unreadable(step: Step, team: bool) -> bool:
    """Whether an agent's recorded turn is one its protocol could not read."""
    if step.tool is not None:
        return False
    return bool(ACTION.search(step.content)) or not team


def to_messages(history: Sequence[Step], actor: str, team: bool = False) -> list[Message]:
    """The history as `actor` sees it: its own turns as assistant messages, exactly as
    written; the task, observations and other agents' turns as user blocks."""
    out: list[tuple[str, list[Part]]] = []

    def add(role: str, text: str, media: Sequence[str] = ()) -> None:
        parts: list[Part] = [TextPart(text), *(ImagePart(str(media_path(r))) for r in media)]
        if out and out[-1][0] == role == "user":
            out[-1][1].extend([TextPart("\n\n"), *parts])
        else:
            out.append((role, parts))

    for s in history:
        if s.kind == "observation":
            add("user", f"Observation ({s.actor}): {s.content}", s.media)
        elif s.actor == actor:
            add("assistant", render_turn(s))
            if unreadable(s, team):
                add("user", REMINDER)
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
