"""The one adaptor between Snakemake `script:` jobs and the stage functions.

Why a single adaptor: every job gets the same logging (to its log file and to the
console) and the same error contract: a WhowhenError becomes one line on stderr
and exit status 1, never a traceback.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from whowhen import program_cache, sandbox
from whowhen.errors import WhowhenError
from whowhen.terminal import inert


def _named(obj: Any) -> dict[str, Any]:
    """Snakemake's Namedlist -> plain dict of its named entries."""
    return {k: v for k, v in obj.items()}


Stage = Callable[[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]], None]
"""A stage entry point: (params, inputs, outputs, wildcards) of one Snakemake job."""


class _InertFormatter(logging.Formatter):
    """Log lines with control characters escaped (`whowhen.terminal.inert`): an error
    line that quotes a trace's text must not drive the terminal that shows it."""

    def format(self, record: logging.LogRecord) -> str:
        return inert(super().format(record))


def run_stage(smk: Any, stage: Stage) -> None:
    """Entry point for `workflow/scripts/<rule>.py`: run `stage` on the job `smk`."""
    name = smk.rule
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if smk.log:
        handlers.append(logging.FileHandler(smk.log[0], mode="w"))
    logging.basicConfig(level=logging.INFO, handlers=handlers, force=True)
    for handler in handlers:  # a stage quotes data (ids, reasons) into a terminal or a log
        handler.setFormatter(_InertFormatter(f"[{name}] %(message)s"))
    for name in ("httpx", "httpx2"):  # the HTTP clients the SDKs use: not a line per call
        logging.getLogger(name).setLevel(logging.WARNING)
    config = getattr(smk, "config", {})
    box = config.get("sandbox", {})
    # `auto` is resolved by validate_config; unresolved, the cap is on (the safe side)
    sandbox.configure(bool(box.get("unsafe_local")), box.get("kernel_process_cap") != "never")
    program_cache.use(box.get("program_cache"))
    args = (_named(smk.params), _named(smk.input), _named(smk.output), _named(smk.wildcards))
    try:
        _profiled(stage, args, smk.log[0] if smk.log else name)
    except WhowhenError as exc:
        logging.getLogger("whowhen").error("error: %s", exc)
        sys.exit(1)


def _profiled(stage: Stage, args: tuple[dict[str, Any], ...], log_path: str) -> None:
    """Run the stage; with `WHOWHEN_PROFILE=DIR` set, under cProfile, its statistics saved
    as DIR/<log path>.prof (`python -m pstats` reads them): where a build's time goes."""
    out_dir = os.environ.get("WHOWHEN_PROFILE")
    if not out_dir:
        stage(*args)
        return
    import cProfile  # deferred: only a profiled run needs it

    profile = cProfile.Profile()
    try:
        profile.runcall(stage, *args)
    finally:
        target = Path(out_dir, log_path.replace("/", "__") + ".prof")
        target.parent.mkdir(parents=True, exist_ok=True)
        profile.dump_stats(target)
