"""The in-process scripted stand-in model (`scripted/standin`), like Inspect AI's mock model.

It answers with the deterministic responders of `mock_responders` (the same ones the HTTP
test server uses) behind the same `ModelClient` as the real providers, so the offline
default run exercises the whole LLM path — prompts, protocols, structured answers,
parsing and repair, response cache, concurrency, retries, usage and cost — except the
HTTP hop. It is **not an LLM**: its answers are rules over the prompt text, so its
accuracy says nothing about any model; its calls, tokens and cost are real bookkeeping.

Usage is counted as the test server counts it, so both stand-ins report the same figures:
input tokens = max(1, characters // 4) of the prompt text (every message's text parts
joined by newlines) plus `IMAGE_TOKENS` per image part; output tokens = max(1,
characters // 4) of the answer; no cached tokens (there is no prefix cache to hit).
Cost then comes from `config/prices.yaml` like any other model's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from whowhen.models import mock_responders
from whowhen.models.errors import ProviderError
from whowhen.models.spec import ModelSpec
from whowhen.models.types import ChatRequest, ImagePart, Reply, Usage

Responder = Callable[[str, dict[str, Any] | None], str]

RESPONDERS: dict[str, Responder] = {"standin": mock_responders.default_responder}
"""Scripted model names (the part after `scripted/`) and the responder each answers with."""

IMAGE_TOKENS = 85
"""Tokens counted per image part: OpenAI's flat price of a low-detail image."""


@cache
def revision() -> str:
    """A hash of the responders' source, part of the cache key: a cached answer belongs to
    the code that wrote it, as a real answer belongs to one model version."""
    return hashlib.sha256(Path(mock_responders.__file__).read_bytes()).hexdigest()[:16]


def prompt_text(request: ChatRequest) -> str:
    """Every message's text, joined by newlines (what the test server hands its responder)."""
    return "\n".join(m.joined_text() for m in request.messages)


def count_tokens(text: str) -> int:
    """The documented rule: one token per 4 characters, at least 1."""
    return max(1, len(text) // 4)


class ScriptedProvider:
    """`call(request) -> Reply` like the HTTP providers; no key, no network, no latency."""

    def __init__(self, spec: ModelSpec, timeout_s: float = 60.0) -> None:
        if spec.name not in RESPONDERS:
            raise ProviderError(
                "bad_request",
                f"unknown scripted model {spec.name!r}; known: {', '.join(RESPONDERS)}",
            )
        self.spec = spec
        self.responder = RESPONDERS[spec.name]

    async def call(self, request: ChatRequest) -> Reply:
        prompt = prompt_text(request)
        try:
            text = self.responder(prompt, request.schema)
        except Exception as exc:  # deterministic: retrying would fail the same way
            raise ProviderError("bad_request", f"responder failed: {exc!r}"[:300]) from None
        images = sum(isinstance(p, ImagePart) for m in request.messages for p in m.parts)
        usage = Usage(count_tokens(prompt) + IMAGE_TOKENS * images, count_tokens(text), 0)
        call = mock_responders.ACTION_LINE.search(text) if request.tools else None
        if call and self.spec.native_tools:  # an agent turn offered native tools
            return Reply(text[: call.start()].strip(), usage, "tool_calls", ((call[1], call[2]),))
        return Reply(text, usage, "stop")
