"""A kernel cap on the sandbox's process count: a pids cgroup, where the host lets us make one.

Why: the watchdog counts the tree every few milliseconds, but a fork storm can start
thousands of processes between two polls and exhaust the machine's memory before the
kill. `RLIMIT_NPROC` does not help (it is per user, and root's processes are exempt);
a pids cgroup is enforced by the kernel at every fork. The sandbox is started as
`sh -c 'echo $$ > GROUP/cgroup.procs && exec bwrap ...'`, so the very first process is
already inside the group and no fork can happen before the cap applies.

Where no pids cgroup can be made (no permission, a cgroup v2 host without delegation),
`make_group` returns None and the watchdog alone enforces the limit, as before.
"""

from __future__ import annotations

import itertools
import os
import time
from functools import lru_cache
from pathlib import Path

_V1 = Path("/sys/fs/cgroup/pids")
_COUNTER = itertools.count()


@lru_cache(maxsize=1)
def _base() -> Path | None:
    """This process's own pids cgroup directory (cgroup v1), if it is writable."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            base = _V1 / path.lstrip("/")
            return base if os.access(base, os.W_OK) else None
    return None


def make_group(max_tasks: int) -> Path | None:
    """A new pids cgroup allowing `max_tasks` tasks, or None where none can be made."""
    base = _base()
    if base is None:
        return None
    group = base / f"whowhen-sandbox-{os.getpid()}-{next(_COUNTER)}"
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(max_tasks))
    except OSError:
        remove_group(group)
        return None
    return group


def enter(argv: list[str], group: Path | None) -> list[str]:
    """`argv`, started so that its first process is already in `group`."""
    if group is None:
        return argv
    script = 'echo $$ > "$0" && exec "$@"'
    return ["/bin/sh", "-c", script, str(group / "cgroup.procs"), *argv]


def hit_cap(group: Path | None) -> bool:
    """Whether a fork in `group` has been refused at its cap."""
    if group is None:
        return False
    try:
        events = (group / "pids.events").read_text().split()
    except OSError:
        return False
    return len(events) >= 2 and events[0] == "max" and events[1] != "0"


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
