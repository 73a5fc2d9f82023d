"""Where the price table comes from: the package ships its own (`whowhen/data/prices.yaml`),
so `whowhen attribute` and `whowhen gateway` price calls from any working directory; a
path in the config (`llm.prices`) or `--prices` replaces it."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

DEFAULT_PRICES = Path(str(resources.files("whowhen").joinpath("data", "prices.yaml")))
"""The packaged price table (USD per 1M tokens, family, open weight)."""

LEGACY_PRICES = "config/prices.yaml"
"""The table's former place in the repository, which configs written before the move
still name (and a pipeline run started before it carries in its parameters)."""


def prices_path(path: str | Path | None = None, root: str | Path = ".") -> Path:
    """The price table to read: `path` (relative to `root`), or the packaged one when
    `path` is None or is the former `config/prices.yaml` and that file is gone."""
    if path is None or (str(path) == LEGACY_PRICES and not (Path(root) / path).exists()):
        return DEFAULT_PRICES
    return Path(root) / path
