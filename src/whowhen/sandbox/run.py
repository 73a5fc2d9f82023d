"""Run a Python program in the sandbox: files in, a status the program cannot fake out.

Inside the sandbox one interpreter starts, `python -I -S supervise.py`, which forks the
program (trusted parent, limited child: see `supervise`). Only the standard library is
importable.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from whowhen.errors import InfraError
from whowhen.sandbox import cgroup
from whowhen.sandbox.bwrap import (
    bwrap_command,
    interpreter,
    kernel_cap,
    local_env,
    unavailable,
    unsafe_local,
)
from whowhen.sandbox.limits import SHM_ROOM, Limits, SandboxResult, decide_status, returncode
from whowhen.sandbox.watch import watch

_SUPERVISOR = Path(__file__).with_name("supervise.py")


@dataclass(frozen=True)
class Launch:
    """How to start one sandboxed program, the read ends of its report pipe and of
    bwrap's info pipe (None in the unsafe mode, or when not asked for), and the pids and
    memory cgroups that cap its process count and its memory (None where the host has
    none to give)."""

    argv: list[str]
    popen: dict
    report_r: int
    info_r: int | None
    group: Path | None = None
    memory: Path | None = None


def launch(
    tmp: str,
    files: dict[str, str],
    entry: list[str],
    limits: Limits,
    extra_ro: tuple[str, ...] = (),
    info: bool = True,
    probe: bool = False,
    cap: bool = True,
) -> Launch:
    """Write the supervisor and `files` into `tmp` and say how to run `entry[0]` as
    `__main__` under the supervisor: inside bwrap, or (the unsafe mode) as a plain local
    process. An `entry` item that names one of `files` becomes that file's path where
    the program runs. `probe` is the availability check's own launch. With `cap`, the
    process count and the memory are capped by a pids and a memory cgroup where the host
    allows them (the caller removes `Launch.group` and `Launch.memory` when the program
    has ended)."""
    unsafe = unsafe_local()
    if not unsafe and not probe:
        ensure_available()
    box, work = Path(tmp, "box"), Path(tmp, "work")
    box.mkdir()
    work.mkdir()
    for name, text in {"supervise.py": _SUPERVISOR.read_text(), **files}.items():
        (box / name).write_text(text, encoding="utf-8")
    inside = str(box) if unsafe else "/sandbox"
    report_r, report_w = os.pipe()
    py = interpreter()
    rlimits = [limits.cpu_s, limits.memory_mb * 2**20, limits.file_mb * 2**20]
    program = [py, "-I", "-S", f"{inside}/supervise.py", str(report_w)]
    program += [str(v) for v in rlimits] + ["--"]
    program += [f"{inside}/{arg}" if arg in files else arg for arg in entry]
    if unsafe:
        env = local_env(str(work))
        return Launch(
            program, {"pass_fds": (report_w,), "cwd": str(work), "env": env}, report_r, None
        )
    info_r, info_w = os.pipe() if info else (None, None)
    shm_mb = SHM_ROOM * limits.memory_mb
    argv = bwrap_command(str(box), limits.disk_mb, info_w, program, extra_ro, shm_mb)
    fds = (report_w,) if info_w is None else (report_w, info_w)
    capped = cap and kernel_cap()
    # bwrap outside and its init inside the namespace, the supervisor, the program
    group = cgroup.make_group(limits.processes + 4) if capped else None
    memory = cgroup.make_memory_group(limits.cgroup_mb * 2**20) if capped else None
    popen = {"pass_fds": fds, "env": {"PATH": "/usr/bin:/bin"}}
    return Launch(cgroup.enter(argv, group, memory), popen, report_r, info_r, group, memory)


def _clip(data: bytes, cap: int, truncated: bool) -> str:
    text = data[:cap].decode("utf-8", errors="replace")
    return text + ("\n[output truncated]" if truncated and len(data) > cap else "")


def run_program(
    files: dict[str, str],
    entry: list[str],
    limits: Limits,
    stdin: bytes = b"",
    extra_ro: tuple[str, ...] = (),
    probe: bool = False,
) -> SandboxResult:
    """Run `entry[0]` (one of `files`) as `__main__` with `entry[1:]` as its arguments;
    an argument that names one of `files` becomes that file's path inside the sandbox.
    Raises `InfraError` when the sandbox itself did not start (no program ran: there is
    no outcome of the program's to report), except for the availability check."""
    with tempfile.TemporaryDirectory(prefix="whowhen-sandbox-") as tmp:
        how = launch(tmp, files, entry, limits, extra_ro, probe=probe)
        stdin_fd = os.memfd_create("stdin")
        os.write(stdin_fd, stdin)
        os.lseek(stdin_fd, 0, os.SEEK_SET)
        try:
            obs = watch(
                how.argv, limits, stdin_fd, how.report_r, how.info_r, how.group, how.memory,
                **how.popen,
            )  # fmt: skip
        finally:
            os.close(stdin_fd)
            cgroup.remove_group(how.group)
            cgroup.remove_group(how.memory)
    status = decide_status(obs, limits)
    if status == "sandbox_error" and not probe:
        why = next((ln for ln in obs.stderr.decode(errors="replace").splitlines() if ln), "")
        raise InfraError(f"the sandbox did not start ({why[:200] or 'no report'})")
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


_probe: dict[str, str | None] = {}
"""`error`: None once the sandbox has started in this process, else why it could not."""


def ensure_available() -> None:
    """Start the sandbox once per process on a trivial program; if it cannot start,
    raise the one-line SandboxUnavailable (with how to fix it) before any agent code."""
    if "error" not in _probe:
        try:
            result = run_program({"main.py": "print('ok')"}, ["main.py"], Limits(), probe=True)
            started = result.ok and result.stdout.strip() == "ok"
            _probe["error"] = None if started else (result.stderr or f"status {result.status}")
        except OSError as exc:  # bwrap missing or not executable
            _probe["error"] = str(exc)
    if _probe["error"] is not None:
        raise unavailable(_probe["error"])
