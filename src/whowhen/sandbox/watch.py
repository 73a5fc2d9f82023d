"""The parent's watchdog over one sandboxed process tree.

It reads stdout and stderr into bounded buffers (a program printing 1 GB costs the
parent at most `output_bytes` per stream), polls the tree through the host's /proc
every few milliseconds (process count, resident memory, and the shared memory it holds
where no memory cgroup counts it) and kills the whole tree at the wall limit. In the
bubblewrap mode the tree is a PID namespace: killing its init ends every process in it,
grandchildren in new sessions included.

Shared memory, without a memory cgroup: what the sandbox's private /dev/shm holds (read
through its init's root, /proc/<init>/root) and the memfd files its processes hold open
(each at most `file_mb`: the file-size rlimit bounds a memfd's writes, truncation and
fallocate alike), counted once per file. Mapped, the same pages are resident memory too.
What no process holds open (System V segments, a memfd in flight in a socket) only a
memory cgroup sees.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from whowhen.sandbox.cgroup import hit_cap, out_of_memory
from whowhen.sandbox.limits import CPU_BOUND, Limits, Observation, Report
from whowhen.sandbox.supervise import STARTED

POLL_S = 0.01
_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20
_CHUNK = 65536


@dataclass
class _Streams:
    """Bounded capture of the child's output pipes and the two report pipes."""

    cap: int
    data: dict[int, bytearray] = field(default_factory=dict)
    overflow: bool = False

    def read(self, fd: int) -> bool:
        """Read what is there; False at EOF. Beyond the cap nothing more is kept."""
        try:
            chunk = os.read(fd, _CHUNK)
        except OSError:
            return False
        if not chunk:
            return False
        buf = self.data.setdefault(fd, bytearray())
        room = self.cap + 1 - len(buf)
        if room > 0:
            buf += chunk[:room]
        self.overflow = self.overflow or len(buf) > self.cap
        return True

    def get(self, fd: int) -> bytes:
        return bytes(self.data.get(fd, b""))


def descendants(pid: int) -> list[int]:
    """`pid` and every live process below it, from /proc/<pid>/task/<tid>/children."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children") as fh:
                    todo.extend(int(k) for k in fh.read().split())
            except (OSError, ValueError):
                continue
    return found


def _rss_mb(pids: list[int]) -> float:
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/statm") as fh:
                total += int(fh.read().split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return total * _PAGE_MB


def _shared_mb(pids: list[int], init_pid: int | None) -> float:
    """The sandbox's /dev/shm in use and the memfd files `pids` hold open, each once."""
    total = 0
    if init_pid:
        try:
            fs = os.statvfs(f"/proc/{init_pid}/root/dev/shm")
            total += (fs.f_blocks - fs.f_bfree) * fs.f_frsize
        except OSError:
            pass
    seen: set[tuple[int, int]] = set()
    for p in pids:
        try:
            fds = os.listdir(f"/proc/{p}/fd")
        except OSError:
            continue
        for fd in fds:
            link = f"/proc/{p}/fd/{fd}"
            try:
                if not os.readlink(link).startswith("/memfd:"):
                    continue
                st = os.stat(link)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total / 2**20


def _busy_s(pid: int) -> float:
    """The most time any thread of `pid` spent running or runnable (schedstat), so that
    time lost to other processes on the same core still counts as computing."""
    best = 0.0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as fh:
                on_cpu, waiting = (int(v) for v in fh.read().split()[:2])
        except (OSError, ValueError):
            continue
        best = max(best, (on_cpu + waiting) / 1e9)
    return best


_TICKS = os.sysconf("SC_CLK_TCK")


def _lifetime_s(pid: int, elapsed_s: float) -> float:
    """How long `pid` has existed, at most `elapsed_s` (its start time from /proc): the
    sandbox's set-up before the program, slow on a loaded machine, is not its time."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            start = int(fh.read().rsplit(")", 1)[1].split()[19]) / _TICKS
        with open("/proc/uptime") as fh:
            now = float(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return elapsed_s
    return min(elapsed_s, max(now - start, 0.01))


def cpu_bound(pids: list[int], elapsed_s: float) -> bool:
    """Whether some process of the tree computed (ran or waited to run) for most of its
    own lifetime."""
    return any(_busy_s(p) >= CPU_BOUND * _lifetime_s(p, elapsed_s) for p in pids)


def _over_memory(
    tree: list[int], bwraps: tuple[int, int | None], limits: Limits, memory: Path | None
) -> bool:
    """The tree's resident memory past twice the limit (it counts a page shared by two
    processes twice); with a memory cgroup, the kernel's OOM killer having acted in it;
    without one, the shared memory held past the limit or, with the resident memory,
    past twice the limit. The processes the program cannot hand a file to (bwrap
    outside and the namespace's init; the supervisor in the unsafe mode) are not searched."""
    rss = _rss_mb(tree)
    if memory is not None:
        return rss > 2 * limits.memory_mb or out_of_memory(memory)
    shared = _shared_mb([p for p in tree if p not in bwraps], bwraps[1])
    return shared >= limits.memory_mb or rss + shared > 2 * limits.memory_mb


def _kill(proc: subprocess.Popen, init_pid: int | None) -> None:
    """SIGKILL the namespace's init (which ends every process in it), bwrap, its group."""
    for pid in (init_pid, proc.pid):
        if pid:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)


