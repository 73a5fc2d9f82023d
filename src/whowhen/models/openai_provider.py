"""OpenAI Chat Completions through the official client; a base URL reaches any
OpenAI-compatible server. The SDK's own retries are switched off (max_retries=0):
the model client retries, so attempts are counted once and never multiplied.

Registers two providers: `openai` (key required) and `openai-compatible` (a base URL
required; local servers take any key). The `openai` SDK is imported when a provider is
built, not with this module: registering must stay cheap, since every import of
`whowhen.models` registers the built-in providers and most runs never call OpenAI.
"""

from __future__ import annotations

import json
from typing import Any

from whowhen.models.errors import ProviderError, parse_retry_after, provider_cause
from whowhen.models.provider import ProviderKind, register
from whowhen.models.spec import ModelSpec
from whowhen.models.types import ChatRequest, ImagePart, Reply, TextPart, Usage


def response_format(spec: ModelSpec, schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The structured-output request in the form this server accepts."""
    if schema is None or spec.structured_output == "none":
        return None
    if spec.structured_output == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": schema, "strict": True},
        }
    if spec.structured_output == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_object"}


def to_messages(request: ChatRequest) -> list[dict[str, Any]]:
    out = []
    for m in request.messages:
        if all(isinstance(p, TextPart) for p in m.parts):
            out.append({"role": m.role, "content": m.joined_text()})
            continue
        content = [
            {"type": "text", "text": p.text}
            if isinstance(p, TextPart)
            else {"type": "image_url", "image_url": {"url": p.data_url()}}
            for p in m.parts
            if isinstance(p, TextPart | ImagePart)
        ]
        out.append({"role": m.role, "content": content})
    return out


def request_body(spec: ModelSpec, request: ChatRequest) -> dict[str, Any]:
    """The Chat Completions body; shared by live calls and Batch API input lines. A
    framework's own body (`request.chat`) goes as it is, to this model."""
    if request.chat:
        return {**json.loads(request.chat), "model": spec.name}
    body: dict[str, Any] = {
        "model": spec.name,
        "messages": to_messages(request),
        "temperature": request.settings.temperature,
        "max_tokens": request.settings.max_tokens,
    }
    if request.settings.top_p is not None:
        body["top_p"] = request.settings.top_p
    if request.settings.seed is not None:
        body["seed"] = request.settings.seed
    fmt = response_format(spec, request.schema)
    if fmt is not None:
        body["response_format"] = fmt
    if request.tools and spec.native_tools:
        body["tools"] = [{"type": "function", "function": tool} for tool in request.tools]
    return body


def reply_from_completion(data: dict[str, Any]) -> Reply:
    """A Chat Completion (as a dict) -> Reply; a wrong shape is a `malformed` fault."""
    try:
        choice = data["choices"][0]
        usage = data.get("usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        calls = tuple(
            (c["function"]["name"], c["function"].get("arguments") or "{}")
            for c in choice["message"].get("tool_calls") or []
        )
        return Reply(
            choice["message"].get("content") or "",
            Usage(
                usage.get("prompt_tokens") or 0,
                usage.get("completion_tokens") or 0,
                details.get("cached_tokens") or 0,
            ),
            choice.get("finish_reason"),
            calls,
        )
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ProviderError("malformed", f"unexpected response shape ({exc!r})") from None


class OpenAIProvider:
    def __init__(self, spec: ModelSpec, timeout_s: float) -> None:
        import openai  # deferred: the openai SDK is heavy (seconds to import)

        from whowhen.models.wire import capped_client  # deferred: httpx, with the SDK

        self.spec = spec
        self._openai = openai
        self._client = openai.AsyncOpenAI(
            api_key=spec.api_key(),
            base_url=spec.base_url,
            max_retries=0,
            timeout=timeout_s,
            http_client=capped_client(timeout_s, cls=openai.DefaultAsyncHttpxClient),
        )

    async def call(self, request: ChatRequest) -> Reply:
        openai = self._openai
        try:
            resp = await self._client.chat.completions.create(**request_body(self.spec, request))
        except openai.RateLimitError as exc:
            raise ProviderError(
                "rate_limit",
                _short(exc),
                parse_retry_after(exc.response.headers.get("retry-after")),
                429,
            ) from None
        except openai.APITimeoutError:
            raise ProviderError("timeout", "request timed out") from None
        except openai.APIConnectionError as exc:
            raise provider_cause(exc) or ProviderError("connection", _short(exc)) from None
        except openai.AuthenticationError as exc:
            unset = self.spec.unset_key_env()
            hint = f"no key sent (set {unset}): " if unset else ""
            raise ProviderError("auth", hint + _short(exc), status=exc.status_code) from None
        except openai.APIStatusError as exc:
            kind = "server" if exc.status_code >= 500 else "bad_request"
            raise ProviderError(
                kind,
                _short(exc),
                parse_retry_after(exc.response.headers.get("retry-after")),
                exc.status_code,
            ) from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise ProviderError("malformed", _short(exc)) from None
        return reply_from_completion(resp.model_dump())

    async def close(self) -> None:
        await self._client.close()


def _short(exc: Exception) -> str:
    """First line of the SDK's message, without any request echo."""
    return str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__


register(ProviderKind("openai", OpenAIProvider, key_env="OPENAI_API_KEY", batch=True))
register(
    ProviderKind(
        "openai-compatible",
        OpenAIProvider,
        key_env="OPENAI_COMPATIBLE_API_KEY",
        needs_key=False,  # local servers accept any key
        needs_base_url=True,
        batch=True,
    )
)
