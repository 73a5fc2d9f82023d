"""Model ids, per-server settings, and the dated price table.

A model id is `provider/name`: `openai/gpt-4.1-mini`, `gemini/gemini-2.5-flash`,
`openai-compatible/<name>` (vLLM, Ollama, llama.cpp server, the test server), which
needs a base URL, or `scripted/standin`, the in-process scripted stand-in of the offline
default (no network, not an LLM; see `scripted_provider` and `whowhen.standin`). What
differs between providers (key variable, whether a key or base URL is needed, known
names, cache revision) is asked of the provider registry (`provider.py`), so no
provider is special-cased here. Servers differ in how they take structured output, so
that is a per-model setting: `json_schema` (OpenAI, vLLM), `json_object_schema`
(llama.cpp's server, which answers the standard form with HTTP 500), `json_object`, or
`none`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from whowhen.errors import WhowhenError
from whowhen.io import read_yaml
from whowhen.models.prices import DEFAULT_PRICES
from whowhen.models.provider import ModelSpec, known, provider_kind
from whowhen.models.types import Usage

STRUCTURED = ("json_schema", "json_object_schema", "json_object", "none")


def parse_model(model: str, registry: dict[str, dict[str, Any]] | None = None) -> ModelSpec:
    """A model id, or the name of an entry in the config's `models:` registry."""
    registry = registry or {}
    settings = dict(registry.get(model, {}))
    model_id = settings.pop("id", model)
    provider, _, name = model_id.partition("/")
    if provider not in known() or not name:
        raise WhowhenError(
            f"model id {model_id!r} must look like provider/name with provider "
            f"one of {', '.join(known())}",
            field="model",
        )
    kind = provider_kind(provider)
    structured = settings.get("structured_output", "json_schema")
    spec = ModelSpec(
        provider,
        name,
        settings.get("base_url"),
        structured,
        settings.get("native_tools", True),
        settings.get("api_key_env"),
    )
    kind.check_name(spec)
    if kind.needs_base_url and not spec.base_url:
        raise WhowhenError(f"{model_id} needs a base_url", field=f"models.{model}.base_url")
    if structured not in STRUCTURED:
        raise WhowhenError(
            f"structured_output must be one of {', '.join(STRUCTURED)}",
            field=f"models.{model}.structured_output",
        )
    return spec


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cached_input: float
    family: str
    open_weight: bool


@dataclass(frozen=True)
class PriceTable:
    """USD per 1M tokens, as of `as_of`; models not listed cost 0 and are flagged unpriced."""

    as_of: date | None
    prices: dict[str, Price]

    def price(self, model_id: str) -> Price | None:
        return self.prices.get(model_id)

    def cost(self, model_id: str, usage: Usage) -> float:
        p = self.prices.get(model_id)
        if p is None:
            return 0.0
        fresh = max(0, usage.input_tokens - usage.cached_tokens)
        return (
            fresh * p.input + usage.cached_tokens * p.cached_input + usage.output_tokens * p.output
        ) / 1e6


def load_prices(path: str | Path | None = None) -> PriceTable:
    """The price table at `path`; the packaged one (`DEFAULT_PRICES`) when None."""
    path = DEFAULT_PRICES if path is None else Path(path)
    if not path.exists():
        raise WhowhenError("price table not found", path=str(path))
    data = read_yaml(path) or {}  # bounded: aliases, size
    prices = {}
    for model_id, entry in (data.get("models") or {}).items():
        try:
            prices[model_id] = Price(
                float(entry["input"]),
                float(entry["output"]),
                float(entry.get("cached_input", entry["input"])),
                str(entry.get("family", model_id.split("/")[-1])),
                bool(entry.get("open_weight", False)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise WhowhenError(
                f"bad price entry ({exc})", path=str(path), field=f"models.{model_id}"
            ) from None
    as_of = data.get("as_of")
    return PriceTable(as_of if isinstance(as_of, date) else None, prices)
