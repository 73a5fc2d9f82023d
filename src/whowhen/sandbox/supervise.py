"""The trusted supervisor that runs first inside the sandbox (standard library only).

Usage: `python -I -S supervise.py REPORT_FD CPU_S MEMORY_BYTES FILE_BYTES -- PROGRAM...`

It starts the program under hard rlimits (CPU seconds, address space, file size, no core
files), makes itself undumpable (the program, with every capability dropped, cannot
ptrace it), waits for it with `wait4` and writes one JSON line to REPORT_FD: exit code,
signal, CPU seconds and peak RSS. The program never holds REPORT_FD (it is closed on
exec), so it cannot write a report of its own; killing the supervisor ends the whole
sandbox, which the parent reads as a failure.
"""

from __future__ import annotations

import json
import os
import resource
import sys


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


def main(argv: list[str]) -> int:
    report_fd, cpu_s, memory, file_bytes = (int(a) for a in argv[1:5])
    program = argv[argv.index("--") + 1 :]
    os.set_inheritable(report_fd, False)
    pid = os.fork()
    if pid == 0:
        try:
            _limit(cpu_s, memory, file_bytes)
            os.execv(program[0], program)
        finally:
            os._exit(127)
    _undumpable()
    _, status, usage = os.wait4(pid, 0)
    report = {
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 4),
        "max_rss_mb": round(usage.ru_maxrss / 1024, 2),
    }
    os.write(report_fd, (json.dumps(report) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
