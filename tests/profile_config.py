"""A profile merged into the default config as Snakemake merges `--configfile`s: dicts key
by key, lists replaced."""

from __future__ import annotations

from pathlib import Path

import yaml
from snakemake.utils import update_config

from .conftest import ROOT


def merged_profile(profile: Path) -> dict:
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    update_config(config, yaml.safe_load(profile.read_text()))
    return config
