"""The model layer's data: requests, parts, usage and results. Provider-neutral."""

from __future__ import annotations

import base64
import hashlib
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class TextPart:
    text: str


@dataclass(frozen=True)
class ImagePart:
    """An image (or a video frame) by path; the cache key uses its content hash."""

    path: str
    mime: str | None = None

    def data(self) -> bytes:
        return Path(self.path).read_bytes()

    def mime_type(self) -> str:
        return self.mime or mimetypes.guess_type(self.path)[0] or "image/png"

    def sha256(self) -> str:
        return hashlib.sha256(self.data()).hexdigest()

    def data_url(self) -> str:
        return f"data:{self.mime_type()};base64,{base64.b64encode(self.data()).decode()}"


Part = TextPart | ImagePart


@dataclass(frozen=True)
class Message:
    role: str  # system | user | assistant
    parts: tuple[Part, ...]

    @classmethod
    def text(cls, role: str, text: str) -> Message:
        return cls(role, (TextPart(text),))

    def joined_text(self) -> str:
        return "\n".join(p.text for p in self.parts if isinstance(p, TextPart))


@dataclass(frozen=True)
class Settings:
    temperature: float = 0.0
    max_tokens: int = 512
    top_p: float | None = None
    seed: int | None = 0


@dataclass(frozen=True)
class ChatRequest:
    """One call. `schema` asks for structured JSON output; `sample` distinguishes repeated
    samples of the same prompt (it is part of the cache key); `tag` is for reporting only."""

    messages: tuple[Message, ...]
    schema: dict[str, Any] | None = None
    settings: Settings = field(default_factory=Settings)
    sample: int = 0
    tag: str = ""
    tools: tuple[dict[str, Any], ...] = ()  # {name, description, parameters}: native tools
    chat: str = ""
    """A Chat Completions body as a framework sent it (canonical JSON: messages with tool
    calls and tool results, tools, tool_choice, sampling fields; no `model`), forwarded
    as it is by OpenAI-compatible providers (the model gateway); `messages` is then empty."""

    def cache_view(self) -> dict[str, Any]:
        """Everything that determines the answer, with media replaced by content hashes."""
        if self.chat:
            return {"chat": self.chat, "sample": self.sample}
        return {
            "messages": [
                {
                    "role": m.role,
                    "parts": [
                        {"text": p.text}
                        if isinstance(p, TextPart)
                        else {"image_sha256": p.sha256(), "mime": p.mime_type()}
                        for p in m.parts
                    ],
                }
                for m in self.messages
            ],
            "schema": self.schema,
            "settings": {
                "temperature": self.settings.temperature,
                "max_tokens": self.settings.max_tokens,
                "top_p": self.settings.top_p,
                "seed": self.settings.seed,
            },
            "sample": self.sample,
            **({"tools": list(self.tools)} if self.tools else {}),
        }


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


@dataclass(frozen=True)
class Reply:
    """What a provider returns for one successful call."""

    text: str
    usage: Usage
    finish_reason: str | None = None
    tool_calls: tuple[tuple[str, str], ...] = ()  # (tool name, arguments as JSON)


@dataclass
class ChatResult:
    """The outcome of one request after cache, retries and pricing."""

    text: str | None
    usage: Usage
    cost_usd: float
    latency_s: float
    cached: bool
    attempts: int
    error: str | None = None
    finish_reason: str | None = None
    tool_calls: tuple[tuple[str, str], ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None
