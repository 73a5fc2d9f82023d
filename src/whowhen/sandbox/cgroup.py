"""Kernel caps on the sandbox: a pids cgroup and a memory cgroup, where the host lets us
make them.

Why pids: the watchdog counts the tree every few milliseconds, but a fork storm can
start thousands of processes between two polls and exhaust the machine's memory before
the kill. `RLIMIT_NPROC` does not help (it is per user, and root's processes are
exempt); a pids cgroup is enforced by the kernel at every fork.

Why memory: the address-space rlimit bounds each process's own pages, not the memory a
program holds outside them: files in /dev/shm, memfd files, System V segments, a memfd
in flight in a socket. A memory cgroup charges every page to the group that allocated
it, whoever holds it; past its limit the kernel's OOM killer acts within the group.

The sandbox is started as `sh -c 'echo $$ > GROUP/cgroup.procs && ... && exec bwrap
...'`, so the very first process is already inside the groups and nothing can happen
before the caps apply. Where no group can be made (no permission, a cgroup v2 host
without delegation), the `make_*` functions return None and the watchdog alone enforces
the limits.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from functools import cache
from pathlib import Path

_V1 = Path("/sys/fs/cgroup")
_COUNTER = itertools.count()


@cache
def _base(controller: str = "pids") -> Path | None:
    """This process's own cgroup directory for `controller` (cgroup v1), if writable."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            base = _V1 / controller / path.lstrip("/")
            return base if os.access(base, os.W_OK) else None
    return None


def _make(controller: str, settings: dict[str, int]) -> Path | None:
    """A new group under this process's own, with `settings` written in order."""
    base = _base(controller)
    if base is None:
        return None
    group = base / f"whowhen-sandbox-{os.getpid()}-{next(_COUNTER)}"
    try:
        group.mkdir()
        for name, value in settings.items():
            (group / name).write_text(str(value))
    except OSError:
        remove_group(group)
        return None
    return group


def make_group(max_tasks: int) -> Path | None:
    """A new pids cgroup allowing `max_tasks` tasks, or None where none can be made."""
    return _make("pids", {"pids.max": max_tasks})


def make_memory_group(limit_bytes: int) -> Path | None:
    """A new memory cgroup holding at most `limit_bytes` (swap included where the host
    accounts it, so that pages cannot leave through swap), or None where none can be made."""
    group = _make("memory", {"memory.limit_in_bytes": limit_bytes})
    swap = None if group is None else group / "memory.memsw.limit_in_bytes"
    if swap is not None and swap.exists():
        with contextlib.suppress(OSError):  # no swap accounting: nothing more to cap
            swap.write_text(str(limit_bytes))
    return group


def enter(argv: list[str], *groups: Path | None) -> list[str]:
    """`argv`, started so that its first process is already in every one of `groups`."""
    procs = [str(group / "cgroup.procs") for group in groups if group is not None]
    if not procs:
        return argv
    writes = " && ".join(f'echo $$ > "${i}"' for i in range(1, len(procs) + 1))
    script = f'{writes} && shift {len(procs)} && exec "$@"'
    return ["/bin/sh", "-c", script, "whowhen-sandbox", *procs, *argv]


def hit_cap(group: Path | None) -> bool:
    """Whether a fork in `group` has been refused at its cap."""
    if group is None:
        return False
    try:
        events = (group / "pids.events").read_text().split()
    except OSError:
        return False
    return len(events) >= 2 and events[0] == "max" and events[1] != "0"


def out_of_memory(group: Path | None) -> bool:
    """Whether the kernel's OOM killer has acted in memory cgroup `group` (killed one of
    its processes at the limit; `oom_kill` counts them, Linux 4.13 and later)."""
    if group is None:
        return False
    try:
        fields = (group / "memory.oom_control").read_text().split()
    except OSError:
        return False
    counts = dict(zip(fields[::2], fields[1::2], strict=False))
    return counts.get("oom_kill", "0") != "0" or counts.get("under_oom") == "1"


def remove_group(group: Path | None, wait_s: float = 2.0) -> None:
    """Remove `group` once its processes are gone (they die with the sandbox's init)."""
    if group is None:
        return
    deadline = time.monotonic() + wait_s
    while True:
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:  # left behind, empty soon: harmless
                return
            time.sleep(0.005)
