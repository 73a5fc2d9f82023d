"""The sandbox for agent-written code, tried the way an attacker would.

Each attack from the containment issue is one test: it must end with the expected
status, within the wall limit, with nothing of the host read, written or signalled.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from whowhen.sandbox import Limits, run_python

SECRET = "sk-should-not-leak-4242"


def test_ok_and_error() -> None:
    res = run_python("print(sum(range(10)))")
    assert res.ok and res.stdout.strip() == "45"
    res = run_python("raise ValueError('bad')")
    assert res.status == "error" and "ValueError: bad" in res.stderr
    assert "supervise.py" not in res.stderr  # the traceback starts at the agent's code
    res = run_python("from __future__ import annotations\nx: int = 1\nprint(x)")
    assert res.ok and res.stdout.strip() == "1"


def test_infinite_loop_hits_cpu_limit() -> None:
    res = run_python("while True:\n    pass", Limits(cpu_s=1, wall_s=10))
    assert res.status == "cpu_limit" and res.wall_s < 3


def test_sleeping_forever_hits_wall_limit() -> None:
    res = run_python("import time\ntime.sleep(60)", Limits(wall_s=1))
    assert res.status == "timeout" and res.wall_s < 2


def test_filling_memory_hits_memory_limit() -> None:
    res = run_python("x = []\nwhile True:\n    x.append(' ' * 10000)", Limits(memory_mb=256))
    assert res.status == "memory_limit"


def test_a_request_past_the_cap_is_the_programs_error() -> None:
    res = run_python("x = bytearray(10 * 1024 ** 3)", Limits(memory_mb=256))
    assert res.status == "error" and "MemoryError" in res.stderr


def test_host_files_are_not_there(tmp_path) -> None:
    (tmp_path / "private.txt").write_text(SECRET)
    code = f"""
        import os
        for path in ("/etc/passwd", {str(tmp_path / "private.txt")!r}, {__file__!r}):
            try:
                print(open(path).read())
            except OSError as exc:
                print(type(exc).__name__)
        for d in ("/root", "/work", "/home", "/proc", "/sys", "/etc", "/usr/bin"):
            print(d, os.path.exists(d) and os.listdir(d))
    """
    res = run_python(textwrap.dedent(code))
    assert res.ok, res.stderr
    assert SECRET not in res.stdout and "root:x:0" not in res.stdout
    assert "def test_host_files_are_not_there" not in res.stdout
    assert res.stdout.count("FileNotFoundError") == 3
    assert "/proc False" in res.stdout and "/etc False" in res.stdout


def test_no_key_through_environ_or_proc() -> None:
    """The key is in the calling process's environment from its start (where
    /proc/<pid>/environ shows it), as it is for a pipeline run with a key exported."""
    code = """
        import os
        print(sorted(os.environ), os.environ.get("OPENAI_API_KEY"))
        for path in ("/proc/self/environ", "/proc/1/environ", f"/proc/{os.getppid()}/environ"):
            try:
                print(open(path, "rb").read())
            except OSError as exc:
                print(type(exc).__name__)
    """
    caller = f"from whowhen.sandbox import run_python\nprint(run_python({textwrap.dedent(code)!r}))"
    env = {**os.environ, "OPENAI_API_KEY": SECRET}
    proc = subprocess.run([sys.executable, "-c", caller], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "status='ok'" in proc.stdout and SECRET not in proc.stdout


def test_no_network_to_the_host() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)"
    res = run_python(code, Limits(wall_s=5))
    with pytest.raises(TimeoutError):
        listener.accept()
    listener.close()
    assert res.status == "error" and "ConnectionRefusedError" in res.stderr


def test_processes_ctypes_and_shells_reach_nothing(tmp_path) -> None:
    target = tmp_path / "touched"
    code = f"""
        import ctypes, subprocess
        print(ctypes.CDLL(None).system(b"touch {target}"))
        try:
            subprocess.run(["id"])
        except OSError as exc:
            print(type(exc).__name__)
        subprocess.run([{os.path.realpath(sys.executable)!r}, "-c", "print('child ran')"])
    """
    res = run_python(textwrap.dedent(code))
    assert res.ok, res.stderr
    assert not target.exists() and "FileNotFoundError" in res.stdout
    assert "child ran" in res.stdout  # processes run, but only inside


@pytest.mark.parametrize(
    "attack",
    [
        "open(T, 'w').write('x')",
        "os.open(os.path.basename(T), os.O_WRONLY | os.O_TRUNC, dir_fd=os.open(D, os.O_RDONLY))",
        "os.remove(os.path.basename(T), dir_fd=os.open(D, os.O_RDONLY))",
        "os.rename(T, T + '.moved')",
        "import shutil; shutil.move(T, '/tmp/stolen')",
        "os.link(T, T + '.link')",
        "os.symlink('/tmp', T + '.sym')",
        "os.open(T, os.O_RDONLY | os.O_TRUNC)",
    ],
)
def test_host_files_cannot_be_changed(tmp_path, attack: str) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("intact")
    res = run_python(f"import os\nT, D = {str(target)!r}, {str(tmp_path)!r}\n{attack}")
    assert res.status == "error"
    assert target.read_text() == "intact" and sorted(os.listdir(tmp_path)) == ["keep.txt"]


def test_writes_inside_work() -> None:
    res = run_python("open('notes.txt', 'w').write('ok')\nprint(open('notes.txt').read())")
    assert res.ok and res.stdout.strip() == "ok"


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGSTOP"])
def test_signalling_the_parent_reaches_only_the_sandbox(
    sig: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a temp folder of this test's own: other tests' sandboxes may be running alongside
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code = f"import os, signal\nos.kill(os.getppid(), signal.{sig})\nos.kill(-1, signal.{sig})"
    start = time.monotonic()
    res = run_python(code, Limits(wall_s=2))
    assert time.monotonic() - start < 3
    assert res.status in ("error", "timeout")
    assert not list(tmp_path.glob("whowhen-sandbox-*"))  # the sandbox's folder is gone


def _alive_with(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except (OSError, ValueError):
            continue
    return found


@pytest.mark.parametrize("stdout", ["inherit", "devnull"])
def test_grandchildren_die_with_the_sandbox(stdout: str) -> None:
    marker = f"grandchild-{uuid.uuid4().hex}"
    py = os.path.realpath(sys.executable)
    out = "None" if stdout == "inherit" else "subprocess.DEVNULL"
    code = f"""
        import subprocess
        subprocess.Popen([{py!r}, "-c", "import time; time.sleep(60)", {marker!r}],
                         start_new_session=True, stdout={out})
        print("started", flush=True)
        {"import time; time.sleep(60)" if stdout == "inherit" else ""}
    """
    start = time.monotonic()
    res = run_python(textwrap.dedent(code), Limits(wall_s=2))
    assert time.monotonic() - start < 3
    assert "started" in res.stdout
    time.sleep(0.2)
    assert not _alive_with(marker)


def test_a_gigabyte_of_output_costs_the_parent_nothing(tmp_path) -> None:
    """In a fresh process whose address space is capped near its current size: the 1 GB
    is never buffered, and the parent's peak RSS grows by well under 50 MB."""
    probe = textwrap.dedent("""
        import json, resource, sys
        from whowhen.sandbox import Limits, run_python
        run_python("print(1)")  # warm up: imports, the sandbox probe
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        vm = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (vm + 300 * 2**20, resource.RLIM_INFINITY))
        code = "import sys\\nchunk = 'x' * 2**20\\nfor _ in range(1024): sys.stdout.write(chunk)"
        res = run_python(code, Limits(wall_s=30))
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps([res.status, (after - before) / 1024, len(res.stdout)]))
    """)
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    status, grown_mb, size = json.loads(proc.stdout.strip().splitlines()[-1])
    assert status == "output_limit" and grown_mb < 50 and size < 70_000


