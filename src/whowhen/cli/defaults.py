"""Defaults of the model options `--cache-dir` and `--prices` that work from any working
directory: inside the project's repository the response cache is the pipeline's own
(`.cache/whowhen/responses`, shared with `snakemake`); elsewhere it is the user's cache
directory, so a one-off `whowhen attribute` leaves no `.cache/` folder behind. The price
table is the packaged one (`whowhen.models.prices`) wherever it runs."""

from __future__ import annotations

import os
from pathlib import Path

from whowhen.defaults import section_defaults

PROJECT_CACHE: str = section_defaults("llm")["cache_dir"]
"""The pipeline's response cache (the config schema's default `llm.cache_dir`)."""


def in_project_repo(cwd: Path | None = None) -> bool:
    """Whether `cwd` is this project's repository: its Snakefile and config/config.yaml."""
    cwd = Path.cwd() if cwd is None else cwd
    snakefile = cwd / "Snakefile"
    return (
        snakefile.is_file()
        and (cwd / "config" / "config.yaml").is_file()
        and "whowhen" in snakefile.read_text(errors="replace")
    )


def user_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/whowhen/responses`, `~/.cache/whowhen/responses` without it (or
    with a relative one, which the XDG spec says to ignore)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "whowhen" / "responses"


def default_cache_dir(cwd: Path | None = None) -> str:
    """The response cache of a command run from `cwd` (default: the working directory)."""
    return PROJECT_CACHE if in_project_repo(cwd) else str(user_cache_dir())


def cache_dir_help() -> str:
    """`--cache-dir` help naming the default that applies here, and the other one."""
    if in_project_repo():
        return (
            f"response cache, so reruns never pay twice (default: {PROJECT_CACHE}, as run "
            "here in the project's repository; elsewhere $XDG_CACHE_HOME/whowhen/responses "
            "or ~/.cache/whowhen/responses)"
        )
    here = str(user_cache_dir()).replace("%", "%%")  # argparse %-formats help
    return (
        f"response cache, so reruns never pay twice (default here: {here}, the user cache; "
        f"{PROJECT_CACHE} when run in the project's repository)"
    )


PRICES_HELP = (
    "price table, USD per 1M tokens (default: the package's own, whowhen/data/prices.yaml)"
)
