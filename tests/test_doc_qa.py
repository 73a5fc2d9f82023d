from __future__ import annotations

import random

import pytest

from whowhen.agents import has_policy, make_system
from whowhen.benchmarks.doc_qa import CITIES, DocQAEnv, generate_tasks, parse_question
from whowhen.errors import WhowhenError
from whowhen.injection import OPERATORS
from whowhen.runtime import Action, run_episode, warm_start

TASKS = generate_tasks(40, seed=2)


def test_tasks_are_seeded_and_need_2_or_3_hops() -> None:
    assert generate_tasks(40, seed=2) == TASKS
    assert {t.hops for t in TASKS} == {2, 3}
    for task in TASKS:
        assert parse_question(task.question) == (task.company, task.hops)
        docs = dict(task.corpus)
        founder = docs[task.company].rsplit(" by ", 1)[1].rstrip(".")
        city = docs[founder].rsplit(" in ", 1)[1].rstrip(".")
        assert task.answer == (city if task.hops == 2 else CITIES[city])


def test_tools_and_evaluator() -> None:
    task = TASKS[0]
    env = DocQAEnv(task)
    env.reset()
    assert task.company in env.step(Action("a", "", "search", {"query": task.company}))[1]
    assert env.step(Action("a", "", "search", {"query": "zzz"}))[1] == "No results."
    assert env.step(Action("a", "", "read", {"title": "Nope"}))[1].startswith("Error:")
    env.step(Action("a", "", "final_answer", {"answer": f" {task.answer.upper()} "}))
    assert env.evaluate().success
    env.reset()
    env.step(Action("a", "", "final_answer", {"answer": "Atlantis"}))
    assert not env.evaluate().success


def test_reference_policy_solves_every_task() -> None:
    for task in TASKS:
        episode = run_episode(DocQAEnv(task), make_system("react", "doc_qa"), 40)
        assert episode.verdict.success, task.question


def test_wrong_title_propagates() -> None:
    task = TASKS[3]
    system = make_system("react", "doc_qa")
    original = run_episode(DocQAEnv(task), system, 40)
    t = next(s.step for s in original.history if s.tool == "read")
    wrong = OPERATORS["action.wrong_tool_argument"](
        original.history[t].as_action(), random.Random(0)
    )
    assert wrong.tool_args != original.history[t].tool_args
    assert wrong.content == original.history[t].content
    result = warm_start(DocQAEnv(task), system, original.history, t, wrong, 40)
    assert result.fidelity.exact and not result.episode.verdict.success


def test_matrix_skips_pairs_without_a_policy() -> None:
    assert has_policy("react", "doc_qa") and not has_policy("solver_verifier", "doc_qa")
    assert has_policy("llm_react", "doc_qa")
    with pytest.raises(WhowhenError, match="no policy"):
        make_system("solver_verifier", "doc_qa")
