"""Protocol and model family of each attributor: what pooled breakdowns and the
cost-performance figure group attributors by.

Convention (`attributor_protocol`): an explicit `attributor_info` mapping wins; the
built-in baselines and shortcut predictors are protocol "baseline", family "none";
tracer-lite is "trained"/"tracer" and the replay oracle "oracle"/"replay"; otherwise a
name `<family>_<protocol>` (or `<protocol>_<family>`) with a known protocol is split at it
(`mock_all_at_once` -> all_at_once / mock); anything else is "unknown" / "unknown".
`attributor_info_from_config` builds the mapping from the config (protocol from the
attributor entry, family from the price table).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whowhen.attribution.llm import PROTOCOLS
from whowhen.attribution.offline import ATTRIBUTORS
from whowhen.defaults import filled
from whowhen.models.prices import prices_path as resolve_prices
from whowhen.models.spec import load_prices

KNOWN_PROTOCOLS = ("all_at_once", "step_by_step", "binary_search", "hybrid")
"""Besides `whowhen.attribution.llm.PROTOCOLS`."""
BASELINE_INFO = {"protocol": "baseline", "family": "none"}
BUILTIN_INFO = {
    "tracer_lite": {"protocol": "trained", "family": "tracer"},
    "counterfactual_oracle": {"protocol": "oracle", "family": "replay"},
}
"""The attributors `stage()` runs besides `ATTRIBUTORS`: a fitted model and the replay."""
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
        return dict(BASELINE_INFO)
    if name in BUILTIN_INFO:
        return dict(BUILTIN_INFO[name])
    for protocol in sorted({*KNOWN_PROTOCOLS, *PROTOCOLS}, key=len, reverse=True):
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