def _json_line(raw: bytes) -> dict:
    """The first JSON object in `raw` (bwrap's info is pretty-printed over lines)."""
    try:
        value, _ = json.JSONDecoder().raw_decode(raw.decode("utf-8", "replace").strip())
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def watch(
    argv: list[str],
    limits: Limits,
    stdin_fd: int,
    report_fd: int,
    info_fd: int | None,
    group: Path | None = None,
    memory: Path | None = None,
    **popen: object,
) -> Observation:
    """Run `argv` to its end or to a limit; `report_fd` and `info_fd` are the read ends
    of the supervisor's report pipe and bwrap's info pipe (their write ends are closed
    here once the child holds them); `group` and `memory` are the pids and memory
    cgroups `argv` enters, if any."""
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=stdin_fd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        **popen,  # type: ignore[arg-type]
    )
    for fd in popen.get("pass_fds", ()):  # type: ignore[union-attr]
        os.close(fd)  # the child holds the write ends now
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.fileno(), proc.stderr.fileno()
    streams = _Streams(limits.output_bytes)
    meta = _Streams(1 << 16)
    killed, busy = _loop(
        proc, limits, start, streams, meta, (out, err), (report_fd, info_fd), (group, memory)
    )
    proc.wait()
    if killed in (None, "wall") and out_of_memory(memory):  # the kernel acted first
        killed, busy = "memory", False
    for fd in (report_fd, info_fd):
        if fd is not None:
            while meta.read(fd):
                pass
            os.close(fd)
    proc.stdout.close()
    proc.stderr.close()
    raw = meta.get(report_fd)
    started = raw.startswith(STARTED)
    rep = _json_line(raw.removeprefix(STARTED))
    report = (
        Report(rep["exit_code"], rep["signal"], rep["cpu_s"], rep["max_rss_mb"]) if rep else None
    )
    return Observation(
        killed, busy, report, streams.get(out), streams.get(err), streams.overflow,
        time.monotonic() - start, started,
    )  # fmt: skip


def _loop(
    proc: subprocess.Popen,
    limits: Limits,
    start: float,
    streams: _Streams,
    meta: _Streams,
    outputs: tuple[int, int],
    reports: tuple[int, int | None],
    groups: tuple[Path | None, Path | None] = (None, None),
) -> tuple[str | None, bool]:
    """Read, poll and kill until the child's pipes close; (why killed, cpu-bound)."""
    group, memory = groups
    open_fds = {*outputs, *(fd for fd in reports if fd is not None)}
    init_pid: int | None = None
    deadline = start + limits.wall_s
    exited_at: float | None = None
    while open_fds & set(outputs):
        ready, _, _ = select.select(list(open_fds), [], [], POLL_S)
        for fd in ready:
            keep = (streams if fd in outputs else meta).read(fd)
            if not keep:
                open_fds.discard(fd)
        if init_pid is None and reports[1] is not None:
            init_pid = _json_line(meta.get(reports[1])).get("child-pid")
        now = time.monotonic()
        if streams.overflow:
            _kill(proc, init_pid)
            return "output", False
        tree = descendants(proc.pid)
        # bwrap, its init, the supervisor, python; or a fork the kernel refused at the cap
        if len(tree) > limits.processes + 4 or hit_cap(group):
            _kill(proc, init_pid)
            return "processes", False
        if _over_memory(tree, (proc.pid, init_pid), limits, memory):
            _kill(proc, init_pid)
            return "memory", False
        if now >= deadline:
            busy = cpu_bound(tree, now - start)
            _kill(proc, init_pid)
            return "wall", busy
        if proc.poll() is not None:
            exited_at = exited_at or now
            if now - exited_at > 0.5:  # the unsafe mode: an escaped grandchild holds a pipe
                _kill(proc, init_pid)
                break
    return None, False
