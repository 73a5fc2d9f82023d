"""Model layer: one chat interface, OpenAI / OpenAI-compatible / Gemini providers behind it
(and the in-process scripted stand-in `scripted/standin`), a content-addressed response
cache, priced usage, adaptive concurrency and retries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whowhen.models.cache import ResponseCache
from whowhen.models.client import ClientStats, ModelClient
from whowhen.models.errors import ProviderError
from whowhen.models.spec import ModelSpec, PriceTable, load_prices, parse_model
from whowhen.models.types import (
    ChatRequest,
    ChatResult,
    ImagePart,
    Message,
    Reply,
    Settings,
    TextPart,
    Usage,
)

__all__ = [
    "ChatRequest",
    "ChatResult",
    "ClientStats",
    "ImagePart",
    "Message",
    "ModelClient",
    "ModelSpec",
    "PriceTable",
    "ProviderError",
    "Reply",
    "ResponseCache",
    "Settings",
    "TextPart",
    "Usage",
    "load_prices",
    "make_client",
    "parse_model",
]

LLM_DEFAULTS: dict[str, Any] = {
    "cache_dir": ".cache/whowhen/responses",
    "prices": "config/prices.yaml",
    "max_concurrency": 16,
    "max_retries": 4,
    "timeout_s": 60.0,
    "cost_limit_usd": None,
    "progress": True,
    "batch": False,
    "batch_poll_s": 30.0,
}


def make_client(
    model: str,
    llm: dict[str, Any] | None = None,
    registry: dict[str, dict[str, Any]] | None = None,
    root: str | Path = ".",
) -> ModelClient:
    """A client for `model` (an id or a `models:` registry name) with the `llm:` settings."""
    cfg = {**LLM_DEFAULTS, **(llm or {})}
    spec = parse_model(model, registry)
    cache = ResponseCache(Path(root) / cfg["cache_dir"]) if cfg["cache_dir"] else None
    return ModelClient(
        spec,
        load_prices(Path(root) / cfg["prices"]),
        cache,
        max_concurrency=cfg["max_concurrency"],
        max_retries=cfg["max_retries"],
        timeout_s=cfg["timeout_s"],
        cost_limit_usd=cfg["cost_limit_usd"],
        progress=cfg["progress"],
    )


def make_runner(
    model: str,
    llm: dict[str, Any] | None = None,
    registry: dict[str, dict[str, Any]] | None = None,
    root: str | Path = ".",
) -> Any:
    """A live client, or a Batch API runner when `llm.batch` is set (same interface)."""
    cfg = {**LLM_DEFAULTS, **(llm or {})}
    client = make_client(model, cfg, registry, root)
    if not cfg["batch"]:
        return client
    from whowhen.models.batch import BatchRunner

    state = Path(root) / (cfg["cache_dir"] or ".cache/whowhen/responses") / "batches"
    return BatchRunner(client, state, poll_s=cfg["batch_poll_s"])
