"""Model layer: one chat interface, OpenAI / OpenAI-compatible / Gemini providers behind it
(and the in-process scripted provider, whose responders — `scripted/standin` — are
registered by `whowhen.standin`), a content-addressed response cache, priced usage,
adaptive concurrency and retries.

Providers register themselves in `provider.py` when their module is imported; the
provider registry imports the built-in ones on its first lookup (`PROVIDERS.builtins`).
Their SDKs are imported only when a provider is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whowhen.defaults import filled, section_defaults
from whowhen.models.batch import BatchRunner
from whowhen.models.cache import ResponseCache
from whowhen.models.client import ClientStats, ModelClient
from whowhen.models.errors import ProviderError
from whowhen.models.prices import DEFAULT_PRICES, prices_path
from whowhen.models.provider import Provider, ProviderKind, known, provider_kind, register
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
    "DEFAULT_PRICES",
    "BatchRunner",
    "ChatRequest",
    "ChatResult",
    "ClientStats",
    "ImagePart",
    "Message",
    "ModelClient",
    "ModelSpec",
    "PriceTable",
    "Provider",
    "ProviderError",
    "ProviderKind",
    "Reply",
    "ResponseCache",
    "Settings",
    "TextPart",
    "Usage",
    "known",
    "load_prices",
    "make_client",
    "make_runner",
    "parse_model",
    "prices_path",
    "provider_kind",
    "register",
]


def make_client(
    model: str,
    llm: dict[str, Any] | None = None,
    registry: dict[str, dict[str, Any]] | None = None,
    root: str | Path = ".",
) -> ModelClient:
    """A client for `model` (an id or a `models:` registry name) with the `llm:` settings;
    those `llm` leaves out come from the config schema's defaults."""
    cfg = filled("llm", llm)
    spec = parse_model(model, registry)
    cache = ResponseCache(Path(root) / cfg["cache_dir"]) if cfg["cache_dir"] else None
    return ModelClient(
        spec,
        load_prices(prices_path(cfg["prices"], root)),
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
) -> ModelClient | BatchRunner:
    """A live client, or a Batch API runner when `llm.batch` is set (same interface)."""
    cfg = filled("llm", llm)
    client = make_client(model, cfg, registry, root)
    if not cfg["batch"]:
        return client
    state = Path(root) / (cfg["cache_dir"] or section_defaults("llm")["cache_dir"]) / "batches"
    return BatchRunner(client, state, poll_s=cfg["batch_poll_s"])
