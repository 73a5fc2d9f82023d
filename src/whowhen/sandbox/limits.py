"""What a sandboxed run may use, what the parent saw, and the status that follows.

The status is decided here, by the parent, from facts the sandboxed code cannot forge:
what the watchdog did (and why), and the report of the trusted supervisor that waited
for the program inside the sandbox (its exit code, the signal that ended it, its CPU
time and peak memory from `wait4`). Nothing the program prints is read.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

STATUSES = (
    "ok",
    "error",
    "timeout",
    "cpu_limit",
    "memory_limit",
    "output_limit",
    "process_limit",
    "sandbox_error",
)
"""`sandbox_error`: the sandbox itself did not start (the supervisor never ran); the
caller raises `InfraError`, since no program was run to blame."""

CPU_BOUND = 0.8
"""At the wall limit, a program whose time went to running or waiting for a CPU (this
share of the wall clock or more) is reported as `cpu_limit`: on an idle machine its
CPU limit would have stopped it first, so the same program gets the same status under
load. A sleeping or blocked program is a `timeout`."""

CPU_SPENT = 0.8
"""`wait4`'s CPU times are sampled at clock ticks and read a little under the limit the
kernel enforced: a program ended by SIGXCPU/SIGKILL that used this share of its CPU
limit hit it; one that sent itself the signal early did not."""

MEMORY_FILLED = 0.8
"""A failed program whose peak resident memory reached this share of its cap really
filled its memory: `memory_limit`. A single request the address-space cap refuses
outright is the program's own MemoryError (`error`): no memory was used, and the parent
cannot tell a refused request from a printed one."""


SANDBOX_MB = 32
"""The sandbox's own processes (bwrap outside and inside, the supervisor): the memory
cgroup holds them beside the program."""

SHM_ROOM = 2
"""/dev/shm is a tmpfs of `SHM_ROOM * memory_mb`: room past the limit, so that the
watchdog (which stops a program holding `memory_mb` of shared memory) sees it pass the
limit before the file system is full and the program only gets an error."""


@dataclass(frozen=True)
class Limits:
    """Per-run limits; every one is enforced by the kernel or the parent's watchdog."""

    wall_s: float = 10.0
    cpu_s: int = 5
    memory_mb: int = 512
    output_bytes: int = 64_000
    disk_mb: int = 64
    file_mb: int = 16
    processes: int = 32

    @property
    def cgroup_mb(self) -> int:
        """The memory cgroup's limit: the program's memory (its own pages and the shared
        memory it holds), its private /tmp (a tmpfs: memory too) and the sandbox's own."""
        return self.memory_mb + self.disk_mb + SANDBOX_MB


@dataclass(frozen=True)
class Report:
    """The supervisor's account of the program, from `wait4` inside the sandbox."""

    exit_code: int | None
    signal: int | None
    cpu_s: float
    max_rss_mb: float


@dataclass(frozen=True)
class Observation:
    """Everything the parent knows when the sandbox has ended."""

    killed_for: str | None  # "wall", "output", "processes", "memory" or None
    cpu_bound: bool  # at a wall kill: was the program computing?
    report: Report | None  # None: the supervisor did not report (it was killed)
    stdout: bytes
    stderr: bytes
    truncated: bool
    wall_s: float
    started: bool = True  # the supervisor said it was up (else the sandbox never started)


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


def decide_status(obs: Observation, limits: Limits) -> str:
    """The status of a run, from the watchdog's action and the supervisor's report."""
    if obs.killed_for == "output":
        return "output_limit"
    if obs.killed_for == "processes":
        return "process_limit"
    if obs.killed_for == "memory":
        return "memory_limit"
    if obs.killed_for == "wall":
        return "cpu_limit" if obs.cpu_bound else "timeout"
    rep = obs.report
    if rep is None:
        return "error" if obs.started else "sandbox_error"
    if rep.signal in (signal.SIGXCPU, signal.SIGKILL) and rep.cpu_s >= CPU_SPENT * limits.cpu_s:
        return "cpu_limit"
    if rep.signal == signal.SIGXFSZ:
        return "output_limit"
    if rep.exit_code == 0:
        return "ok"
    if rep.max_rss_mb >= MEMORY_FILLED * limits.memory_mb:
        return "memory_limit"
    return "error"


def returncode(report: Report | None) -> int | None:
    """The program's exit status in `subprocess` style (negative for a signal)."""
    if report is None:
        return None
    return -report.signal if report.signal else report.exit_code
