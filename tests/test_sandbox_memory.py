"""Memory that is not a process's own pages counts against the memory limit too.

A program can hold memory outside its address space: files in /dev/shm, memfd files
(`os.memfd_create`), System V segments, a memfd in flight in a socket. Each attack below
holds 900 MB against a 256 MB limit; it must end `memory_limit` (or another non-ok
status), and the host's shared memory must not grow far past the limit meanwhile. With
the kernel caps on and a memory cgroup to be had, the kernel counts every page; without
one, the watchdog counts /dev/shm and the memfds the sandbox's processes hold.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from whowhen.sandbox import Limits, bwrap, cgroup, run_python

LIMITS = Limits(memory_mb=256, wall_s=10)
HOLD_MB = 900

SHM = """
import time
chunk = b"x" * 2**20
for i in range(60):
    with open(f"/dev/shm/f{i}", "wb") as fh:
        for _ in range(15):
            fh.write(chunk)
print("held", flush=True)
time.sleep(2)
"""
MEMFD = """
import os, time
chunk = b"x" * 2**20
fds = []
for i in range(60):
    fd = os.memfd_create(f"m{i}")
    for _ in range(15):
        os.write(fd, chunk)
    fds.append(fd)
print("held", flush=True)
time.sleep(2)
"""
MEMFD_TRUNCATED = """
import mmap, os, time
fds = []
for i in range(60):
    fd = os.memfd_create(f"m{i}")
    os.ftruncate(fd, 15 * 2**20)
    with mmap.mmap(fd, 15 * 2**20) as mem:
        for page in range(0, 15 * 2**20, 4096):
            mem[page] = 1
    fds.append(fd)
print("held", flush=True)
time.sleep(2)
"""
DEV = SHM.replace("/dev/shm/f", "/dev/f")
SYSV = """
import ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
for i in range(9):
    sid = libc.shmget(0, 100 * 2**20, 0o1600)
    addr = libc.shmat(sid, None, 0)
    ctypes.memset(addr, 1, 100 * 2**20)
    libc.shmdt(ctypes.c_void_p(addr))
print("held", flush=True)
time.sleep(2)
"""
IN_FLIGHT = """
import os, socket, time
a, b = socket.socketpair()
chunk = b"x" * 2**20
for i in range(60):
    fd = os.memfd_create(f"m{i}")
    for _ in range(15):
        os.write(fd, chunk)
    socket.send_fds(a, [b"m"], [fd])
    os.close(fd)
print("held", flush=True)
time.sleep(2)
"""


def _shmem_mb() -> float:
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("Shmem:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _settled_shmem_mb() -> float:
    """The host's shared memory once what an earlier sandbox held is given back (the
    kernel frees an ended sandbox's IPC namespace and files a little after it ends)."""
    last = _shmem_mb()
    for _ in range(40):
        time.sleep(0.05)
        now = _shmem_mb()
        if abs(now - last) < 2:
            return now
        last = now
    return last


def _run_measured(code: str) -> tuple[str, float, float]:
    """The status, the wall time and the peak growth of the host's shared memory (MB)."""
    base, peak, stop = _settled_shmem_mb(), [0.0], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _shmem_mb() - base)
            time.sleep(0.003)

    sampler = threading.Thread(target=sample)
    sampler.start()
    start = time.monotonic()
    try:
        res = run_python(code, LIMITS)
    finally:
        stop.set()
        sampler.join()
    assert "held" not in res.stdout, res
    return res.status, time.monotonic() - start, peak[0]


@pytest.fixture(params=["kernel", "watchdog"])
def enforcer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The kernel caps on (a memory cgroup; skipped where the host gives none) or off
    (the watchdog alone, as for the offline pipeline's own programs)."""
    kernel = request.param == "kernel"
    if kernel:
        group = cgroup.make_memory_group(2**30)
        if group is None:
            pytest.skip("no memory cgroup can be made on this host")
        cgroup.remove_group(group)
    monkeypatch.setattr(bwrap, "_mode", {})
    bwrap.configure(False, kernel_cap=kernel)
    yield request.param


@pytest.mark.parametrize("attack", [SHM, MEMFD, MEMFD_TRUNCATED], ids=["shm", "memfd", "mmap"])
def test_shared_memory_counts_against_the_limit(enforcer: str, attack: str) -> None:
    status, wall_s, peak_mb = _run_measured(attack)
    assert status == "memory_limit"
    assert wall_s < 5
    assert peak_mb < LIMITS.memory_mb + 150  # stopped near the limit, not at 900 MB


def test_dev_is_not_a_place_to_hold_memory() -> None:
    status, _, peak_mb = _run_measured(DEV)
    assert status == "error" and peak_mb < 50


@pytest.mark.parametrize("attack", [SYSV, IN_FLIGHT], ids=["sysv", "in-flight"])
def test_the_kernel_counts_what_no_process_holds(enforcer: str, attack: str) -> None:
    """System V segments and a memfd in flight in a socket belong to no process's open
    files: only the memory cgroup sees them."""
    if enforcer == "watchdog":
        pytest.skip("the watchdog sees only what the sandbox's processes hold")
    status, wall_s, peak_mb = _run_measured(attack)
    assert status == "memory_limit" and wall_s < 5
    assert peak_mb < LIMITS.memory_mb + 150


def test_a_program_within_its_memory_is_ok(enforcer: str) -> None:
    """Some shared memory (a few files in /dev/shm, a memfd) under the limit is fine."""
    code = """
        import os
        for i in range(5):
            open(f"/dev/shm/part{i}", "wb").write(b"x" * 10 * 2**20)
        fd = os.memfd_create("buffer")
        os.write(fd, b"y" * 10 * 2**20)
        data = bytearray(60 * 2**20)
        print(sum(len(open(f"/dev/shm/part{i}", "rb").read()) for i in range(5)))
    """
    res = run_python("\n".join(line[8:] for line in code.splitlines()), LIMITS)
    assert res.ok, res
    assert res.stdout.strip() == str(50 * 2**20)
