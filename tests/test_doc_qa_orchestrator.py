from __future__ import annotations

import random

import pytest

from whowhen.benchmarks.doc_qa.actions import FIRST_REQUEST, HANDOFF, NEXT_REQUEST, REPORT
from whowhen.benchmarks.doc_qa.env import DocQAEnv
from whowhen.benchmarks.doc_qa.operators import OPERATORS, wrong_title
from whowhen.benchmarks.doc_qa.policies import POLICIES
from whowhen.benchmarks.doc_qa.prompts import PROMPTS
from whowhen.benchmarks.doc_qa.tasks import CITIES, generate_tasks
from whowhen.injection.operators import OPERATORS as ALL_OPERATORS
from whowhen.registry import make_system
from whowhen.runtime import Action, Episode, run_episode, warm_start

from .helpers import slip_failures

TASKS = generate_tasks(40, seed=2)
THREE = [t for t in TASKS if t.hops == 3]
TWO = [t for t in TASKS if t.hops == 2]


def run(task, system: str = "orchestrator") -> Episode:
    return run_episode(DocQAEnv(task), make_system(system, "doc_qa"), 60)


def inject(task, episode: Episode, t: int, action: Action, system: str = "orchestrator") -> Episode:
    result = warm_start(
        DocQAEnv(task), make_system(system, "doc_qa"), episode.history, t, action, 80
    )
    assert result.fidelity.exact
    return result.episode


def messages(episode: Episode, actor: str) -> list[int]:
    return [s.step for s in episode.history if s.actor == actor and s.kind == "message"]


def test_orchestrator_solves_every_task_and_react_is_unchanged() -> None:
    for task in TASKS:
        episode = run(task)
        assert episode.end_reason == "done" and episode.verdict.success, task.question
        assert {s.actor for s in episode.history if s.is_agent_step} == set(
            POLICIES["orchestrator"].agents
        )
        assert len(messages(episode, "researcher")) == task.hops
        assert run(task, "react").verdict.success
    assert set(PROMPTS) == {"react", "orchestrator"}
    assert set(PROMPTS["orchestrator"]) == set(POLICIES["orchestrator"].agents)


def test_distorted_report_propagates_unless_it_is_the_verified_last_hop() -> None:
    for task in THREE[:6]:
        episode = run(task)
        hop2, hop3 = messages(episode, "researcher")[1:3]
        for t, should_fail in ((hop2, True), (hop3, False)):
            wrong = OPERATORS["coordination.distorted_handoff"](
                episode.history[t].as_action(), random.Random(t)
            )
            assert wrong is not None and REPORT.match(wrong.content)
            assert wrong.content != episode.history[t].content
            assert (not inject(task, episode, t, wrong).verdict.success) == should_fail


def test_distorted_orchestrator_messages_keep_their_templates() -> None:
    episode = run(THREE[0])
    for t in messages(episode, "orchestrator"):
        original = episode.history[t].content
        wrong = ALL_OPERATORS["coordination.distorted_handoff"](
            episode.history[t].as_action(), random.Random(1)
        )
        assert wrong is not None and wrong.content != original and wrong.actor == "orchestrator"
        pattern = next(p for p in (FIRST_REQUEST, NEXT_REQUEST, HANDOFF) if p.match(original))
        assert pattern.match(wrong.content)


def test_wrong_subgoal_adds_or_skips_a_hop_and_propagates() -> None:
    for task, hops in ((TWO[0], 2), (THREE[0], 3)):
        episode = run(task)
        # 2 hops: the handoff becomes a request for the country; 3 hops: the last request
        # becomes a handoff of the birth city
        t = messages(episode, "orchestrator")[-1 if hops == 2 else -2]
        wrong = OPERATORS["planning.wrong_subgoal"](
            episode.history[t].as_action(), random.Random(0)
        )
        assert (NEXT_REQUEST if hops == 2 else HANDOFF).match(wrong.content)
        assert not inject(task, episode, t, wrong).verdict.success


def test_wrong_subgoal_read_and_first_request() -> None:
    task = TWO[1]
    react = run(task, "react")
    t = next(s.step for s in react.history if s.tool == "read")
    wrong = OPERATORS["planning.wrong_subgoal"](react.history[t].as_action(), random.Random(0))
    assert wrong.tool == "read" and wrong.tool_args["title"] in CITIES
    assert not inject(task, react, t, wrong, "react").verdict.success
    city_read = Action("researcher", "I will read the document on Graz.", "read", {"title": "Graz"})
    assert OPERATORS["planning.wrong_subgoal"](city_read, random.Random(0)) is None
    # asking for the wrong relation: the researcher finds nothing and the research restarts
    episode = run(task)
    wrong = OPERATORS["planning.wrong_subgoal"](episode.history[1].as_action(), random.Random(0))
    assert FIRST_REQUEST.match(wrong.content) and wrong.content != episode.history[1].content
    assert inject(task, episode, 1, wrong).verdict.success


