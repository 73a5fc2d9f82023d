"""Which agent made a call, for a program that does not say so in its URL.

A program behind `whowhen record` reaches the gateway through one base URL (the
`OPENAI_BASE_URL` it was given), so the gateway tells its agents apart, in order, by:

1. a path `/agent/<name>/v1`, when the program gives each agent its own base URL;
2. an `X-Agent-Name` header;
3. the system prompt: each distinct one is one agent, named by the role it declares
   ("You are the planner agent" -> `planner`), else `agent-1`, `agent-2`, ... in the
   order they were first seen (a call with no system prompt is `agent`).

Names are given in call order, so a replay of the same program names its agents alike.
"""

from __future__ import annotations

import re
from typing import Any

from whowhen.gateway.names import check_name

AGENT_HEADER = "x-agent-name"
_DECLARED = re.compile(
    r"\byou are (?:the |an? )?([a-z][a-z0-9_-]{0,40}?)(?:[ _-]agent)\b", re.IGNORECASE
)
_ROLE_NAMED = re.compile(r"\byour (?:name|role) is ([A-Za-z][\w-]{0,40})\b", re.IGNORECASE)


def system_prompt(body: dict[str, Any]) -> str | None:
    """The text of a request's first system (or developer) message, if any."""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") in ("system", "developer"):
            content = message.get("content")
            if isinstance(content, list):
                parts = [p.get("text", "") for p in content if isinstance(p, dict)]
                content = "\n".join(str(p) for p in parts)
            return str(content or "")
    return None


def declared_role(prompt: str) -> str | None:
    """The role a system prompt declares ('You are the planner agent' -> 'planner')."""
    found = _DECLARED.search(prompt) or _ROLE_NAMED.search(prompt)
    return found.group(1).lower() if found else None


class AgentNames:
    """Names for one run's agents by system prompt, in call order (see the module)."""

    def __init__(self) -> None:
        self.by_prompt: dict[str, str] = {}

    def name(self, body: dict[str, Any]) -> str:
        prompt = system_prompt(body)
        if prompt is None:
            return "agent"
        if prompt not in self.by_prompt:
            role = declared_role(prompt)
            unnamed = sum(1 for n in self.by_prompt.values() if n.startswith("agent-"))
            try:
                name = check_name("agent", role) if role else f"agent-{unnamed + 1}"
            except ValueError:
                name = f"agent-{unnamed + 1}"
            self.by_prompt[prompt] = name
        return self.by_prompt[prompt]
