from __future__ import annotations

import ast
import random

import pytest

from whowhen.assembly import make_system
from whowhen.benchmarks.humaneval.actions import read_run
from whowhen.benchmarks.humaneval.env import HumanEvalEnv, passes
from whowhen.benchmarks.humaneval.mutate import mutate_code
from whowhen.benchmarks.humaneval.prompts import PROMPTS
from whowhen.benchmarks.humaneval.tasks import (
    Problem,
    Task,
    make_tasks,
    parse_examples,
    problems,
    reference_solution,
    visible_examples,
)
from whowhen.operators import random_slip
from whowhen.runtime import Action, Episode, run_episode
from whowhen.runtime.parallel import SANDBOX_RUNS, in_parallel

from .conftest import MAX_STEPS

ALL = make_tasks({"n_tasks": 164}, seed=4)
TASKS = ALL[:40]
SYSTEMS = ("code_act", "pipeline")


def _problem(source_id: str) -> Problem:
    return next(p for p in problems() if p.source_id == source_id)


def _episode(system: str, task: Task, max_steps: int = MAX_STEPS) -> Episode:
    return run_episode(HumanEvalEnv(task), make_system(system, "humaneval"), max_steps)


def test_tasks_are_the_real_problems_seeded() -> None:
    assert len(problems()) == 164
    assert make_tasks({"n_tasks": 164}, seed=4) == ALL
    assert {t.source_id for t in ALL} == {p.source_id for p in problems()}
    assert len({t.task_id for t in ALL}) == 164
    assert make_tasks({"n_tasks": 10}, seed=4) == ALL[:10]  # a prefix: task i is stable
    assert make_tasks({"n_tasks": 10}, seed=5) != ALL[:10]
    first = make_tasks({"n_tasks": 3, "subset": "first"}, seed=4)
    assert [t.source_id for t in first] == ["HumanEval/0", "HumanEval/1", "HumanEval/2"]
    assert len(make_tasks({"n_tasks": 500}, seed=1)) == 164
    for task in ALL:
        assert task.answer == task.question + _problem(task.source_id).canonical
        assert reference_solution(task.question) == task.answer


def test_docstring_examples_are_parsed_and_checked_against_the_reference() -> None:
    p0 = _problem("HumanEval/0")
    assert parse_examples(p0.prompt, p0.entry_point) == [
        ("has_close_elements([1.0, 2.0, 3.0], 0.5)", "False"),
        ("has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)", "True"),
    ]
    arrows = _problem("HumanEval/72")  # will_it_fly([1, 2], 5) ➞ False
    assert ("will_it_fly([1, 2], 5)", "False") in visible_examples(arrows.prompt)
    words = _problem("HumanEval/78")  # For num = "AB" the output should be 1.
    assert ('hex_key("AB")', "1") in visible_examples(words.prompt)
    median = _problem("HumanEval/47")  # the docstring's 15.0 contradicts the reference
    assert ("median([-10, 4, 6, 1000, 10, 20])", "15.0") in parse_examples(
        median.prompt, median.entry_point
    )
    assert all("1000" not in call for call, _ in visible_examples(median.prompt))
    assert sum(len(t.examples) for t in ALL) > 350


def test_evaluator_runs_the_hidden_tests() -> None:
    task = ALL[0]
    problem = _problem(task.source_id)
    assert HumanEvalEnv.score(task.answer, task.answer)
    assert HumanEvalEnv.score(problem.canonical, task.answer)  # a body after the prompt
    assert HumanEvalEnv.score(f"```python\n{task.answer}```", task.answer)
    assert not HumanEvalEnv.score(task.question + "    return None\n", task.answer)
    assert not HumanEvalEnv.score(task.question + "    raise ValueError\n", task.answer)
    assert not HumanEvalEnv.score(None, task.answer)
    assert not HumanEvalEnv.score("", task.answer)
    # the string differs from the gold, the program is equivalent: judged by running it
    assert passes(task.answer.replace("\n", "\n\n") + "\n# same program\n", problem)


