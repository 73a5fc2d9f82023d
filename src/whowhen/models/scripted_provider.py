"""The in-process scripted provider (`scripted/<name>`), like Inspect AI's mock model.

A scripted model is a *responder*, a function `(prompt text, schema) -> answer text`,
run behind the same `ModelClient` as the real providers, so an offline run exercises the
whole LLM path — prompts, protocols, structured answers, parsing and repair, response
cache, concurrency, retries, usage and cost — except the HTTP hop. It is **not an LLM**:
its answers are rules over the prompt text, so its accuracy says nothing about any
model; its calls, tokens and cost are real bookkeeping.

This module is generic and holds no responders. Code above the model layer registers
them with `register_responder` (`whowhen.standin` registers `standin`, whose rules read
benchmark tasks, and `BUILTIN_RESPONDERS` names that module so the first lookup of
`scripted/standin` imports it): the model layer must not depend on benchmark code, and a
responder that reads tasks belongs with the tasks' code, not here.

Usage is counted as the HTTP test server counts it, so both report the same figures:
input tokens = max(1, characters // 4) of the prompt text (every message's text parts
joined by newlines) plus `IMAGE_TOKENS` per image part; output tokens = max(1,
characters // 4) of the answer; no cached tokens (there is no prefix cache to hit).
Cost then comes from the price table (`whowhen/data/prices.yaml`) like any other model's.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whowhen.errors import WhowhenError
from whowhen.models.errors import ProviderError
from whowhen.models.provider import ProviderKind, register
from whowhen.models.spec import ModelSpec
from whowhen.models.types import ChatRequest, ImagePart, Reply, Usage

Responder = Callable[[str, dict[str, Any] | None], str]


@dataclass(frozen=True)
class ScriptedResponder:
    """A registered responder and its revision (a hash of its source file)."""

    respond: Responder
    revision: str


RESPONDERS: dict[str, ScriptedResponder] = {}
"""Scripted model names (the part after `scripted/`) -> responder; fill it with
`register_responder` (tests may swap an entry with monkeypatch.setitem)."""

IMAGE_TOKENS = 85
"""Tokens counted per image part: OpenAI's flat price of a low-detail image."""

ACTION_LINE = re.compile(r"^Action: (\w+)\((.*)\)\s*$", re.M)
"""A tool call in the text action protocol (`Action: tool({...})`). When a request
offers tools, a scripted answer with such a line comes back as a native tool call, as
a real model's would (the HTTP test server does the same)."""


def source_revision(source_file: str | Path | tuple[str | Path, ...]) -> str:
    """A hash of a responder's source file(s): part of the cache key, so a cached answer
    belongs to the code that wrote it, as a real answer belongs to one model version."""
    files = source_file if isinstance(source_file, tuple) else (source_file,)
    digest = hashlib.sha256()
    for path in files:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


def register_responder(
    name: str,
    responder: Responder,
    source_file: str | Path | tuple[str | Path, ...],
    *,
    replace: bool = False,
) -> None:
    """Make `scripted/<name>` answer with `responder`. `source_file` is the file (or files)
    whose code decides the answers (usually the responder's module, `__file__`); its hash
    is the model's revision. A taken name is an error unless `replace` is set."""
    entry = ScriptedResponder(responder, source_revision(source_file))
    if name in RESPONDERS and not replace and RESPONDERS[name] != entry:
        raise WhowhenError(f"scripted model 'scripted/{name}' is already registered")
    RESPONDERS[name] = entry


BUILTIN_RESPONDERS = {"standin": "whowhen.standin"}
"""Scripted model name -> the module that registers it, imported on the first lookup (the
stand-in plays benchmark tasks, so it sits above this layer and is named, not imported)."""


def _known() -> str:
    names = dict.fromkeys([*RESPONDERS, *BUILTIN_RESPONDERS])
    return ", ".join(f"scripted/{n}" for n in names)


def responder(name: str) -> ScriptedResponder:
    """The registered responder for `scripted/<name>`, its module imported if it is a
    built-in one not yet loaded; the error names the known ones."""
    if name not in RESPONDERS and name in BUILTIN_RESPONDERS:
        importlib.import_module(BUILTIN_RESPONDERS[name])
    try:
        return RESPONDERS[name]
    except KeyError:
        raise WhowhenError(
            f"unknown scripted model 'scripted/{name}'; known: {_known()}", field="model"
        ) from None


