"""The one way the pipeline calls a model: cache first, then the provider with bounded
adaptive concurrency, retries with backoff, pricing and a cost limit.

Concurrency is AIMD: the limit halves on a 429 (and the Retry-After wait, at most
`timeout_s`, is honoured by every worker), and grows by one after a run of successes, up
to `max_concurrency`.
Backoff on 5xx, timeouts and malformed responses is exponential with full jitter,
capped by `max_retries`. Jitter only changes *when* a call is made, never its result,
so artifacts stay deterministic.

Identical requests (one cache key) in one batch are single-flight: the first is sent,
the others share its outcome, success or failure, without a call, a retry or a cost of
their own. A shared answer looks like a cache hit (`cached`, no latency or attempts, the
answer's list price), so results do not depend on which duplicate went first and a fresh
run's predictions equal a rerun's. Batches are the unit: the stages call `complete()`
one batch at a time from one thread, and a client is not shared across threads.

Whatever a server sends, one call is bounded: `timeout_s` is the deadline of the whole
call (connect, wait, read; a server dripping a byte at a time cannot stretch it), the
response's size is capped on the wire (`wire`), and tool-call arguments longer than the
request's `max_tokens` could have produced are a malformed answer (`tool_args_error`).

The client knows no provider by name: it builds its provider with the factory the
spec's provider registered (`provider.py`), so a new provider needs no change here.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tqdm import tqdm

from whowhen.models.cache import ResponseCache
from whowhen.models.errors import ProviderError
from whowhen.models.provider import Provider, provider_kind
from whowhen.models.spec import ModelSpec, PriceTable
from whowhen.models.types import ChatRequest, ChatResult, Reply, Usage

log = logging.getLogger(__name__)


@dataclass
class ClientStats:
    """Every request ends as exactly one of: a paid call (`calls`), a failed one
    (`failures`), a cache hit, or a duplicate that shared an identical request's outcome
    in its batch (`shared`). `spent_usd` is what the calls cost, each paid once."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    spent_usd: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)
    shared: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "shared": self.shared,
            "retries": self.retries,
            "failures": self.failures,
            "spent_usd": round(self.spent_usd, 6),
            "errors": dict(sorted(self.errors.items())),
        }