def test_a_big_file_is_an_output_limit_and_the_disk_is_capped() -> None:
    res = run_python("open('big', 'w').write('x' * 20_000_000)")
    assert res.status == "output_limit"
    fill = "i = 0\nwhile True:\n    open(f'f{i}', 'w').write('x' * 8_000_000)\n    i += 1"
    start = time.monotonic()
    res = run_python(fill, Limits(wall_s=5))
    assert res.status == "error" and "No space left" in res.stderr
    assert time.monotonic() - start < 5


@pytest.mark.parametrize(
    "fake",
    [
        "import sys\nprint('MemoryError', file=sys.stderr)\nsys.exit(1)",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
        "import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)",
        "import sys\nprint('PermissionError: sandbox: x', file=sys.stderr)\nsys.exit(152)",
    ],
)
def test_statuses_cannot_be_faked(fake: str) -> None:
    assert run_python(fake).status == "error"


def test_a_process_storm_is_stopped() -> None:
    start = time.monotonic()
    res = run_python("import os\nwhile True:\n    os.fork()", Limits(wall_s=5))
    assert res.status == "process_limit" and time.monotonic() - start < 5


def _busy_loops(cpu: int, n: int) -> list[subprocess.Popen]:
    loop = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"
    return [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(n)]


def test_the_same_cpu_bound_program_gets_the_same_status_under_load() -> None:
    code, limits = "while True:\n    pass", Limits(cpu_s=1, wall_s=2)
    idle = run_python(code, limits)
    cpu = sorted(os.sched_getaffinity(0))[-1]
    loops = _busy_loops(cpu, 3)
    mask = os.sched_getaffinity(0)
    try:
        time.sleep(0.3)
        os.sched_setaffinity(0, {cpu})  # the sandbox inherits it: one core, four loops
        loaded = run_python(code, limits)
    finally:
        os.sched_setaffinity(0, mask)
        for p in loops:
            p.kill()
    assert idle.status == loaded.status == "cpu_limit"
    assert loaded.wall_s < limits.wall_s + 1


