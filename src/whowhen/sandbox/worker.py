"""A long-lived sandboxed process that answers one JSON line per request.

For tools that would be too slow to start per call (DuckDB for the agent's SQL): the
worker runs inside the same bubblewrap sandbox and under the same supervisor rlimits as
agent code, and the parent bounds every request with a watchdog. A request that runs
past its time limit kills the whole sandbox; the next request starts a fresh one.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from whowhen.sandbox.limits import Limits
from whowhen.sandbox.run import launch

_MAX_REPLY = 1 << 20


class Worker:
    """`script` with `args`, as `__main__` under the supervisor in the sandbox, started
    on first use."""

    def __init__(
        self, script: str, args: list[str], limits: Limits, extra_ro: tuple[str, ...] = ()
    ) -> None:
        self.script, self.args, self.limits, self.extra_ro = script, args, limits, extra_ro
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._buffer = b""
        self.generation = 0
        """Counts the worker processes started: state sent to an earlier one is gone."""

    def ask(self, request: dict, timeout_s: float) -> dict | None:
        """The worker's reply, or None if it did not answer within `timeout_s` (it is
        killed) or died (e.g. at its memory limit)."""
        with self._lock:
            self._ensure_started()
            assert self._proc is not None and self._proc.stdin is not None
            try:
                self._proc.stdin.write((json.dumps(request) + "\n").encode())
                self._proc.stdin.flush()
            except OSError:
                self.close()
                return None
            reply = self._read_line(time.monotonic() + timeout_s)
            if reply is None:
                self.close()
            return reply

    def started(self) -> int:
        """Start the worker if it is not running; its generation."""
        with self._lock:
            self._ensure_started()
            return self.generation

    def _ensure_started(self) -> None:
        if self._proc is None or self._proc.poll() is not None:
            self.close()
            self._start()

    def _read_line(self, deadline: float) -> dict | None:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or len(self._buffer) > _MAX_REPLY:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return None
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            value = json.loads(line)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def _start(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="whowhen-worker-")
        files = {"worker.py": Path(self.script).read_text(encoding="utf-8")}
        how = launch(self._tmp.name, files, ["worker.py", *self.args], self.limits,
                     self.extra_ro, info=False, cap=False)  # fmt: skip
        os.close(how.report_r)  # the worker's exit report is not needed: a reply is
        # killing bwrap kills the sandbox: --die-with-parent ends its PID namespace
        self._proc = subprocess.Popen(
            how.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, start_new_session=True, **how.popen,
        )  # fmt: skip
        for fd in how.popen["pass_fds"]:
            os.close(fd)
        self._buffer = b""
        self.generation += 1

    def close(self) -> None:
        """Kill the sandbox (all of it) and forget it; the next request starts anew."""
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    pipe.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