class AdaptiveLimiter:
    """At most `limit` calls in flight; the limit shrinks on rate limits and recovers."""

    def __init__(self, maximum: int) -> None:
        self.maximum = max(1, maximum)
        self.limit = self.maximum
        self.in_flight = 0
        self.paused_until = 0.0
        self._cond = asyncio.Condition()
        self._streak = 0

    async def acquire(self) -> None:
        async with self._cond:
            while self.in_flight >= self.limit:
                await self._cond.wait()
            self.in_flight += 1
        wait = self.paused_until - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)

    async def release(self, rate_limited: bool, retry_after: float | None) -> None:
        async with self._cond:
            self.in_flight -= 1
            if rate_limited:
                self.limit = max(1, self.limit // 2)
                self._streak = 0
                if retry_after:
                    self.paused_until = max(self.paused_until, time.monotonic() + retry_after)
            else:
                self._streak += 1
                if self._streak >= self.limit and self.limit < self.maximum:
                    self.limit += 1
                    self._streak = 0
            self._cond.notify_all()


class CostLimitReached(Exception):
    pass


class ModelClient:
    """Runs requests against one model. `provider` may be injected (tests, batch mode)."""

    def __init__(
        self,
        spec: ModelSpec,
        prices: PriceTable,
        cache: ResponseCache | None = None,
        *,
        max_concurrency: int = 16,
        max_retries: int = 4,
        timeout_s: float = 60.0,
        backoff_s: float = 0.5,
        cost_limit_usd: float | None = None,
        progress: bool = True,
        provider: Provider | None = None,
    ) -> None:
        self.spec, self.prices, self.cache = spec, prices, cache
        self.max_concurrency, self.max_retries = max_concurrency, max_retries
        self.timeout_s, self.backoff_s = timeout_s, backoff_s
        self.cost_limit_usd = cost_limit_usd
        self.progress = progress
        self._provider = provider
        self.stats = ClientStats()

    def _make_provider(self) -> Provider:
        """The injected provider, else a fresh one from the spec's registered factory."""
        if self._provider is not None:
            return self._provider
        return provider_kind(self.spec.provider).factory(self.spec, self.timeout_s)

    def complete(self, requests: Sequence[ChatRequest]) -> list[ChatResult]:
        """Synchronous entry point; results come back in request order."""
        return asyncio.run(self.run(requests))

    def _groups(self, requests: Sequence[ChatRequest]) -> dict[str, list[int]]:
        """Request indices by cache key, in request order: the first of each is sent."""
        groups: dict[str, list[int]] = {}
        for i, req in enumerate(requests):
            groups.setdefault(ResponseCache.key(self.spec, req), []).append(i)
        return groups

    async def run(self, requests: Sequence[ChatRequest]) -> list[ChatResult]:
        results: list[ChatResult | None] = [None] * len(requests)
        todo: list[tuple[str, list[int]]] = []
        for key, idx in self._groups(requests).items():
            hit = self.cache.get(self.spec, requests[idx[0]], key) if self.cache else None
            if hit is None:
                todo.append((key, idx))
                continue
            self.stats.cache_hits += len(idx)
            for i in idx:
                results[i] = self._result(hit, cached=True, latency=0.0, attempts=0)
        if todo:
            await self._call_all(requests, todo, results)
        log.debug("%s: %d requests, %s", self.spec.model_id, len(requests), self.stats.as_dict())
        return [r for r in results if r is not None]

    async def _call_all(
        self,
        requests: Sequence[ChatRequest],
        todo: list[tuple[str, list[int]]],
        results: list[ChatResult | None],
    ) -> None:
        """One call per key in `todo`, concurrently; its duplicates share the outcome."""
        provider = self._make_provider()
        limiter = AdaptiveLimiter(self.max_concurrency)
        bar = tqdm(
            total=len(requests),
            initial=len(requests) - sum(len(idx) for _, idx in todo),
            unit="call",
            desc=self.spec.model_id,
            disable=not self.progress,
            leave=False,
        )
        try:

            async def worker(key: str, idx: list[int]) -> None:
                first = await self._one(provider, limiter, requests[idx[0]], key)
                results[idx[0]] = first
                for i in idx[1:]:
                    results[i] = self._shared(first)
                bar.update(len(idx))
                bar.set_postfix(
                    hits=self.stats.cache_hits,
                    shared=self.stats.shared,
                    retries=self.stats.retries,
                    cost=f"${self.stats.spent_usd:.4f}",
                    refresh=False,
                )

            await asyncio.gather(*(worker(key, idx) for key, idx in todo))
        finally:
            bar.close()
            close = getattr(provider, "close", None)
            if close is not None:
                await close()

    def _result(self, reply: Reply, *, cached: bool, latency: float, attempts: int) -> ChatResult:
        return ChatResult(
            reply.text,
            reply.usage,
            self.prices.cost(self.spec.model_id, reply.usage),
            latency,
            cached,
            attempts,
            None,
            reply.finish_reason,
            reply.tool_calls,
        )

    def _failed(self, error: str, attempts: int, latency: float) -> ChatResult:
        self.stats.failures += 1
        kind = error.split(":", 1)[0]
        self.stats.errors[kind] = self.stats.errors.get(kind, 0) + 1
        return ChatResult(None, Usage(), 0.0, latency, False, attempts, error)

    def _shared(self, first: ChatResult) -> ChatResult:
        """A duplicate's result: `first`'s outcome as a cache hit would give it (same text,
        usage and list price, `cached`, no latency or attempts). A failure is the same
        failure, not cached and not counted again: the call failed once."""
        self.stats.shared += 1
        return replace(first, latency_s=0.0, cached=first.ok, attempts=0)

    async def _one(
        self, provider: Provider, limiter: AdaptiveLimiter, request: ChatRequest, key: str
    ) -> ChatResult:
        start = time.monotonic()
        attempts = 0
        while True:
            await limiter.acquire()
            if self.cost_limit_usd is not None and self.stats.spent_usd >= self.cost_limit_usd:
                await limiter.release(False, None)
                return self._failed(
                    f"cost_limit: ${self.cost_limit_usd} spent; call skipped",
                    attempts,
                    time.monotonic() - start,
                )
            attempts += 1
            error: ProviderError | None = None
            try:
                async with asyncio.timeout(self.timeout_s):
                    reply = await provider.call(request)
                error = tool_args_error(reply, request)
            except TimeoutError:
                error = ProviderError(
                    "timeout", f"no whole answer within timeout_s={self.timeout_s:g} s"
                )
            except ProviderError as exc:
                error = exc
            except Exception as exc:  # an SDK surprise is one failed item, not a crash
                error = ProviderError("malformed", f"{type(exc).__name__}: {exc}"[:300])
            retry_after = self._retry_after(error)
            await limiter.release(error is not None and error.kind == "rate_limit", retry_after)
            if error is None:
                self.stats.calls += 1
                result = self._result(
                    reply, cached=False, latency=time.monotonic() - start, attempts=attempts
                )
                self.stats.spent_usd += result.cost_usd
                if self.cache is not None:
                    self.cache.put(self.spec, request, reply, key)
                return result
            if not error.retryable or attempts > self.max_retries:
                return self._failed(str(error), attempts, time.monotonic() - start)
            self.stats.retries += 1
            delay = (
                retry_after
                if retry_after is not None
                else (random.uniform(0, self.backoff_s * 2 ** (attempts - 1)))
            )
            await asyncio.sleep(delay)

    def _retry_after(self, error: ProviderError | None) -> float | None:
        """The server's Retry-After, at most `timeout_s`: a server asking for an hour
        must not stall every worker of the batch for an hour."""
        if error is None or error.retry_after is None:
            return None
        if error.retry_after > self.timeout_s:
            log.warning(
                "%s: Retry-After %g s capped at timeout_s=%g s",
                self.spec.model_id, error.retry_after, self.timeout_s,
            )  # fmt: skip
            return self.timeout_s
        return error.retry_after


TOOL_ARG_CHARS_PER_TOKEN = 32
"""How many characters of tool-call arguments one output token may stand for, at most
(a token is a few characters; long whitespace or digit runs a few dozen)."""
TOOL_ARG_FLOOR = 16 * 1024
"""Tool-call arguments this long always pass, whatever `max_tokens` says."""
UNSTATED_MAX_TOKENS = 16_384
"""The output budget assumed where a request states none (a framework's own body)."""


def stated_max_tokens(request: ChatRequest) -> int | None:
    """The output budget the request asked for (a framework body's own
    `max_completion_tokens` / `max_tokens`, else the settings'), None where unstated."""
    if not request.chat:
        return request.settings.max_tokens
    try:
        body = json.loads(request.chat)
    except ValueError:
        return None
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key) if isinstance(body, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def tool_args_error(reply: Reply, request: ChatRequest) -> ProviderError | None:
    """A `malformed` error when the answer's tool-call arguments are longer than its
    output budget could have written: a server that sends a megabyte of arguments for
    512 tokens is broken or hostile, and its arguments would become an agent's action."""
    size = sum(len(arguments) for _, arguments in reply.tool_calls)
    if size <= TOOL_ARG_FLOOR:
        return None
    max_tokens = stated_max_tokens(request)
    limit = max(TOOL_ARG_FLOOR, TOOL_ARG_CHARS_PER_TOKEN * (max_tokens or UNSTATED_MAX_TOKENS))
    if size <= limit:
        return None
    budget = f"max_tokens {max_tokens}" if max_tokens else "an unstated max_tokens"
    return ProviderError(
        "malformed", f"tool-call arguments of {size} chars, more than {budget} allows ({limit})"
    )