TURN_OPEN, TURN_CLOSE = "<|assistant|>", "<|end|>"
"""The lines around an assistant message in the text a responder gets: a responder that
plays an agent reads its own earlier turns from them."""
TURNS = re.compile(re.escape(TURN_OPEN) + r"\n(.*?)\n" + re.escape(TURN_CLOSE) + r"(?:\n|$)", re.S)
"""Splits a flattened prompt into user text, assistant turn, user text, ... (`flatten`
read back)."""


def flatten(messages: Iterable[tuple[str, str]]) -> str:
    """(role, text) pairs as the one text a responder gets: joined by newlines, each
    assistant message between `TURN_OPEN` and `TURN_CLOSE` lines."""
    return "\n".join(
        f"{TURN_OPEN}\n{text}\n{TURN_CLOSE}" if role == "assistant" else text
        for role, text in messages
    )


def chat_turns(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(role, text) of Chat Completions messages, tool traffic in the text protocol: an
    assistant's tool calls as `Action: name(arguments)` lines, a tool result as
    `Observation (name): text`, a named speaker's message as `[name]: text` (a
    framework's conversation, as the responders read it)."""
    names: dict[str, str] = {}
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
        text = content or ""
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {}
            names[call.get("id", "")] = fn.get("name", "")
            text += f"\nAction: {fn.get('name')}({fn.get('arguments') or '{}'})"
        if m.get("role") == "tool":
            name = names.get(m.get("tool_call_id", ""), m.get("name") or "tool")
            out.append(("user", f"Observation ({name}): {text}"))
        elif m.get("name") and m.get("role") != "system":  # a group chat's speaker
            out.append((m.get("role", "user"), f"[{m['name']}]: {text.strip(chr(10))}"))
        else:
            out.append((m.get("role", "user"), text.strip("\n")))
    return out


def prompt_text(request: ChatRequest) -> str:
    """Every message's text as one (what the test server hands its responder too); a
    framework's own body (`request.chat`) with its tool traffic as text."""
    if request.chat:
        return flatten(chat_turns(json.loads(request.chat).get("messages", [])))
    return flatten((m.role, m.joined_text()) for m in request.messages)


def count_tokens(text: str) -> int:
    """The documented rule: one token per 4 characters, at least 1."""
    return max(1, len(text) // 4)


class ScriptedProvider:
    """`call(request) -> Reply` like the HTTP providers; no key, no network, no latency."""

    def __init__(self, spec: ModelSpec, timeout_s: float = 60.0) -> None:
        if spec.name not in RESPONDERS:
            raise ProviderError(
                "bad_request", f"unknown scripted model {spec.model_id!r}; known: {_known()}"
            )
        self.spec = spec
        self.responder = RESPONDERS[spec.name].respond

    async def call(self, request: ChatRequest) -> Reply:
        prompt = prompt_text(request)
        try:
            text = self.responder(prompt, request.schema)
        except Exception as exc:  # deterministic: retrying would fail the same way
            raise ProviderError("bad_request", f"responder failed: {exc!r}"[:300]) from None
        images = sum(isinstance(p, ImagePart) for m in request.messages for p in m.parts)
        usage = Usage(count_tokens(prompt) + IMAGE_TOKENS * images, count_tokens(text), 0)
        offered = request.tools or (request.chat and json.loads(request.chat).get("tools"))
        call = ACTION_LINE.search(text) if offered else None
        if call and self.spec.native_tools:  # an agent turn offered native tools
            return Reply(text[: call.start()].strip(), usage, "tool_calls", ((call[1], call[2]),))
        return Reply(text, usage, "stop")


def _check_name(spec: ModelSpec) -> None:
    responder(spec.name)


def _revision(spec: ModelSpec) -> str:
    """The model's "version" is its responder's code."""
    return responder(spec.name).revision


register(
    ProviderKind(
        "scripted",
        ScriptedProvider,
        needs_key=False,  # nothing to authenticate with
        check_name=_check_name,
        revision=_revision,
    )
)
