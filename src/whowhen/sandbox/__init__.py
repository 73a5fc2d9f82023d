"""Agent-written code runs here: isolated by bubblewrap, limited by the kernel, judged by
the parent (see `bwrap`, `supervise`, `watch`, `limits`)."""

from whowhen.sandbox.bwrap import SandboxUnavailable, configure
from whowhen.sandbox.limits import STATUSES, Limits, SandboxResult
from whowhen.sandbox.run import ensure_available, run_program, run_python

__all__ = [
    "STATUSES",
    "Limits",
    "SandboxResult",
    "SandboxUnavailable",
    "configure",
    "ensure_available",
    "run_program",
    "run_python",
]