def test_false_approval_of_a_rejected_candidate() -> None:
    task = TWO[2]
    episode = run(task)
    last_report = messages(episode, "researcher")[-1]
    distorted = OPERATORS["coordination.distorted_handoff"](
        episode.history[last_report].as_action(), random.Random(0)
    )
    caught = inject(task, episode, last_report, distorted)
    assert caught.verdict.success  # the verifier re-read the document and sent it back
    reject = messages(caught, "verifier")[0]
    approve = OPERATORS["verification.false_approval"](
        caught.history[reject].as_action(), random.Random(0)
    )
    assert approve.tool == "final_answer" and approve.tool_args["answer"] != task.answer
    assert not inject(task, caught, reject, approve).verdict.success


def test_core_wrong_title_for_reads_is_unchanged() -> None:
    episode = run(TASKS[3], "react")
    for step in episode.history:
        if step.tool == "read":
            got = ALL_OPERATORS["action.wrong_tool_argument"](step.as_action(), random.Random(5))
            assert got == wrong_title(step.as_action(), random.Random(5))


def test_operators_ignore_other_actions() -> None:
    foreign = [
        Action(
            "assistant",
            "Next, add 3 to the running total of 5.",
            "calculator",
            {"expression": "5 + 3"},
        ),
        Action(
            "searcher", "To orchestrator: found item P1234 (Nordic Lamp, $34.99); its page is open."
        ),
        Action("verifier", "To orchestrator: Check failed: the cart holds nothing."),
        Action("assistant", "I will open it.", "click", {"target": "P1234"}),
    ]
    for action in foreign:
        assert all(op(action, random.Random(0)) is None for op in OPERATORS.values())


@pytest.mark.parametrize("system", ["react", "orchestrator"])
def test_slip_model_fails_without_crashing(system: str) -> None:
    assert slip_failures(system, "doc_qa", TASKS[:15], 1) >= 10


MARKERS = ("inject", "error", "wrong", "mistake", "slip", "oops")


def _check(new: Action, original: Action) -> None:
    """A replacement that differs, keeps the actor, is valid and carries no marker word."""
    from .operator_checks import valid_for_env

    assert new != original and new.actor == original.actor
    assert valid_for_env(new, "doc_qa", "orchestrator")
    assert not any(m in new.content.lower() for m in MARKERS)


def test_researcher_finishes_with_the_last_fact_it_was_handed() -> None:
    op = OPERATORS["planning.premature_finish"]
    for task in TASKS[:6]:
        episode = run(task)
        history = episode.history
        steps = [s.step for s in history if s.tool in ("search", "read")]
        for t in steps:
            original = history[t].as_action()
            wrong = op(original, random.Random(0), history[:t])
            asked = history[max(i for i in range(t) if history[i].content.startswith("To res"))]
            if original.actor == "verifier" or FIRST_REQUEST.match(asked.content):
                assert wrong is None  # nothing found yet, or the check itself
                continue
            _check(wrong, original)
            value = NEXT_REQUEST.match(asked.content).group(3)
            assert wrong.tool == "final_answer" and wrong.tool_args["answer"] == value
            assert not inject(task, episode, t, wrong).verdict.success


def test_misidentified_candidate_is_an_earlier_fact_and_propagates() -> None:
    op = OPERATORS["perception.misidentified_object"]
    for task in TASKS[:6]:
        episode = run(task)
        t = messages(episode, "orchestrator")[-1]
        original = episode.history[t].as_action()
        wrong = op(original, random.Random(0), episode.history[:t])
        _check(wrong, original)
        m = HANDOFF.match(wrong.content)
        assert m and m.group(1) == HANDOFF.match(original.content).group(1)
        assert m.group(2) != task.answer and m.group(2) in m.group(1)
        assert not inject(task, episode, t, wrong).verdict.success
        # a report names the entity found: no other entity of its kind was read
        report = messages(episode, "researcher")[-1]
        assert op(episode.history[report].as_action(), random.Random(0), episode.history) is None


def test_new_operators_ignore_foreign_messages() -> None:
    history = run(TASKS[0]).history
    foreign = [
        Action("searcher", "To orchestrator: found item P1234 (Nordic Lamp, $34.99); open."),
        Action("searcher", "I will search the shop for lamps.", "search", {"query": "lamp"}),
        Action("verifier", "The cart holds one red lamp; I will check out.", "checkout", {}),
    ]
    for mode in ("planning.premature_finish", "perception.misidentified_object"):
        for action in foreign:
            assert OPERATORS[mode](action, random.Random(0), history) is None
