from __future__ import annotations

import random

import pytest

from whowhen.assembly import make_system
from whowhen.benchmarks.doc_qa.actions import PATTERNS
from whowhen.benchmarks.doc_qa.env import DocQAEnv
from whowhen.benchmarks.doc_qa.tasks import CITIES, chain_of, generate_tasks, parse_question
from whowhen.errors import WhowhenError
from whowhen.operators import OPERATORS
from whowhen.registry import has_policy
from whowhen.runtime import Action, run_episode, warm_start

from .conftest import MAX_STEPS
from .helpers import main_reads

TASKS = generate_tasks(40, seed=2)


def test_tasks_are_seeded_and_follow_a_chain_of_documents() -> None:
    assert generate_tasks(40, seed=2) == TASKS
    assert {t.hops for t in TASKS} >= {3, 4, 5, 6, 7}
    for task in TASKS:
        assert parse_question(task.question) == (task.company, task.hops)
        docs = dict(task.corpus)
        subject = task.company
        for rel in chain_of(task.question)[1]:
            subject = PATTERNS[rel].search(docs[subject]).group(1)
        assert task.answer == subject
        assert all(len(text.split(". ")) >= 2 for text in docs.values())  # distractor text


def test_tools_and_evaluator() -> None:
    task = TASKS[0]
    env = DocQAEnv(task)
    env.reset()
    assert task.company in env.step(Action("a", "", "search", {"query": task.company}))[1]
    assert env.step(Action("a", "", "search", {"query": "zzz"}))[1] == 'No documents match "zzz".'
    assert env.step(Action("a", "", "read", {"title": "Nope"}))[1].startswith("Error:")
    env.step(Action("a", "", "final_answer", {"answer": f" {task.answer.upper()} "}))
    assert env.evaluate().success
    env.reset()
    env.step(Action("a", "", "final_answer", {"answer": "Atlantis"}))
    assert not env.evaluate().success


def test_reference_policy_solves_every_task() -> None:
    for task in TASKS:
        episode = run_episode(DocQAEnv(task), make_system("react", "doc_qa"), MAX_STEPS)
        assert episode.verdict.success, task.question


def test_wrong_title_propagates() -> None:
    task = TASKS[3]
    system = make_system("react", "doc_qa")
    original = run_episode(DocQAEnv(task), system, MAX_STEPS)
    t = main_reads(original.history)[0]
    wrong = OPERATORS["action.wrong_tool_argument"](
        original.history[t].as_action(), random.Random(0)
    )
    assert wrong.tool_args != original.history[t].tool_args
    assert wrong.content != original.history[t].content
    assert wrong.tool_args["title"] in wrong.content  # the text names what is read
    result = warm_start(DocQAEnv(task), system, original.history, t, wrong, MAX_STEPS)
    assert result.fidelity.exact and not result.episode.verdict.success


def test_matrix_skips_pairs_without_a_policy() -> None:
    assert has_policy("react", "doc_qa") and not has_policy("solver_verifier", "doc_qa")
    assert has_policy("llm_react", "doc_qa")
    with pytest.raises(WhowhenError, match="no policy"):
        make_system("solver_verifier", "doc_qa")


MARKERS = ("inject", "error", "wrong", "mistake", "slip", "oops")
FOREIGN = [
    Action(
        "assistant", "Next, add 3 to the running total of 5.", "calculator", {"expression": "5+3"}
    ),
    Action("assistant", "I will search the shop for lamps.", "search", {"query": "lamp"}),
    Action("assistant", "Done.", "final_answer", {"answer": "7"}),
    Action(
        "searcher", "To orchestrator: found item P1234 (Nordic Lamp, $34.99); its page is open."
    ),
]


def _check(new: Action, original: Action) -> None:
    """A replacement that differs, keeps the actor, is valid and carries no marker word."""
    from .operator_checks import valid_for_env

    assert new != original and new.actor == original.actor
    assert valid_for_env(new, "doc_qa", "react")
    assert not any(m in new.content.lower() for m in MARKERS)


def test_premature_finish_answers_with_the_hop_reached_so_far() -> None:
    op = OPERATORS["planning.premature_finish"]
    for task in TASKS[:8]:
        system = make_system("react", "doc_qa")
        episode = run_episode(DocQAEnv(task), system, MAX_STEPS)
        history = episode.history
        first, *reads = main_reads(history)
        # nothing read yet (the company's document): nothing to answer with
        assert op(history[first].as_action(), random.Random(0), history[:first]) is None
        for t in reads:
            original = history[t].as_action()
            wrong = op(original, random.Random(0), history[:t])
            _check(wrong, original)
            assert wrong.tool == "final_answer"
            assert wrong.tool_args["answer"] == original.tool_args["title"] != task.answer
            result = warm_start(DocQAEnv(task), system, history, t, wrong, MAX_STEPS)
            assert not result.episode.verdict.success


def test_misidentified_object_answers_with_another_entity_read() -> None:
    op = OPERATORS["perception.misidentified_object"]
    for task in TASKS[:8]:
        system = make_system("react", "doc_qa")
        episode = run_episode(DocQAEnv(task), system, MAX_STEPS)
        t = next(s.step for s in episode.history if s.tool == "final_answer")
        original = episode.history[t].as_action()
        wrong = op(original, random.Random(0), episode.history[:t])
        _check(wrong, original)
        answer = wrong.tool_args["answer"]
        read = " ".join(s.content for s in episode.history[:t] if s.actor == "read")
        assert answer in read and answer != task.answer
        # another place the documents read name: a city or another country
        assert answer in CITIES or answer in CITIES.values()
        result = warm_start(DocQAEnv(task), system, episode.history, t, wrong, MAX_STEPS)
        assert not result.episode.verdict.success


def test_new_operators_ignore_foreign_actions() -> None:
    from whowhen.benchmarks.doc_qa.operators import OPERATORS as DOC_OPERATORS

    history = run_episode(DocQAEnv(TASKS[0]), make_system("react", "doc_qa"), MAX_STEPS).history
    for mode in ("planning.premature_finish", "perception.misidentified_object"):
        for action in FOREIGN:
            assert DOC_OPERATORS[mode](action, random.Random(0), history) is None
            assert DOC_OPERATORS[mode](action, random.Random(0)) is None
