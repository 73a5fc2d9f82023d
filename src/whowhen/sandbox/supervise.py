"""The trusted supervisor that runs first inside the sandbox (standard library only).

Usage: `python -I -S supervise.py REPORT_FD CPU_S MEMORY_BYTES FILE_BYTES -- ENTRY ARGS...`

It makes itself undumpable (the program, with every capability dropped, cannot ptrace
it), forks, and in the child closes REPORT_FD, sets hard rlimits (CPU seconds, address
space, file size, no core files), puts SIGXFSZ back to its default (a write past the
file-size limit ends the program) and runs ENTRY as `__main__`: one interpreter start
per sandboxed program, not two. The parent waits with `wait4` and writes one JSON line
to REPORT_FD: exit code, signal, CPU seconds and peak RSS. The program never holds
REPORT_FD, so it cannot write a report of its own; killing the supervisor ends the
whole sandbox, which the parent reads as a failure. Before the fork it writes
`started`: the parent tells a sandbox that could not start (an infrastructure failure)
from a program that ended without a report.
"""

from __future__ import annotations

import _signal  # `signal` would import enum: 10 ms per sandboxed program
import builtins
import os
import resource
import sys

STARTED = b"started\n"
"""Written to REPORT_FD before the program exists: a run without it never started (the
sandbox could not be set up), which no program can fake by killing its supervisor."""


def _undumpable() -> None:
    """PR_SET_DUMPABLE 0: same-uid processes may no longer ptrace or read this one."""
    try:
        import ctypes  # deferred: only here, and the sandbox may lack libffi

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, ImportError, AttributeError):
        pass


def _cap(kind: int, soft: int, hard: int) -> None:
    """Set a limit, never above the hard limit this process inherited."""
    inherited = resource.getrlimit(kind)[1]
    if inherited != resource.RLIM_INFINITY:
        soft, hard = min(soft, inherited), min(hard, inherited)
    resource.setrlimit(kind, (soft, hard))


def _limit(cpu_s: int, memory: int, file_bytes: int) -> None:
    _cap(resource.RLIMIT_CPU, cpu_s, cpu_s + 1)
    _cap(resource.RLIMIT_AS, memory, memory)
    _cap(resource.RLIMIT_FSIZE, file_bytes, file_bytes)
    _cap(resource.RLIMIT_CORE, 0, 0)


def _child(program: list[str], cpu_s: int, memory: int, file_bytes: int) -> int:
    """Run ENTRY as __main__ under the limits; its exit code (SystemExit propagates)."""
    _limit(cpu_s, memory, file_bytes)
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_DFL)
    entry = program[0]
    sys.argv = list(program)
    with open(entry, encoding="utf-8", errors="replace") as fh:
        source = fh.read()
    scope = {"__name__": "__main__", "__file__": entry, "__builtins__": builtins}
    try:
        exec(compile(source, entry, "exec"), scope)
    except SystemExit:
        raise
    except BaseException as exc:  # the program's error, printed as Python would
        import traceback  # deferred: only a failing program needs it

        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)  # type: ignore[union-attr]
        return 1
    return 0


def main(argv: list[str]) -> int:
    report_fd, cpu_s, memory, file_bytes = (int(a) for a in argv[1:5])
    program = argv[argv.index("--") + 1 :]
    _undumpable()  # before the fork: the child never runs dumpable supervisor code
    try:  # noqa: SIM105 (contextlib: one more import for every sandboxed program)
        os.write(report_fd, STARTED)  # the sandbox is up: what follows is the program's
    except OSError:  # a long-lived worker's parent reads replies, not this pipe
        pass
    pid = os.fork()
    if pid == 0:
        os.close(report_fd)
        return _child(program, cpu_s, memory, file_bytes)
    _, status, usage = os.wait4(pid, 0)
    exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else "null"
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else "null"
    cpu, rss = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
    report = (
        f'{{"exit_code": {exit_code}, "signal": {sig}, '
        f'"cpu_s": {cpu:.4f}, "max_rss_mb": {rss:.2f}}}'
    )
    os.write(report_fd, (report + "\n").encode())  # by hand: importing json costs 15 ms
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
