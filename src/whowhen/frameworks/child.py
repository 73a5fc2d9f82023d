"""The parent's half of a framework run in a child process (`frameworks.children`).

The child is the framework in its own environment (`frameworks.envs`); it reaches its
models over HTTP through the gateway like any framework, and its tool calls come back
here on its stdout, one JSON line each, to run in the run's environment, so the
observations are recorded as every framework's are. The child's environment holds no key
of the host: only `PATH`, `HOME` and a temporary working directory.

What can go wrong, and how it ends the run:
- the framework raised: `ChildError`, carrying the class names of the exception's causes
  so an unreachable gateway still reads as an outage (`frameworks.base`);
- the child died without a word, sent a line that is not the protocol's, or ran past
  `timeout_s`: `InfraError` (a broken environment is not the agents' doing), with the
  tail of its stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from whowhen.errors import InfraError

MAX_LINE = 8 * 1024 * 1024
"""The longest protocol line accepted from the child."""
CHILDREN = Path(__file__).resolve().parent / "children"


class ChildError(RuntimeError):
    """The framework in the child raised; `kinds` are the class names of the exception
    and its causes, `body` an HTTP error's body where there was one."""

    def __init__(self, message: str, kinds: list[str], body: Any) -> None:
        super().__init__(message)
        self.kinds, self.body = tuple(kinds), body


def run_child(
    python: Path,
    script: str,
    task: dict[str, Any],
    call_tool: Callable[[str, dict[str, Any]], str],
    done: Callable[[], bool],
    timeout_s: float,
) -> None:
    """Run `children/<script>` with `python` on `task` to its end, serving its tool calls."""
    with tempfile.TemporaryDirectory(prefix="whowhen-child-") as work, \
            tempfile.TemporaryFile("w+") as err:  # fmt: skip
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work,
               "PYTHONUNBUFFERED": "1"}  # fmt: skip
        proc = subprocess.Popen(
            [str(python), "-s", "-E", str(CHILDREN / script)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=err, cwd=work, env=env, text=True,
        )  # fmt: skip
        timer = threading.Timer(timeout_s, proc.kill)
        timer.start()
        try:
            _serve(proc, task, call_tool, done, err, timeout_s, timer)
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def _serve(
    proc: subprocess.Popen,
    task: dict[str, Any],
    call_tool: Callable[[str, dict[str, Any]], str],
    done: Callable[[], bool],
    err: IO[str],
    timeout_s: float,
    timer: threading.Timer,
) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    _send(proc, task)
    while True:
        line = proc.stdout.readline(MAX_LINE + 1)
        if not line:
            why = f"ran past {timeout_s:g} s" if not timer.is_alive() else "died"
            raise InfraError(f"the framework process {why}: {_tail(err, proc)}")
        try:
            msg = json.loads(line) if len(line) <= MAX_LINE else None
        except ValueError:
            msg = None
        if not isinstance(msg, dict):
            raise InfraError(f"the framework process broke the protocol: {line[:200]!r}")
        if msg.get("end"):
            return
        if isinstance(msg.get("error"), dict):
            e = msg["error"]
            raise ChildError(str(e.get("message", "")), list(e.get("kinds") or []), e.get("body"))
        if "tool" in msg:
            args = msg.get("args") if isinstance(msg.get("args"), dict) else {}
            try:
                reply: dict[str, Any] = {"result": call_tool(str(msg["tool"]), args)}
            except Exception as exc:  # the framework sees a failed tool, as it would
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            reply["done"] = done()
            _send(proc, reply)


def _send(proc: subprocess.Popen, obj: dict[str, Any]) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps(obj) + "\n")
        proc.stdin.flush()
    except (BrokenPipeError, OSError) as exc:
        raise InfraError(f"the framework process closed its input: {exc}") from exc


def _tail(err: IO[str], proc: subprocess.Popen, lines: int = 5) -> str:
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    err.seek(0)
    text = err.read()[-4000:].strip().splitlines()[-lines:]
    return " | ".join(text) or f"exit code {proc.returncode}"
