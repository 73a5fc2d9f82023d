"""Protocol and model family of each attributor: what pooled breakdowns and the
cost-performance figure group attributors by.

Convention (`attributor_protocol`): an explicit `attributor_info` mapping wins; a
registered attributor has the protocol and family it registered with (`kinds.ATTRIBUTORS`:
the baselines, shortcut predictors and error-signal heuristic "baseline"/"none",
tracer-lite "trained"/"tracer", the replay oracle "oracle"/"replay"); otherwise a name
`<family>_<protocol>` (or `<protocol>_<family>`) with a registered LLM protocol is split at
it (`mock_all_at_once` -> all_at_once / mock); anything else is "unknown" / "unknown".
`attributor_info_from_config` builds the mapping from the config (protocol from the
attributor entry, family from the price table).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whowhen.attribution.kinds import ATTRIBUTORS, PROTOCOLS
from whowhen.defaults import filled
from whowhen.models.prices import prices_path as resolve_prices
from whowhen.models.spec import load_prices

UNKNOWN = "unknown"
ATTRIBUTOR_KEYS = ("protocol", "family")
"""Breakdown keys that pool attributors (what `attributor_protocol` returns)."""


def attributor_protocol(
    name: str, info: Mapping[str, Mapping[str, str]] | None = None
) -> dict[str, str]:
    """(protocol, family) of one attributor by the convention in the module docstring."""
    if info and name in info:
        entry = info[name]
        return {"protocol": entry.get("protocol", UNKNOWN), "family": entry.get("family", UNKNOWN)}
    if name in ATTRIBUTORS:
        kind = ATTRIBUTORS.get(name)
        return {"protocol": kind.protocol, "family": kind.family}
    for protocol in sorted(PROTOCOLS.names(), key=len, reverse=True):
        if name == protocol:
            return {"protocol": protocol, "family": UNKNOWN}
        if name.endswith("_" + protocol):
            return {"protocol": protocol, "family": name[: -len(protocol) - 1]}
        if name.startswith(protocol + "_"):
            return {"protocol": protocol, "family": name[len(protocol) + 1 :]}
    return {"protocol": UNKNOWN, "family": UNKNOWN}


def attributor_info_from_config(
    attribution: Mapping[str, Any],
    models: Mapping[str, Any] | None = None,
    prices_path: str | None = None,
) -> dict[str, dict[str, str]]:
    """The mapping for the configured LLM attributors: protocol from the entry, family and
    open_weight ("true"/"false", "unknown" when unpriced) from the price table (`family:`,
    `open_weight:`), else the model's name after the provider as the family; `prices_path`
    None (`llm.prices` unset): the packaged table. `attribution` is filled from the config
    schema's defaults."""
    table = load_prices(resolve_prices(prices_path))
    out: dict[str, dict[str, str]] = {}
    for item in filled("attribution", dict(attribution))["llm"]:
        model = item["model"]
        model_id = str((models or {}).get(model, {}).get("id", model))
        price = table.price(model_id) if table else None
        family = price.family if price else model_id.split("/")[-1]
        out[item["name"]] = {
            "protocol": item["protocol"],
            "family": family,
            "open_weight": "unknown" if price is None else str(price.open_weight).lower(),
        }
    return out
