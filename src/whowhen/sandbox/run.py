"""Run a Python program in the sandbox: files in, a status the program cannot fake out.

Inside the sandbox one interpreter starts, `python -I -S supervise.py`, which forks the
program (trusted parent, limited child: see `supervise`). Only the standard library is
importable.
"""

from __future__ import annotations

import os
import tempfile
from functools import lru_cache
from pathlib import Path

from whowhen.sandbox.bwrap import bwrap_command, interpreter, local_env, unavailable, unsafe_local
from whowhen.sandbox.limits import Limits, SandboxResult, decide_status, returncode
from whowhen.sandbox.watch import watch

_HERE = Path(__file__).parent


@lru_cache(maxsize=1)
def _support_files() -> dict[str, str]:
    return {"supervise.py": (_HERE / "supervise.py").read_text()}


def _clip(data: bytes, cap: int, truncated: bool) -> str:
    text = data[:cap].decode("utf-8", errors="replace")
    return text + ("\n[output truncated]" if truncated and len(data) > cap else "")


def run_program(
    files: dict[str, str],
    entry: list[str],
    limits: Limits,
    stdin: bytes = b"",
    extra_ro: tuple[str, ...] = (),
) -> SandboxResult:
    """Run `entry[0]` (one of `files`) as `__main__` with `entry[1:]` as its arguments;
    an argument that names one of `files` becomes that file's path inside the sandbox."""
    unsafe = unsafe_local()
    if not unsafe:
        ensure_available()
    with tempfile.TemporaryDirectory(prefix="whowhen-sandbox-") as tmp:
        box, work = Path(tmp, "box"), Path(tmp, "work")
        box.mkdir()
        work.mkdir()
        for name, text in {**_support_files(), **files}.items():
            (box / name).write_text(text, encoding="utf-8")
        inside = str(box) if unsafe else "/sandbox"
        report_r, report_w = os.pipe()
        py = interpreter()
        rlimits = [limits.cpu_s, limits.memory_mb * 2**20, limits.file_mb * 2**20]
        program = [py, "-I", "-S", f"{inside}/supervise.py", str(report_w)]
        program += [str(v) for v in rlimits] + ["--"]
        program += [f"{inside}/{arg}" if arg in files else arg for arg in entry]
        stdin_fd = os.memfd_create("stdin")
        os.write(stdin_fd, stdin)
        os.lseek(stdin_fd, 0, os.SEEK_SET)
        try:
            if unsafe:
                env = local_env(str(work))
                obs = watch(
                    program, limits, stdin_fd, report_r, None,
                    pass_fds=(report_w,), cwd=str(work), env=env,
                )  # fmt: skip
            else:
                info_r, info_w = os.pipe()
                argv = bwrap_command(str(box), limits.disk_mb, info_w, program, extra_ro)
                obs = watch(
                    argv, limits, stdin_fd, report_r, info_r,
                    pass_fds=(report_w, info_w), env={"PATH": "/usr/bin:/bin"},
                )  # fmt: skip
        finally:
            os.close(stdin_fd)
    status = decide_status(obs, limits)
    return SandboxResult(
        status,
        returncode(obs.report),
        _clip(obs.stdout, limits.output_bytes, obs.truncated),
        _clip(obs.stderr, limits.output_bytes, obs.truncated),
        obs.wall_s,
    )


def run_python(code: str, limits: Limits | None = None, stdin: str = "") -> SandboxResult:
    """Run agent-written `code`; never raises for anything the code does."""
    return run_program({"main.py": code}, ["main.py"], limits or Limits(), stdin.encode())


_probe: dict[str, str] = {}


def ensure_available() -> None:
    """Start the sandbox once per process on a trivial program; if it cannot start,
    raise the one-line SandboxUnavailable (with how to fix it) before any agent code."""
    if _probe.get("ok"):
        return
    if "error" not in _probe:
        _probe["ok"] = "probing"
        try:
            result = run_program({"main.py": "print('ok')"}, ["main.py"], Limits())
        except OSError as exc:  # bwrap missing or not executable
            _probe["error"] = str(exc)
            raise unavailable(str(exc)) from None
        finally:
            _probe.pop("ok")
        if result.ok and result.stdout.strip() == "ok":
            _probe["ok"] = "yes"
            return
        _probe["error"] = result.stderr or f"status {result.status}"
    raise unavailable(_probe["error"])