def test_without_a_sandbox_agent_code_does_not_run(tmp_path) -> None:
    env = {**os.environ, "WHOWHEN_BWRAP": str(tmp_path / "no-bwrap")}
    env.pop("WHOWHEN_SANDBOX", None)
    code = "from whowhen.sandbox import run_python\nprint(run_python('print(1)'))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode != 0
    assert "agent code cannot run: the sandbox did not start" in proc.stderr
    assert "unsafe_local" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**env, "WHOWHEN_SANDBOX": "unsafe-local"},
    )
    assert proc.returncode == 0 and "status='ok'" in proc.stdout


@pytest.mark.parametrize(
    ("killed", "busy", "report", "status"),
    [
        ("output", False, None, "output_limit"),
        ("processes", False, None, "process_limit"),
        ("memory", False, None, "memory_limit"),
        ("wall", True, None, "cpu_limit"),
        ("wall", False, None, "timeout"),
        (None, False, None, "error"),  # the supervisor was killed: no report
        (None, False, (None, 24, 0.98, 10.0), "cpu_limit"),
        (None, False, (None, 24, 0.10, 10.0), "error"),  # sent itself SIGXCPU
        (None, False, (None, 9, 0.10, 10.0), "error"),
        (None, False, (None, 25, 0.10, 10.0), "output_limit"),
        (None, False, (1, None, 0.10, 500.0), "memory_limit"),
        (None, False, (1, None, 0.10, 20.0), "error"),
        (None, False, (0, None, 0.10, 500.0), "ok"),
    ],
)
def test_the_status_follows_from_what_the_parent_saw(killed, busy, report, status) -> None:
    from whowhen.sandbox.limits import Observation, Report, decide_status

    rep = Report(*report) if report else None
    obs = Observation(killed, busy, rep, b"MemoryError", b"MemoryError", False, 1.0)
    assert decide_status(obs, Limits(cpu_s=1, memory_mb=512)) == status


def test_the_kernel_refuses_forks_past_the_cap() -> None:
    """Where the host gives a pids cgroup, a fork storm is stopped at fork time, not at
    the watchdog's next poll (which a storm can outrun and exhaust memory meanwhile)."""
    from whowhen.sandbox import cgroup

    group = cgroup.make_group(5)
    if group is None:
        pytest.skip("no pids cgroup can be made on this host")
    code = (
        "import os, time\nn = 0\nfor _ in range(20):\n    try:\n        pid = os.fork()\n"
        "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(1)\n"
        "        os._exit(0)\n    n += 1\nprint(n)"
    )
    try:
        out = subprocess.run(
            cgroup.enter([sys.executable, "-c", code], group), capture_output=True, text=True
        )
        assert int(out.stdout) == 4 and cgroup.hit_cap(group)  # 5 tasks: itself and 4
    finally:
        cgroup.remove_group(group)
    assert not group.exists()


@pytest.mark.parametrize("cap", [True, False])
def test_the_kernel_cap_follows_the_setting(cap: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """`sandbox.kernel_process_cap` decides whether a program gets a pids cgroup (it costs
    a cgroup migration per program); off, the watchdog still stops a fork storm."""
    from whowhen.sandbox import bwrap, cgroup

    if cgroup._base() is None:
        pytest.skip("no pids cgroup can be made on this host")
    made: list[object] = []
    real = cgroup.make_group
    monkeypatch.setattr(cgroup, "make_group", lambda n: made.append(real(n)) or made[-1])
    monkeypatch.setattr(bwrap, "_mode", {})
    bwrap.configure(False, kernel_cap=cap)
    storm = "import os, time\nfor _ in range(200):\n    if os.fork() == 0:\n        time.sleep(2)"
    res = run_python(storm, Limits(wall_s=5, processes=8))
    assert res.status == "process_limit"
    assert bool(made) == cap


def test_kernel_cap_auto_means_when_a_model_plays_agents() -> None:
    from whowhen.config import kernel_process_cap

    assert kernel_process_cap({"systems": ["react", "code_act"]}) == "never"
    assert kernel_process_cap({"systems": ["react", "llm_code_act"]}) == "always"
    always = {"systems": ["react"], "sandbox": {"kernel_process_cap": "always"}}
    assert kernel_process_cap(always) == "always"
    never = {"systems": ["llm_react"], "sandbox": {"kernel_process_cap": "never"}}
    assert kernel_process_cap(never) == "never"
