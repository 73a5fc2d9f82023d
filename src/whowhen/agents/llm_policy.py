"""An LLM plays the agent: a ReAct loop over the benchmark's tools, through the model layer.

Servers differ: some return native tool calls, some (llama.cpp with many chat templates)
only text. The tools are offered natively where the model's `native_tools` setting
allows, and the policy also states a *text action protocol* every chat model can follow:

    Thought: <reasoning>
    Action: calculator({"expression": "84 - 9"})

A native tool call is taken when one comes back; otherwise the last `Action:` line is
parsed. Calls go through the response cache, so a rollout
and its warm-started continuation never pay twice for the same prefix.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from typing import Any

from whowhen.media import media_path
from whowhen.models import ChatRequest, Message, Settings
from whowhen.models.types import ImagePart, TextPart
from whowhen.runtime import Action, Step
from whowhen.runtime.types import StepCost

_ACTION = re.compile(r"^\s*Action:\s*(\w+)\s*\((.*)\)\s*$", re.M | re.S)


def system_prompt(tools: Sequence[dict[str, Any]], role: str | None = None) -> str:
    lines = [
        role or "You are an agent that solves the user's task step by step with tools.",
        "Tools (arguments as a JSON object):",
    ]
    for tool in tools:
        args = ", ".join(tool["parameters"].get("properties", {}))
        lines.append(f"- {tool['name']}({args}): {tool['description']}")
    lines += [
        "Answer every turn in exactly this form:",
        "Thought: <one or two sentences>",
        'Action: <tool>({"<argument>": "<value>"})',
        "Call one tool per turn. Finish with final_answer.",
    ]
    return "\n".join(lines)


def parse_action(actor: str, text: str, tools: Sequence[dict[str, Any]]) -> Action:
    """The model's turn as an Action; an unparseable turn becomes a plain message (the
    environment answers nothing and the model sees its own text on the next turn)."""
    matches = list(_ACTION.finditer(text))
    names = {t["name"]: t for t in tools}
    thought = text[: matches[-1].start()].strip() if matches else text.strip()
    thought = re.sub(r"^\s*Thought:\s*", "", thought)
    if not matches or matches[-1].group(1) not in names:
        return Action(actor, text.strip())
    tool, raw = matches[-1].group(1), matches[-1].group(2).strip()
    try:
        args = json.loads(raw) if raw.startswith("{") else None
    except json.JSONDecodeError:
        args = None
    if not isinstance(args, dict):
        first = next(iter(names[tool]["parameters"].get("properties", {})), "input")
        args = {first: raw.strip("'\"")}
    return Action(actor, thought, tool, args)


def _with_media(text: str, media: Sequence[str]) -> Message:
    """A user message with the step's images or frames attached (from the media store)."""
    if not media:
        return Message.text("user", text)
    return Message("user", (TextPart(text), *(ImagePart(str(media_path(r))) for r in media)))


def to_messages(history: Sequence[Step], actor: str) -> list[Message]:
    out = []
    for s in history:
        if s.kind == "observation":
            out.append(_with_media(f"Observation ({s.actor}): {s.content}", s.media))
        elif s.actor == actor:
            call = (
                f"\nAction: {s.tool}({json.dumps(s.tool_args, sort_keys=True)})" if s.tool else ""
            )
            out.append(Message.text("assistant", f"Thought: {s.content}{call}"))
        else:
            out.append(_with_media(s.content, s.media))
    return out


class LLMReactSystem:
    """Single-agent ReAct played by a model (`policy` is the model id)."""

    name, topology = "llm_react", "single"
    agents = ("assistant",)

    def __init__(
        self,
        client: Any,
        tools: Sequence[dict[str, Any]],
        seed: int = 0,
        max_tokens: int = 256,
        prompt: str | None = None,
    ) -> None:
        self.client, self.tools, self.prompt = client, tuple(tools), prompt
        self.policy = client.spec.model_id
        self.settings = Settings(temperature=0.0, max_tokens=max_tokens, seed=seed)

    def next_action(self, history: Sequence[Step]) -> Action:
        native = self.tools if self.client.spec.native_tools else ()
        request = ChatRequest(
            (
                Message.text("system", system_prompt(self.tools, self.prompt)),
                *to_messages(history, "assistant"),
            ),
            settings=self.settings,
            tools=native,
        )
        result = self.client.complete([request])[0]
        if not result.ok:
            raise RuntimeError(f"model call failed: {result.error}")
        cost = StepCost(
            result.usage.input_tokens,
            result.usage.output_tokens,
            result.cost_usd,
            round(result.latency_s, 6),
        )
        if result.tool_calls:  # a native tool call, where the server returns one
            name, raw = result.tool_calls[0]
            try:
                args = json.loads(raw)
            except json.JSONDecodeError:
                args = None
            if name in {t["name"] for t in self.tools} and isinstance(args, dict):
                thought = re.sub(r"^\s*Thought:\s*", "", result.text or "").strip()
                return Action("assistant", thought, name, args, cost=cost)
        return dataclasses.replace(
            parse_action("assistant", result.text or "", self.tools), cost=cost
        )
