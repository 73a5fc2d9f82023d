"""A long-lived sandboxed process that answers one JSON line per request.

For tools that would be too slow to start per call (DuckDB for the agent's SQL): the
worker runs inside the same bubblewrap sandbox and under the same supervisor rlimits as
agent code, and the parent bounds every request with a watchdog. A request that runs
past its time limit kills the whole sandbox; the next request starts a fresh one.

A request without a reply says why (`WorkerFailed.kind`): it timed out, the worker died
(at its memory limit, when the supervisor's report shows its memory filled), or it never
started (it could not be launched, or it ended before its first reply). The caller
decides which of these its user caused: a query past its time limit is the agent's, a
worker that does not start is the infrastructure's.
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
from typing import BinaryIO

from whowhen.errors import WhowhenError
from whowhen.sandbox.limits import Limits, Observation, Report, decide_status
from whowhen.sandbox.run import launch
from whowhen.sandbox.supervise import STARTED

_MAX_REPLY = 1 << 20
_STDERR_TAIL = 4096
_REPORT_WAIT_S = 10.0
"""How long a worker that died may take to be reported on by its supervisor."""

KINDS = ("timeout", "died", "memory_limit", "start", "protocol")


class WorkerFailed(Exception):
    """No reply to a request. `kind`: "timeout" (killed at the request's time limit),
    "died" (it ended), "memory_limit" (it ended with its memory filled), "start" (it could
    not be launched or ended before its first reply), "protocol" (its reply was not one
    JSON object within the size cap). The message is one line: the kind, the supervisor's
    account and the last line the worker wrote to stderr."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind, self.detail = kind, detail
        super().__init__(f"{kind}: {detail}" if detail else kind)


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
        self._report_r: int | None = None
        self._stderr: BinaryIO | None = None
        self._answered = False
        self._buffer = b""
        self.generation = 0
        """Counts the worker processes started: state sent to an earlier one is gone."""

    def ask(self, request: dict, timeout_s: float) -> dict:
        """The worker's reply; raises WorkerFailed (and kills the worker) when there is
        none within `timeout_s`."""
        with self._lock:
            self._ensure_started()
            assert self._proc is not None and self._proc.stdin is not None
            try:
                self._proc.stdin.write((json.dumps(request) + "\n").encode())
                self._proc.stdin.flush()
            except OSError:
                raise self._failure("died") from None
            reply, why = self._read_line(time.monotonic() + timeout_s)
            if reply is None:
                raise self._failure(why)
            self._answered = True
            return reply

    def started(self) -> int:
        """Start the worker if it is not running; its generation."""
        with self._lock:
            self._ensure_started()
            return self.generation

    def _ensure_started(self) -> None:
        if self._proc is None or self._proc.poll() is not None:
            self.close()
            try:
                self._start()
            except (OSError, WhowhenError) as exc:
                self.close()
                raise WorkerFailed("start", _one_line(str(exc))) from None

    def _read_line(self, deadline: float) -> tuple[dict | None, str]:
        """The next reply, or None and why there is none: "timeout", "died", "protocol"."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if len(self._buffer) > _MAX_REPLY:
                return None, "protocol"
            if left <= 0:
                return None, "timeout"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return None, "died"
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            value = json.loads(line)
        except ValueError:
            return None, "protocol"
        return (value, "") if isinstance(value, dict) else (None, "protocol")

    def _failure(self, why: str) -> WorkerFailed:
        """Kill the worker, read how it ended, and say so in one line."""
        started, report = True, None
        if why == "died":
            started, report = self._report(time.monotonic() + _REPORT_WAIT_S)
        stderr = self._stderr_tail()
        self.close()
        kind = why
        if report is not None:
            obs = Observation(None, False, report, b"", b"", False, 0.0)
            if decide_status(obs, self.limits) == "memory_limit":
                kind = "memory_limit"
        if kind in ("died", "protocol") and not (self._answered and started):
            kind = "start"
        parts = [_account(report)] if report is not None else []
        if why == "timeout":
            parts.append("no reply in time")
        if stderr:
            parts.append(f"stderr: {stderr}")
        return WorkerFailed(kind, "; ".join(parts))

    def _report(self, deadline: float) -> tuple[bool, Report | None]:
        """Whether the supervisor said it started, and its account of the worker (exit
        code, signal, CPU, peak memory) written when the worker ended (None if it does not
        come by `deadline`)."""
        if self._report_r is None:
            return False, None
        data = b""
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self._report_r], [], [], left)
            if not ready:
                break
            try:
                chunk = os.read(self._report_r, 4096)
            except BlockingIOError:
                continue
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        started = data.startswith(STARTED)
        try:
            line = data.removeprefix(STARTED).decode("utf-8", "replace").splitlines()[0]
            rep = json.loads(line)
            return started, Report(rep["exit_code"], rep["signal"], rep["cpu_s"], rep["max_rss_mb"])
        except (ValueError, IndexError, KeyError, TypeError):
            return started, None

    def _stderr_tail(self) -> str:
        """The last line the worker wrote to stderr (a traceback ends with the error)."""
        if self._tmp is None:
            return ""
        path = Path(self._tmp.name, "stderr")
        try:
            with path.open("rb") as fh:
                fh.seek(max(0, path.stat().st_size - _STDERR_TAIL))
                tail = fh.read().decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [line.strip() for line in tail.splitlines() if line.strip()]
        return _one_line(lines[-1]) if lines else ""

    def _start(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="whowhen-worker-")
        files = {"worker.py": Path(self.script).read_text(encoding="utf-8")}
        how = launch(self._tmp.name, files, ["worker.py", *self.args], self.limits,
                     self.extra_ro, info=False, cap=False)  # fmt: skip
        self._report_r = how.report_r
        os.set_blocking(how.report_r, False)
        # stderr goes to a file outside the sandbox, bounded by the worker's file-size limit
        self._stderr = open(Path(self._tmp.name, "stderr"), "wb")  # noqa: SIM115
        # killing bwrap kills the sandbox: --die-with-parent ends its PID namespace
        try:
            self._proc = subprocess.Popen(
                how.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._stderr, start_new_session=True, **how.popen,
            )  # fmt: skip
        finally:
            for fd in how.popen["pass_fds"]:
                os.close(fd)
        self._buffer = b""
        self._answered = False
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
                    with contextlib.suppress(OSError):
                        pipe.close()
        if self._report_r is not None:
            os.close(self._report_r)
            self._report_r = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def _account(report: Report) -> str:
    how = f"signal {report.signal}" if report.signal else f"exit code {report.exit_code}"
    return f"ended with {how}, peak memory {report.max_rss_mb:.0f} MB"


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "…"
