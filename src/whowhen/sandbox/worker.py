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

from whowhen.sandbox.bwrap import bwrap_command, interpreter, local_env, unsafe_local
from whowhen.sandbox.limits import Limits
from whowhen.sandbox.run import _support_files, ensure_available

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
        unsafe = unsafe_local()
        if not unsafe:
            ensure_available()
        self._tmp = tempfile.TemporaryDirectory(prefix="whowhen-worker-")
        box = Path(self._tmp.name, "box")
        box.mkdir()
        (box / "supervise.py").write_text(_support_files()["supervise.py"])
        (box / "worker.py").write_text(Path(self.script).read_text(encoding="utf-8"))
        inside = str(box) if unsafe else "/sandbox"
        report_r, report_w = os.pipe()
        os.close(report_r)  # the worker's exit report is not needed: a reply is
        py, lim = interpreter(), self.limits
        program = [py, "-I", "-S", f"{inside}/supervise.py", str(report_w), str(lim.cpu_s)]
        program += [str(lim.memory_mb * 2**20), str(lim.file_mb * 2**20), "--"]
        program += [f"{inside}/worker.py", *self.args]
        popen: dict = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}
        popen |= {"stderr": subprocess.DEVNULL, "start_new_session": True}
        if unsafe:
            work = Path(self._tmp.name, "work")
            work.mkdir()
            self._proc = subprocess.Popen(
                program, pass_fds=(report_w,), cwd=work, env=local_env(str(work)), **popen
            )
        else:  # killing bwrap kills the sandbox: --die-with-parent ends its PID namespace
            argv = bwrap_command(str(box), lim.disk_mb, None, program, self.extra_ro)
            self._proc = subprocess.Popen(argv, pass_fds=(report_w,), env={}, **popen)
        os.close(report_w)
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
