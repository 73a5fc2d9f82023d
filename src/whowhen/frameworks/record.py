"""A framework run as numbered steps, recorded while it happens.

A framework runs its own loop; the project sees it at two places: every model answer
passes the gateway (the agent's step: a message, or one action per tool call, read by
the adapter), and every tool call reaches the environment through the tools the adapter
gave the framework (the observation). Both append to one history in the order they
happen, so the steps are the same `runs`/`steps` records as any built-in system's.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from whowhen.gateway.exchange import Exchange
from whowhen.runtime import Action, Environment, Episode, Step
from whowhen.runtime.types import StepCost
from whowhen.schema import canonical_json

Reader = Callable[[str, dict[str, Any]], list[Action]]
"""(agent, assistant message) -> the actions it holds, in the framework's own format."""


def tool_call_actions(agent: str, message: dict[str, Any]) -> list[Action]:
    """Native tool calls (one action each; the message's text goes with the first), or a
    plain message: how most frameworks' answers read."""
    content = message.get("content") or ""
    calls = message.get("tool_calls") or []
    if not calls:
        return [Action(agent, content)]
    out = []
    for k, call in enumerate(calls):
        fn = call.get("function") or {}
        out.append(Action(agent, content if k == 0 else "", fn.get("name"), _args(fn)))
    return out


def native_message(actions: list[Action], message: dict[str, Any]) -> dict[str, Any]:
    """An assistant message holding `actions` as native tool calls (the first one's text
    as the content; the recorded calls' ids kept by position, so the framework's later
    requests refer to them as before)."""
    content = actions[0].content if actions else ""
    calls = [a for a in actions if a.tool is not None]
    if not calls:
        return {"role": "assistant", "content": content}
    ids = [c.get("id") for c in message.get("tool_calls") or []]
    return {
        "role": "assistant",
        "content": content or None,
        "tool_calls": [
            {
                "id": ids[k] if k < len(ids) and ids[k] else f"call_injected_{k}",
                "type": "function",
                "function": {
                    "name": a.tool,
                    "arguments": canonical_json(a.tool_args or {}) or "{}",
                },
            }
            for k, a in enumerate(calls)
        ],
    }


def _args(fn: dict[str, Any]) -> dict[str, Any]:
    raw = fn.get("arguments") or "{}"
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {"_raw": raw}  # kept as written: an unreadable call is still a step
    return value if isinstance(value, dict) else {"_value": value}


class Recorder:
    """The history of one framework run: model answers and tool results, in order."""

    def __init__(self, env: Environment, read: Reader = tool_call_actions) -> None:
        self.env = env
        self.read = read
        self.episode = Episode()
        self.episode.start(env)
        self._pending: list[Step] = []  # actions whose tool the framework has not run yet
        self._lock = threading.Lock()

    @property
    def history(self) -> list[Step]:
        return self.episode.history

    def on_answer(self, exchange: Exchange) -> None:
        """The gateway answered `exchange`: record the agent's step(s)."""
        actions = self.read(exchange.agent, exchange.message)
        cost = StepCost(exchange.input_tokens, exchange.output_tokens, exchange.cost_usd)
        with self._lock:
            for k, action in enumerate(actions):
                step = Step(len(self.history), action.actor,
                            "message" if action.tool is None else "action", action.content,
                            action.tool, action.tool_args,
                            cost=cost if k == 0 else None)  # fmt: skip
                self.history.append(step)
                exchange.steps.append(step.step)
                if action.tool is None:
                    self.env.step(action)  # a message: nothing runs, as in the agent loop
                else:
                    self._pending.append(step)

    def call_tool(self, tool: str, args: dict[str, Any]) -> str:
        """Run `tool` in the environment for the framework; its observation is a step.

        The call is matched to the oldest answered call of that tool not yet run (the
        framework may have coerced the arguments: what ran is what it passed); a call
        no answer asked for is recorded as an action of the last agent that spoke."""
        with self._lock:
            step = next((s for s in self._pending if s.tool == tool), None)
            if step is not None:
                self._pending.remove(step)
                actor = step.actor
            else:
                speakers = (s.actor for s in reversed(self.history) if s.kind != "observation")
                actor = next((a for a in speakers if a != "user"), "agent")
                self.history.append(Step(len(self.history), actor, "action", "", tool, args))
            result = self.env.step(Action(actor, "", tool, args))
            if result is None:
                return "ok" if tool != "final_answer" else "Final answer recorded."
            name, text, *media = result
            obs = Step(len(self.history), name, "observation", text,
                       media=tuple(*media))  # fmt: skip
            self.history.append(obs)
            return text
