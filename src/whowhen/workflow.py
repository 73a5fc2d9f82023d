"""The one adaptor between Snakemake `script:` jobs and the stage functions.

Why a single adaptor: every job gets the same logging (to its log file and to the
console) and the same error contract: a WhowhenError becomes one line on stderr
and exit status 1, never a traceback.
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import Any

from whowhen.errors import WhowhenError

STAGES = {
    "rollouts": "whowhen.rollouts:stage",
    "replay": "whowhen.replay:stage",
    "taxonomy": "whowhen.taxonomy.stage:stage",
    "injection": "whowhen.injection.stage:stage",
    "continuation": "whowhen.continuation:stage",
    "dataset": "whowhen.continuation:dataset_stage",
    "imports": "whowhen.datasets:stage",
    "imports_manifest": "whowhen.datasets:manifest_stage",
    "attribution": "whowhen.attribution:stage",
    "tracer_fit": "whowhen.attribution.tracer:fit_stage",
    "feedback": "whowhen.feedback.stage:stage",
    "analysis": "whowhen.analysis.stage:stage",
    "viewer": "whowhen.analysis.stage:viewer_stage",
    "notebook": "whowhen.analysis.stage:notebook_stage",
}


def _named(obj: Any) -> dict[str, Any]:
    """Snakemake's Namedlist -> plain dict of its named entries."""
    return {k: v for k, v in obj.items()}


def run_stage(smk: Any, name: str) -> None:
    """Entry point for `workflow/scripts/<stage>.py`."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if smk.log:
        handlers.append(logging.FileHandler(smk.log[0], mode="w"))
    logging.basicConfig(
        level=logging.INFO, handlers=handlers, force=True, format=f"[{name}] %(message)s"
    )
    module, func = STAGES[name].split(":")
    stage = getattr(importlib.import_module(module), func)
    try:
        stage(_named(smk.params), _named(smk.input), _named(smk.output), _named(smk.wildcards))
    except WhowhenError as exc:
        logging.getLogger("whowhen").error("error: %s", exc)
        sys.exit(1)
