"""Time spent in sandboxed code, which the throughput benchmarks report apart (a few code
pairs would otherwise hide the speed of everything else). Imported by the scripts in
this folder: `python perf/<script>.py` puts the folder on sys.path."""

from __future__ import annotations

import time
from typing import Any

import whowhen.sandbox.run


class SandboxClock:
    """Wraps the sandbox's watchdog (every sandboxed program passes through it) once
    installed; `seconds` sums its wall time."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._run = whowhen.sandbox.run.watch

    def _timed(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self._run(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start

    def install(self) -> SandboxClock:
        whowhen.sandbox.run.watch = self._timed
        return self


CLOCK = SandboxClock()
