from __future__ import annotations

import random

import pytest

from whowhen.assembly import make_system
from whowhen.benchmarks.doc_qa.actions import (
    CHECK,
    FIRST_REQUEST,
    HANDOFF,
    NEXT_REQUEST,
    REJECT,
    REPORT,
)
from whowhen.benchmarks.doc_qa.env import DocQAEnv
from whowhen.benchmarks.doc_qa.operators import OPERATORS, wrong_title
from whowhen.benchmarks.doc_qa.prompts import PROMPTS
from whowhen.benchmarks.doc_qa.systems import POLICIES
from whowhen.benchmarks.doc_qa.tasks import CITIES, chain_of, generate_tasks
from whowhen.operators import OPERATORS as ALL_OPERATORS
from whowhen.runtime import Action, Episode, run_episode, warm_start

from .conftest import MAX_STEPS
from .helpers import main_reads, slip_failures

TASKS = generate_tasks(40, seed=2)
THREE = [t for t in TASKS if "country" in t.question]  # ends with the country hop
TWO = [t for t in TASKS if "country" not in t.question]  # ends with the birth city


def run(task, system: str = "orchestrator") -> Episode:
    return run_episode(DocQAEnv(task), make_system(system, "doc_qa"), MAX_STEPS)


def inject(task, episode: Episode, t: int, action: Action, system: str = "orchestrator") -> Episode:
    result = warm_start(
        DocQAEnv(task), make_system(system, "doc_qa"), episode.history, t, action, MAX_STEPS
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
    assert set(PROMPTS) == {"react", "orchestrator", "ledger"}
    assert set(PROMPTS["orchestrator"]) == set(POLICIES["orchestrator"].agents)


def test_distorted_report_propagates_unless_the_verifier_checks_it() -> None:
    seen: list[tuple[bool, bool]] = []
    for task in TASKS[:12]:
        episode = run(task)
        h = episode.history
        for t in messages(episode, "researcher"):
            wrong = OPERATORS["coordination.distorted_handoff"](
                h[t].as_action(), random.Random(t), h[:t]
            )
            rel = REPORT.fields(h[t].content)["rel"]
            if rel == chain_of(task.question)[1][-1]:
                assert wrong is None  # the verifier re-reads the last hop's document
                continue
            if wrong is None:  # no other entity of the kind read yet
                continue
            after = next(s for s in h[t + 1 :] if s.is_agent_step)
            checked = CHECK.read(after.content) is not None
            assert REPORT.read(wrong.content)[0] == REPORT.read(h[t].content)[0]
            assert wrong.content != h[t].content
            success = inject(task, episode, t, wrong).verdict.success
            assert success or not checked  # a checked fact is sent back: the research restarts
            seen.append((checked, success))
    # an unchecked one propagates (unless the wrong chain happens to end in the same place)
    unchecked = [success for checked, success in seen if not checked]
    assert len(unchecked) < len(seen) and sum(unchecked) <= 0.2 * len(unchecked)


def test_distorted_orchestrator_messages_keep_their_forms() -> None:
    episode = run(THREE[0])
    h = episode.history
    for t in messages(episode, "orchestrator"):
        original = h[t].content
        wrong = ALL_OPERATORS["coordination.distorted_handoff"](
            h[t].as_action(), random.Random(1), h[:t]
        )
        if not NEXT_REQUEST.read(original):  # a first request, check or hand-off: not made
            assert wrong is None
            continue
        assert wrong is not None and wrong.content != original and wrong.actor == "orchestrator"
        assert NEXT_REQUEST.read(wrong.content)[0] == NEXT_REQUEST.read(original)[0]
        f = NEXT_REQUEST.fields(wrong.content)
        assert f["value"] == f["asked"] and f["value"] in " ".join(s.content for s in h[:t])
        assert not inject(THREE[0], episode, t, wrong).verdict.success


def test_wrong_subgoal_adds_or_skips_a_hop_and_propagates() -> None:
    for task, country in ((TWO[0], False), (THREE[0], True)):
        episode = run(task)
        # city question: the handoff becomes a request for the country; country question:
        # the last request becomes a handoff of the birth city
        form = NEXT_REQUEST if country else HANDOFF
        t = [i for i in messages(episode, "orchestrator") if form.read(episode.history[i].content)][
            -1
        ]
        wrong = OPERATORS["planning.wrong_subgoal"](
            episode.history[t].as_action(), random.Random(0), episode.history[:t]
        )
        assert (HANDOFF if country else NEXT_REQUEST).read(wrong.content)
        assert not inject(task, episode, t, wrong).verdict.success


def test_wrong_subgoal_read_and_first_request() -> None:

    task = TWO[1]
    react = run(task, "react")
    t = main_reads(react.history)[0]
    wrong = OPERATORS["planning.wrong_subgoal"](react.history[t].as_action(), random.Random(0))
    # the company's document read for its founder: the parent companies skipped
    assert wrong.tool == "read" and wrong.tool_args == react.history[t].tool_args
    assert "founder" in wrong.content
    assert not inject(task, react, t, wrong, "react").verdict.success
    person = next(i for i in main_reads(react.history) if "birth city" in react.history[i].content)
    wrong = OPERATORS["planning.wrong_subgoal"](react.history[person].as_action(), random.Random(0))
    assert wrong.tool == "read" and wrong.tool_args["title"] in CITIES
    assert not inject(task, react, person, wrong, "react").verdict.success
    city_read = Action("researcher", "I will read the document on Graz.", "read", {"title": "Graz"})
    assert OPERATORS["planning.wrong_subgoal"](city_read, random.Random(0)) is None
    # asking for the company's founder: the parent companies are skipped
    episode = run(task)
    wrong = OPERATORS["planning.wrong_subgoal"](episode.history[1].as_action(), random.Random(0))
    assert FIRST_REQUEST.fields(wrong.content)["rel"] == "founder"
    assert not inject(task, episode, 1, wrong).verdict.success


def test_false_approval_of_a_rejected_candidate() -> None:
    task = TWO[2]
    episode = run(task)
    last_report = messages(episode, "researcher")[-1]
    f = REPORT.fields(episode.history[last_report].content)
    other = next(c for c in CITIES if c != f["value"])
    distorted = Action("researcher", REPORT.at(0, **{**f, "value": other}))
    caught = inject(task, episode, last_report, distorted)
    assert caught.verdict.success  # the verifier re-read the document and sent it back
    reject = next(t for t in messages(caught, "verifier") if REJECT.read(caught.history[t].content))
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
            if original.actor == "verifier" or FIRST_REQUEST.read(asked.content):
                assert wrong is None  # nothing found yet, or the check itself
                continue
            _check(wrong, original)
            value = NEXT_REQUEST.fields(asked.content)["value"]
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
        m, o = HANDOFF.fields(wrong.content), HANDOFF.fields(original.content)
        assert m and o["facts"].startswith(m["facts"] + "; ")
        assert m["answer"] != task.answer and m["answer"] in m["facts"]
        assert not inject(task, episode, t, wrong).verdict.success
        # a report names another entity of the kind asked for, read in the documents
        report = messages(episode, "researcher")[-1]
        made = op(episode.history[report].as_action(), random.Random(0), episode.history[:report])
        assert made is None or REPORT.read(made.content)


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
