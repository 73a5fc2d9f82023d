"""The model client against a misbehaving model server: what comes off the wire and how
long a call takes are bounded, whatever the server sends. A response past the size cap,
a server that drips its answer, a Retry-After of an hour and tool-call arguments far
longer than `max_tokens` allows each end as one error line, in seconds."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from whowhen.gateway.serve import BackgroundServer
from whowhen.models import (
    DEFAULT_PRICES,
    ChatRequest,
    Message,
    ModelClient,
    Settings,
    load_prices,
    parse_model,
)

PRICES = load_prices(DEFAULT_PRICES)
MiB = 1024 * 1024


def completion(content: str | None = "ok", arguments: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if arguments is not None:
        message["tool_calls"] = [
            {"id": "c0", "type": "function", "function": {"name": "f", "arguments": arguments}}
        ]
    return {
        "id": "x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }  # fmt: skip


def gemini(text: str) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                            "finishReason": "STOP", "index": 0}]}  # fmt: skip


@dataclass
class Evil:
    """What the server does to every call (`mode`): huge | declared | drip | retry | args |
    small_args | ok."""

    mode: str
    sent: int = 0  # body chunks the server got out
    calls: int = 0
    log: list[str] = field(default_factory=list)

    async def answer(self, request: Request) -> Response:
        self.calls += 1
        is_gemini = ":generateContent" in request.url.path
        if self.mode in ("huge", "declared"):
            # a valid answer whose text never ends: 1 MiB chunks, up to 64 MiB
            headers = {"Content-Length": str(200 * 1000 * MiB)} if self.mode == "declared" else {}
            return StreamingResponse(self._huge(request, is_gemini), headers=headers,
                                     media_type="application/json")  # fmt: skip
        if self.mode == "drip":
            body = json.dumps(gemini("hi") if is_gemini else completion("hi")).encode()
            return StreamingResponse(self._drip(body), media_type="application/json")
        if self.mode == "retry" and self.calls == 1:
            return JSONResponse({"error": {"message": "slow down"}}, 429, {"Retry-After": "3600"})
        if self.mode in ("args", "small_args"):
            size = 1_000_000 if self.mode == "args" else 10_000
            return JSONResponse(completion(None, json.dumps({"x": "y" * size})))
        return JSONResponse(completion("ok"))

    async def _huge(self, request: Request, is_gemini: bool) -> AsyncIterator[bytes]:
        head = json.dumps(gemini("X") if is_gemini else completion("X")).encode()
        before, after = head.split(b'"X"')
        yield before + b'"'
        for _ in range(64):
            if await request.is_disconnected():  # the client stopped reading
                return
            self.sent += 1
            yield b"a" * MiB
        yield b'"' + after

    async def _drip(self, body: bytes) -> AsyncIterator[bytes]:
        for k in range(0, len(body), 8):  # 8 bytes every 0.25 s: each read is quick
            self.sent += 1
            yield body[k : k + 8]
            await asyncio.sleep(0.25)


@pytest.fixture
def evil() -> Iterator[tuple[Evil, str]]:
    """A model server on 127.0.0.1 (starlette on uvicorn) that misbehaves as told; the
    test sets `mode`."""
    behaviour = Evil("ok")

    async def any_path(request: Request) -> Response:
        await request.body()
        return await behaviour.answer(request)

    server = BackgroundServer(Starlette(routes=[Route("/{path:path}", any_path, methods=["POST"])]))
    server.start()
    try:
        yield behaviour, f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


def _client(root: str, model: str = "openai-compatible/m", **kw: Any) -> ModelClient:
    base = root if model.startswith("gemini") else root + "/v1"
    spec = parse_model(model, {model: {"base_url": base, "structured_output": "none"}})
    kw.setdefault("max_retries", 0)
    return ModelClient(spec, PRICES, None, progress=False, **kw)


REQUEST = ChatRequest((Message.text("user", "hi"),), settings=Settings(max_tokens=512))


def _complete(client: ModelClient, request: ChatRequest = REQUEST, within_s: float = 15) -> Any:
    """The one result, or a failed test when the call is still going after `within_s`."""
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.extend(client.complete([request])), daemon=True)
    worker.start()
    worker.join(within_s)
    assert not worker.is_alive(), f"the call was still running after {within_s} s"
    return out[0]


@pytest.mark.parametrize("model", ["openai-compatible/m", "gemini/m"])
@pytest.mark.parametrize("mode", ["huge", "declared"])
def test_a_response_past_the_size_cap_is_refused(evil, monkeypatch, model, mode) -> None:
    """64 MiB of answer (with or without a Content-Length saying 200 GB): the client stops
    reading at the cap (16 MiB), long before the server has sent it all."""
    behaviour, root = evil
    behaviour.mode = mode
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    start = time.monotonic()
    result = _complete(_client(root, model, timeout_s=30))
    assert not result.ok and result.error.startswith("too_large"), result.error
    assert "16 MiB" in result.error and "\n" not in result.error
    assert behaviour.sent < 32 and time.monotonic() - start < 10


@pytest.mark.parametrize("model", ["openai-compatible/m", "gemini/m"])
def test_a_dripping_server_cannot_hold_a_call_past_its_timeout(evil, monkeypatch, model) -> None:
    """Every read gets bytes within 0.25 s, the whole answer takes ~8 s: `timeout_s=1` is
    the time of the whole call, not of one read."""
    behaviour, root = evil
    behaviour.mode = "drip"
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    start = time.monotonic()
    result = _complete(_client(root, model, timeout_s=1))
    elapsed = time.monotonic() - start
    assert not result.ok and result.error.startswith("timeout"), result.error
    assert elapsed < 3, f"held for {elapsed:.1f} s"


def test_retry_after_is_capped_at_the_timeout(evil) -> None:
    """A 429 with `Retry-After: 3600` waits at most `timeout_s` before the retry."""
    behaviour, root = evil
    behaviour.mode = "retry"
    start = time.monotonic()
    result = _complete(_client(root, timeout_s=1, max_retries=1), within_s=10)
    assert result.ok and result.attempts == 2 and behaviour.calls == 2
    assert time.monotonic() - start < 4


def test_tool_call_arguments_are_bounded_by_max_tokens(evil) -> None:
    """1 MB of tool-call arguments cannot come out of 512 tokens: a malformed answer,
    one line, not an action with a megabyte of arguments."""
    behaviour, root = evil
    behaviour.mode = "args"
    result = _complete(_client(root))
    assert not result.ok and result.error.startswith("malformed"), result.error
    assert "tool-call arguments" in result.error and "512" in result.error
    assert "\n" not in result.error and len(result.error) < 300
    # a gateway body (the framework's own request) states its max_tokens in the body
    chat = json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 512})
    result = _complete(_client(root), ChatRequest((), chat=chat))
    assert not result.ok and result.error.startswith("malformed"), result.error


def test_tool_call_arguments_within_the_bound_pass(evil) -> None:
    """10 kB of arguments at `max_tokens` 512 is under the floor: answered as sent."""
    behaviour, root = evil
    behaviour.mode = "small_args"
    result = _complete(_client(root))
    assert result.ok, result.error
    assert len(result.tool_calls[0][1]) > 10_000
