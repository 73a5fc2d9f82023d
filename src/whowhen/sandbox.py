"""Run agent-written Python in a contained subprocess.

Limits: CPU seconds and address space (rlimits, which hold for root too), wall time
(the parent kills the process group), output size (read at most N bytes), a fresh
temp directory as the working directory, and an environment with nothing inherited
(no API keys). An audit hook installed before the agent's code runs refuses writes
outside the temp directory and every way of starting a process (fork, exec, spawn,
subprocess, os.system): root ignores RLIMIT_NPROC, so a process storm is stopped at
the first spawn instead. The result says which limit was hit.

This is containment for benchmark code, not a security boundary against a determined
attacker (ctypes can reach past an audit hook); run untrusted code in a container.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

STATUSES = ("ok", "error", "timeout", "cpu_limit", "memory_limit", "output_limit", "blocked")

_PRELUDE = textwrap.dedent("""
    import os as _os, sys as _sys
    _ROOT = _os.path.realpath(_os.getcwd())
    _SPAWN = {"os.fork", "os.forkpty", "os.exec", "os.posix_spawn", "os.spawn", "os.system",
              "subprocess.Popen", "pty.spawn"}
    _WRITE_EVENTS = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.truncate",
                     "os.chmod", "os.chown", "os.link", "os.symlink", "shutil.rmtree"}

    def _inside(path):
        try:
            real = _os.path.realpath(_os.fsdecode(path))
        except (TypeError, ValueError):
            return False
        return real == _ROOT or real.startswith(_ROOT + _os.sep) or real == "/dev/null"

    def _hook(event, args):
        if event in _SPAWN:
            raise PermissionError(f"sandbox: {event} is not allowed")
        if event == "open" and len(args) > 1:
            path, mode = args[0], args[1]
            writing = isinstance(mode, str) and any(c in mode for c in "wax+")
            if not writing and isinstance(args[-1], int):
                writing = bool(args[-1] & (_os.O_WRONLY | _os.O_RDWR | _os.O_CREAT))
            if writing and isinstance(path, (str, bytes, _os.PathLike)) and not _inside(path):
                raise PermissionError(f"sandbox: writing {path!r} outside the sandbox")
        elif event in _WRITE_EVENTS and args and not _inside(args[0]):
            raise PermissionError(f"sandbox: {event} outside the sandbox")

    _sys.addaudithook(_hook)
    del _hook
""")


@dataclass(frozen=True)
class Limits:
    wall_s: float = 10.0
    cpu_s: int = 5
    memory_mb: int = 512
    output_bytes: int = 64_000


@dataclass(frozen=True)
class SandboxResult:
    status: str  # one of STATUSES
    returncode: int | None
    stdout: str
    stderr: str
    wall_s: float

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _limit_child(limits: Limits) -> None:
    """Runs in the child before exec: its own process group and hard resource limits."""
    os.setsid()
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
    memory = limits.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.output_bytes * 16,) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_python(code: str, limits: Limits | None = None, stdin: str = "") -> SandboxResult:
    """Run `code` with the sandbox prelude; never raises for anything the code does."""
    limits = limits or Limits()
    with tempfile.TemporaryDirectory(prefix="whowhen-sandbox-") as tmp:
        script = Path(tmp) / "main.py"
        script.write_text(_PRELUDE + "\n" + code)
        env = {
            "PATH": "/usr/bin:/bin",
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": tmp,
            "TMPDIR": tmp,
            "LANG": "C.UTF-8",
        }
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(script)],
            cwd=tmp,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=lambda: _limit_child(limits),
        )
        timed_out = False
        try:
            out, err = proc.communicate(stdin.encode(), timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        wall = time.monotonic() - start
    status = _status(proc.returncode, out, err, limits, timed_out)
    return SandboxResult(status, proc.returncode, _clip(out, limits), _clip(err, limits), wall)


def _clip(data: bytes, limits: Limits) -> str:
    text = data[: limits.output_bytes].decode("utf-8", errors="replace")
    return text + ("\n[output truncated]" if len(data) > limits.output_bytes else "")


def _status(code: int | None, out: bytes, err: bytes, limits: Limits, timed_out: bool) -> str:
    if timed_out:
        return "timeout"
    if code in (-signal.SIGXCPU, -signal.SIGKILL) and b"MemoryError" not in err:
        return "cpu_limit"
    if b"MemoryError" in err:
        return "memory_limit"
    if b"PermissionError: sandbox:" in err:
        return "blocked"
    if len(out) > limits.output_bytes or code == -signal.SIGXFSZ:
        return "output_limit"
    return "ok" if code == 0 else "error"
