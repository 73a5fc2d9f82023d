"""What a model server may send back is bounded: the HTTP client both SDKs are given
counts the bytes of every response as they come off the wire and stops reading past a
cap (`MAX_RESPONSE_BYTES`), so a server that answers with 200 MB, or never stops, costs
at most the cap in memory, not the whole answer.

Compressed answers are not asked for (`Accept-Encoding: identity`) and refused when
sent anyway: the cap counts wire bytes, and a few compressed megabytes can inflate to
gigabytes after it. Chat answers are kilobytes; compression saves nothing worth that.

How long a call may take is the model client's business (`ModelClient`: one deadline
for the whole call); this module only bounds its size. It imports httpx, so the
providers import it when they are built, not with the model layer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx

from whowhen.models.errors import ProviderError

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
"""The most bytes one response may have on the wire (headers aside): a chat answer is
kilobytes, a long one with tool calls well under a megabyte."""


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):g} MiB"


def too_large(url: object, limit: int, size: str) -> ProviderError:
    """The one error line of a response past the cap (not retried: it would be again)."""
    return ProviderError("too_large", f"response from {url} is {size}, over the {_mib(limit)} cap")


class CappedStream(httpx.AsyncByteStream):
    """A response body that raises `too_large` once more than `limit` bytes came in."""

    def __init__(self, inner: Any, limit: int, url: object) -> None:
        self._inner, self._limit, self._url = inner, limit, url

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self._inner:
            size += len(chunk)
            if size > self._limit:
                raise too_large(self._url, self._limit, f"over {_mib(self._limit)}")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def capped_hooks(limit: int | None = None) -> dict[str, list[Any]]:
    """httpx event hooks that ask for uncompressed answers and cap each response body."""

    async def ask_identity(request: httpx.Request) -> None:
        request.headers["Accept-Encoding"] = "identity"

    async def cap(response: httpx.Response) -> None:
        cap_bytes = MAX_RESPONSE_BYTES if limit is None else limit
        url = response.request.url.copy_with(query=None)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise ProviderError(
                "malformed",
                f"response from {url} is compressed ({encoding}) though identity was asked: "
                "its size could not be bounded",
            )
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap_bytes:
            raise too_large(url, cap_bytes, f"{int(declared)} bytes by its Content-Length")
        response.stream = CappedStream(response.stream, cap_bytes, url)

    return {"request": [ask_identity], "response": [cap]}


def capped_client(
    timeout_s: float, limit: int | None = None, cls: type[httpx.AsyncClient] = httpx.AsyncClient
) -> httpx.AsyncClient:
    """An async HTTP client whose responses are capped (`cls`: an SDK's own subclass, to
    keep its connection defaults). Proxies from the environment still apply: the cap is
    a hook on every response, not a transport."""
    return cls(timeout=timeout_s, event_hooks=capped_hooks(limit))
