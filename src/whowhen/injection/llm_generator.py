"""LLM error generator: the same contract as the programmatic operators (mode definition +
step + context -> a replacement action), written by a model.

The model sees the mode's definition and example, the steps before the chosen one and
the original action, and returns the replacement's text and tool arguments as JSON.
A replacement that changes nothing, changes the tool, or drops an argument is refused
(None), and planning moves on to the next option: format validity is checked here, not
trusted.
"""

from __future__ import annotations

import json
import random
from typing import Any

from whowhen.models import ChatRequest, Message, Settings
from whowhen.runtime import Action
from whowhen.taxonomy import Mode


def schema(original: Action) -> dict[str, Any]:
    """The reply's JSON schema: the step's text, and its tool arguments as an object with
    the original's argument names (a server with grammars then keeps every name)."""
    names = sorted(original.tool_args or {})
    arguments = {
        "type": "object",
        "additionalProperties": False,
        "required": names,
        "properties": {n: {"type": "string"} for n in names},
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["content", "arguments"],
        "properties": {"content": {"type": "string"}, "arguments": arguments},
    }


SYSTEM = (
    "You write realistic mistakes for agent trajectories, for a failure-attribution "
    "benchmark. Rewrite one agent step so that it makes exactly the mistake described, "
    "reads like a natural slip, keeps the same tool and argument names, and contains "
    "no hint that it was changed."
)


class LLMErrorGenerator:
    def __init__(self, client: Any, context_steps: int = 6) -> None:
        self.client, self.context_steps = client, context_steps

    def request(
        self, original: Action, mode: Mode, context: list[dict[str, Any]], sample: int
    ) -> ChatRequest:
        shown = "\n".join(
            f"[{s['step']}] {s['actor']} ({s['kind']}): {s['content']}"
            + (f" -> {s['tool']}({s['tool_args']})" if s.get("tool") else "")
            for s in context[-self.context_steps :]
        )
        user = (
            f"Mistake to make: {mode.id} ({mode.category}): {mode.definition}\n"
            f"Example: {mode.example}\n\nSteps so far:\n{shown}\n\n"
            f"Step to rewrite, by {original.actor}:\ncontent: {original.content}\n"
            f"tool: {original.tool}\narguments: "
            f"{json.dumps(original.tool_args, sort_keys=True)}\n\n"
            'Reply with JSON: {"content": ..., "arguments": {<the same argument names>}}'
        )
        return ChatRequest(
            (Message.text("system", SYSTEM), Message.text("user", user)),
            schema=schema(original),
            settings=Settings(temperature=0.0, max_tokens=300),
            sample=sample,
        )

    def __call__(
        self, original: Action, mode: Mode, context: list[dict[str, Any]], rng: random.Random
    ) -> Action | None:
        result = self.client.complete([self.request(original, mode, context, 0)])[0]
        if not result.ok:
            return None
        try:
            data = json.loads(result.text or "")
            args = data["arguments"] if original.tool else None
            if isinstance(args, str):  # a model that wrote the object as a JSON string
                args = json.loads(args)
        except (json.JSONDecodeError, KeyError, TypeError):
            return None
        if original.tool and (
            not isinstance(args, dict) or set(args) != set(original.tool_args or {})
        ):
            return None
        replacement = Action(
            original.actor, str(data.get("content") or original.content), original.tool, args
        )
        return None if replacement == original else replacement