@pytest.mark.parametrize(
    "forgery",
    [
        "import os\nos._exit(0)",
        "import sys\nsys.exit(0)",
        "import builtins\nbuiltins.check = lambda c: None\ndef check(candidate):\n    pass",
        "import sys\nsys.settrace(None)\nprint('PASS 0')\nraise SystemExit(0)",
        "class Any:\n    def __eq__(self, other):\n        return True\n"
        "def {entry}(*a, **k):\n    return Any()",
    ],
)
def test_a_wrong_solution_cannot_forge_a_pass(forgery: str) -> None:
    """Only the judge, after `check` returns, prints the run's token: a candidate that
    exits early, patches `check` or returns an always-equal object fails."""
    task = ALL[0]
    problem = _problem(task.source_id)
    wrong = task.question + "    return None\n\n" + forgery.format(entry=problem.entry_point)
    assert not passes(wrong + "\n", problem)
    assert passes(task.answer, problem)


@pytest.mark.slow
def test_every_reference_solution_passes_the_judge() -> None:
    assert all(passes(p.reference, p) for p in problems())


def test_tools() -> None:
    task = next(t for t in ALL if len(t.examples) >= 2)
    env = HumanEvalEnv(task)
    text = env.reset()
    for tool in ("write_code(code)", "run_tests()", "run_python(code)", "final_answer(answer)"):
        assert tool in text
    assert task.question.strip() in text
    assert env.step(Action("a", "", "run_tests", {}))[1].startswith("Error:")
    saved = env.step(Action("a", "", "write_code", {"code": task.answer}))[1]
    assert saved.startswith("Draft saved") and task.entry_point in saved
    out = env.step(Action("a", "", "run_tests", {}))[1]
    n = len(task.examples)
    assert read_run(out, n) == (True, n, n, []) and "FAIL" not in out
    env.step(Action("a", "", "write_code", {"code": task.question + "    return None\n"}))
    ok, passed, _, bad = read_run(env.step(Action("a", "", "run_tests", {}))[1], n)
    assert not ok and passed < n and bad
    assert "SyntaxError" in env.step(Action("a", "", "write_code", {"code": "def f(:"}))[1]
    assert env.step(Action("a", "", "run_python", {"code": "print(6 * 7)"}))[1] == "42"
    env.step(Action("a", "", "write_code", {"code": task.answer}))
    env.step(Action("a", "", "final_answer", {"answer": ""}))  # empty: submit the draft
    assert env.done and env.evaluate().success and env.evaluate().final_answer == task.answer


@pytest.mark.slow  # 164 tasks, each a sandboxed program per test run: the full suite's
@pytest.mark.parametrize("system", SYSTEMS)
def test_reference_policies_solve_all_164(system: str) -> None:
    # as the pipeline runs a code shard: a few runs at a time, results in task order
    episodes = in_parallel(lambda task: _episode(system, task), ALL, None, SANDBOX_RUNS)
    for task, episode in zip(ALL, episodes, strict=True):
        assert episode.verdict.success, (system, task.source_id, episode.end_reason)
    assert set(PROMPTS[system]) == set(make_system(system, "humaneval").agents)


def test_logic_bugs_parse_differ_and_usually_fail() -> None:
    failed = mutated = 0
    for problem in problems()[:60]:
        bug = mutate_code(problem.reference, random.Random(3))
        assert bug == mutate_code(problem.reference, random.Random(3))  # seeded
        if bug is None:
            continue
        assert ast.dump(ast.parse(bug)) != ast.dump(ast.parse(problem.reference))
        assert bug.startswith(problem.prompt)  # only the written body changes
        mutated += 1
        failed += not passes(bug, problem)
    assert mutated >= 35 and 0.6 * mutated <= failed < mutated


@pytest.mark.parametrize("system", SYSTEMS)
def test_slips_at_rate_one_fail_without_crashing(system: str) -> None:
    outcomes = []
    for task in TASKS[:12]:
        policy = make_system(system, "humaneval", slip_rate=1.0, seed=1, slip=random_slip)
        episode = run_episode(HumanEvalEnv(task), policy, 30)
        assert not episode.end_reason.startswith("error"), episode.end_reason
        outcomes.append(episode.verdict.success)
        assert all(r.slipped != r.original for r in policy.slips)
    assert not all(outcomes)
