"""Gemini through the official google-genai client. Images go as inline parts; a base
URL (for the test server or a proxy) goes through HttpOptions. SDK retries are off.

Registers the `gemini` provider. google-genai is imported when a provider is built or
a request converted, not with this module: every import of `whowhen.models` registers
the built-in providers, and most runs never call Gemini.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from whowhen.models.errors import ProviderError, parse_retry_after, provider_cause
from whowhen.models.provider import ProviderKind, register
from whowhen.models.spec import ModelSpec
from whowhen.models.types import ChatRequest, ImagePart, Reply, TextPart, Usage

if TYPE_CHECKING:
    from google.genai import types


def to_contents(request: ChatRequest) -> tuple[str | None, list[types.Content]]:
    from google.genai import types  # deferred: google-genai is heavy

    system = "\n".join(m.joined_text() for m in request.messages if m.role == "system") or None
    contents = []
    for m in request.messages:
        if m.role == "system":
            continue
        parts = [
            types.Part.from_text(text=p.text)
            if isinstance(p, TextPart)
            else types.Part.from_bytes(data=p.data(), mime_type=p.mime_type())
            for p in m.parts
            if isinstance(p, TextPart | ImagePart)
        ]
        contents.append(
            types.Content(role="model" if m.role == "assistant" else "user", parts=parts)
        )
    return system, contents


class GeminiProvider:
    def __init__(self, spec: ModelSpec, timeout_s: float) -> None:
        from google import genai  # deferred: google-genai is heavy
        from google.genai import types

        from whowhen.models.wire import capped_client  # deferred: httpx, with the SDK

        self.spec = spec
        # an httpx client of our own (not the SDK's aiohttp default): its responses are
        # capped in size (`wire`); the whole call's deadline is the model client's
        self._http = capped_client(timeout_s)
        options: dict[str, Any] = {
            "timeout": int(timeout_s * 1000),
            "httpx_async_client": self._http,
        }
        if spec.base_url:
            options["base_url"] = spec.base_url
        self._client = genai.Client(
            api_key=spec.api_key(), http_options=types.HttpOptions(**options)
        )

    async def call(self, request: ChatRequest) -> Reply:
        if request.chat:
            raise ProviderError(
                "bad_request",
                "the model gateway forwards Chat Completions bodies: reach Gemini through "
                "its OpenAI-compatible endpoint (id openai-compatible/<model>, base_url "
                "https://generativelanguage.googleapis.com/v1beta/openai/)",
            )
        from google.genai import errors as genai_errors  # deferred: google-genai is heavy
        from google.genai import types

        system, contents = to_contents(request)
        try:
            resp = await self._client.aio.models.generate_content(
                model=self.spec.name,
                contents=contents,
                config=types.GenerateContentConfig(**self._config(request, system)),
            )
        except genai_errors.APIError as exc:
            raise _api_error(exc) from None
        except ValueError as exc:
            raise ProviderError("malformed", str(exc)[:300]) from None
        except Exception as exc:  # the SDK's transport (httpx/httpx2/aiohttp) errors
            cause = provider_cause(exc)  # the size cap, raised under the SDK
            if cause is not None:
                raise cause from None
            if "timeout" in type(exc).__name__.lower():
                raise ProviderError("timeout", "request timed out") from None
            raise ProviderError("connection", type(exc).__name__) from None
        return _reply(resp)

    def _config(self, request: ChatRequest, system: Any) -> dict[str, Any]:
        """The GenerateContentConfig fields of one request: sampling, native tools (when
        the model takes them) and structured output."""
        from google.genai import types  # deferred: google-genai is heavy

        config: dict[str, Any] = {
            "temperature": request.settings.temperature,
            "max_output_tokens": request.settings.max_tokens,
            "system_instruction": system,
        }
        if request.settings.seed is not None:
            config["seed"] = request.settings.seed
        if request.settings.top_p is not None:
            config["top_p"] = request.settings.top_p
        if request.tools and self.spec.native_tools:
            config["tools"] = [
                types.Tool(
                    function_declarations=[
                        types.FunctionDeclaration(
                            name=t["name"],
                            description=t.get("description"),
                            parameters_json_schema=t.get("parameters"),
                        )
                        for t in request.tools
                    ]
                )
            ]
            config["automatic_function_calling"] = types.AutomaticFunctionCallingConfig(
                disable=True
            )
        if request.schema is not None and self.spec.structured_output != "none":
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = request.schema
        return config

    async def close(self) -> None:
        await self._http.aclose()


def _api_error(exc: Any) -> ProviderError:
    """An SDK API error as the client's error kinds (429 rate limit, 5xx server, 401/403
    auth, else bad request), with the server's Retry-After."""
    code = int(getattr(exc, "code", 0) or 0)
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    retry_after = parse_retry_after(headers.get("retry-after")) if headers else None
    kind = (
        "rate_limit"
        if code == 429
        else "server"
        if code >= 500
        else "auth"
        if code in (401, 403)
        else "bad_request"
    )
    return ProviderError(kind, str(exc).splitlines()[0][:300], retry_after, code)


def _reply(resp: Any) -> Reply:
    """Text, native tool calls, usage and finish reason of a response; an unexpected
    shape is a malformed response, not a crash."""
    try:
        calls = tuple(
            (c.name or "", json.dumps(c.args or {}, sort_keys=True))
            for c in (resp.function_calls or [])
        )
        text = resp.text if not calls else (resp.text or "")
        meta = resp.usage_metadata
        usage = (
            Usage(
                meta.prompt_token_count or 0,
                meta.candidates_token_count or 0,
                meta.cached_content_token_count or 0,
            )
            if meta
            else Usage()
        )
        finish = resp.candidates[0].finish_reason if resp.candidates else None
    except (AttributeError, IndexError, TypeError, ValueError) as exc:
        raise ProviderError("malformed", f"unexpected response shape ({exc})") from None
    if text is None and not calls:
        raise ProviderError("malformed", "response has no text")
    return Reply(
        text or "",
        usage,
        None if finish is None else str(getattr(finish, "value", finish)),
        calls,
    )


register(ProviderKind("gemini", GeminiProvider, key_env="GEMINI_API_KEY"))
