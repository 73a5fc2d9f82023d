"""Model clients pointed at an in-process test server, as the stages build them."""

from __future__ import annotations

from pathlib import Path

from whowhen.models import (
    DEFAULT_PRICES,
    ModelClient,
    ResponseCache,
    load_prices,
    make_client,
    parse_model,
)
from whowhen.standin.server import TestServer

PRICES = load_prices(DEFAULT_PRICES)


def cached_client(server: TestServer, cache: Path) -> ModelClient:
    """A client of the server's mock model with a response cache and no retries."""
    spec = parse_model(
        "openai-compatible/mock", {"openai-compatible/mock": {"base_url": server.url}}
    )
    return ModelClient(spec, PRICES, ResponseCache(cache), progress=False, max_retries=0)


def mock_client(srv: TestServer, native: bool = True, cache: Path | None = None) -> ModelClient:
    """A client of the server's mock model as the config names it (`native_tools`)."""
    return make_client(
        "m",
        {"cache_dir": str(cache) if cache else None, "progress": False},
        {"m": {"id": "openai-compatible/mock", "base_url": srv.url, "native_tools": native}},
    )
