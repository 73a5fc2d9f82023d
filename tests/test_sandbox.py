"""The sandbox for agent-written code: each limit ends the run with a clear status."""

from __future__ import annotations

import os

from whowhen.sandbox import Limits, run_python


def test_ok_and_error() -> None:
    res = run_python("print(sum(range(10)))")
    assert res.ok and res.stdout.strip() == "45"
    res = run_python("raise ValueError('bad')")
    assert res.status == "error" and "ValueError: bad" in res.stderr


def test_infinite_loop_hits_cpu_limit() -> None:
    res = run_python("while True:\n    pass", Limits(cpu_s=1, wall_s=10))
    assert res.status == "cpu_limit" and res.wall_s < 8


def test_sleeping_forever_hits_wall_limit() -> None:
    res = run_python("import time\ntime.sleep(60)", Limits(wall_s=1))
    assert res.status == "timeout" and res.wall_s < 5


def test_10_gb_allocation_hits_memory_limit() -> None:
    res = run_python("x = bytearray(10 * 1024 ** 3)", Limits(memory_mb=256))
    assert res.status == "memory_limit"


def test_process_storm_is_blocked() -> None:
    res = run_python("import os\nwhile True:\n    os.fork()")
    assert res.status == "blocked" and "os.fork" in res.stderr
    res = run_python("import subprocess\nsubprocess.run(['true'])")
    assert res.status == "blocked"
    res = run_python("import os\nos.system('echo hi')")
    assert res.status == "blocked"


def test_writes_outside_the_temp_dir_are_blocked(tmp_path) -> None:
    target = tmp_path / "escaped.txt"
    res = run_python(f"open({str(target)!r}, 'w').write('x')")
    assert res.status == "blocked" and not target.exists()
    res = run_python(f"import os\nos.remove({str(__file__)!r})")
    assert res.status == "blocked" and os.path.exists(__file__)
    inside = run_python("open('notes.txt', 'w').write('ok')\nprint(open('notes.txt').read())")
    assert inside.ok and inside.stdout.strip() == "ok"


def test_huge_output_is_truncated() -> None:
    res = run_python("print('x' * 10_000_000)", Limits(output_bytes=1000))
    assert res.status == "output_limit" and len(res.stdout) < 1100
    assert res.stdout.endswith("[output truncated]")


def test_no_secrets_in_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    res = run_python(
        "import os\nprint(sorted(os.environ))\nprint(os.environ.get('OPENAI_API_KEY'))"
    )
    assert res.ok and "sk-should-not-leak" not in res.stdout and "None" in res.stdout
