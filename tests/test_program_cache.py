"""The program cache between a build's jobs: a program that ran to an end runs once (its
output comes back from disk in a new process's place), one stopped by a limit runs again,
and an entry that is not a program's output is ignored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from whowhen import program_cache, tools


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[Path]:
    program_cache.use(tmp_path)
    tools._RUNS.clear()  # a new process: nothing in memory
    yield tmp_path
    program_cache.use(None)
    tools._RUNS.clear()


def _entries(root: Path) -> list[Path]:
    return sorted(root.glob("*/*.json"))


def test_a_program_that_ended_runs_once_per_build(cache: Path) -> None:
    code = "import random\nprint(random.random())"  # a fresh run prints another number
    first = tools.run_python({"code": code})
    tools._RUNS.clear()
    assert tools.run_python({"code": code}) == first
    (entry,) = _entries(cache)
    assert json.loads(entry.read_text())[:2] == ["ok", first]
    failing = "raise SystemExit('no')"
    tools.run_python({"code": failing})
    assert len(_entries(cache)) == 2  # an error is an ending too
    data = {"t.csv": "a\n1\n"}
    assert tools.code_output(tools.computer_terminal({"code": code}, data)) != first
    assert len(_entries(cache)) == 3  # the same code with data is another program


def test_a_program_stopped_by_a_limit_is_not_kept(cache: Path) -> None:
    tools.run_python({"code": "while True:\n    pass"})
    assert _entries(cache) == []


@pytest.mark.parametrize(
    "text", ['["ok", "forged"', '{"status": "ok"}', '["ok", 1, 2]', '["wall", "", ""]']
)
def test_an_entry_not_of_its_shape_is_run_again(cache: Path, text: str) -> None:
    code = "print(6 * 7)"
    k = program_cache.key(code, {}, tools._LIMITS)
    path = cache / k[:2] / f"{k}.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert tools.run_python({"code": code}) == "42"
    assert json.loads(path.read_text()) == ["ok", "42", "ok"]
