from __future__ import annotations

import random
import re

import pytest

from whowhen.assembly import make_system
from whowhen.benchmarks.web_shop.actions import CLICK, RETRY, SEARCH, SELECT
from whowhen.benchmarks.web_shop.env import TOOL_SPECS, WebShopEnv
from whowhen.benchmarks.web_shop.messages import APPROVE, BUY, ITEM_BAD, REJECT
from whowhen.benchmarks.web_shop.operators import OPERATORS
from whowhen.benchmarks.web_shop.tasks import make_tasks, parse_instruction
from whowhen.operators import OPERATORS as ALL_OPERATORS
from whowhen.registry import get_benchmark
from whowhen.runtime import Action, Episode, run_episode, warm_start

from .conftest import MAX_STEPS
from .helpers import slip_failures

BUY_ID = re.compile(r"item (P\d+) ")
TASKS = make_tasks({"n_tasks": 30}, seed=4)
TOOLS = {spec["name"] for spec in TOOL_SPECS}


def run(system: str, task, max_steps: int = MAX_STEPS) -> Episode:
    return run_episode(WebShopEnv(task), make_system(system, "web_shop"), max_steps)


def inject(system: str, task, episode: Episode, t: int, action: Action) -> Episode:
    result = warm_start(
        WebShopEnv(task), make_system(system, "web_shop"), episode.history, t, action, MAX_STEPS
    )
    assert result.fidelity.exact
    return result.episode


def first(episode: Episode, tool: str | None, actor: str | None = None) -> int:
    return next(
        s.step
        for s in episode.history
        if s.is_agent_step and s.tool == tool and (actor is None or s.actor == actor)
    )


def test_tasks_are_seeded_and_have_exactly_one_right_item() -> None:
    assert make_tasks({"n_tasks": 30}, seed=4) == TASKS
    assert make_tasks({"n_tasks": 30}, seed=5) != TASKS
    assert len({t.task_id for t in TASKS}) == len(TASKS)
    for task in TASKS:
        assert 20 <= len(task.catalogue) <= 45
        assert len({p.item_id for p in task.catalogue}) == len(task.catalogue)
        colour, noun, size, cap = parse_instruction(task.question)
        want = {"colour": colour, **({"size": size} if size else {})}
        same_word = [p for p in task.catalogue if p.word == noun]
        fits = [
            p
            for p in same_word
            if p.cents < cap * 100 and all(v in dict(p.options).get(k, ()) for k, v in want.items())
        ]
        assert [p.item_id for p in fits] == [task.target_id]
        assert any(p.cents > cap * 100 for p in same_word)  # a look-alike over the budget
        assert task.answer == f"{task.target_id} ({', '.join(f'{k}={v}' for k, v in want.items())})"


def buy(env: WebShopEnv, item: str, options: dict[str, str], times: int = 1) -> None:
    task = env.task
    noun = parse_instruction(task.question)[1]
    page = env.step(Action("a", "", "search", {"query": noun}))[1]
    while f"[{item}]" not in page and "[next]" in page:
        page = env.step(Action("a", "", "click", {"target": "next"}))[1]
    env.step(Action("a", "", "click", {"target": item}))
    for name, value in options.items():
        env.step(Action("a", "", "select_option", {"name": name, "value": value}))
    for _ in range(times):
        env.step(Action("a", "", "add_to_cart", {}))


def test_evaluator_on_right_and_wrong_purchases() -> None:
    task = TASKS[0]
    colour, _, size, _ = parse_instruction(task.question)
    right = {"colour": colour, **({"size": size} if size else {})}
    product = next(p for p in task.catalogue if p.item_id == task.target_id)
    env = WebShopEnv(task)
    env.reset()
    buy(env, task.target_id, right)
    assert not env.done
    env.step(Action("a", "", "checkout", {}))
    assert env.done and env.evaluate().success and env.evaluate().final_answer == task.answer
    colours = dict(product.options)["colour"]
    other = colours[colours.index(colour) - 1]  # another colour the shop accepts
    assert other != colour
    for options, times in [(dict(right, colour=other), 1), (right, 2), (right, 0)]:
        env.reset()
        buy(env, task.target_id, options, times)
        env.step(Action("a", "", "checkout", {}))
        assert env.done and not env.evaluate().success


def test_tool_errors_are_text_and_final_answer_is_refused() -> None:
    task = TASKS[1]
    env = WebShopEnv(task)
    assert "checkout()" in env.reset()
    errors = [
        env.step(Action("a", "", "select_option", {"name": "colour", "value": "red"})),
        env.step(Action("a", "", "add_to_cart", {})),
        env.step(Action("a", "", "click", {"target": "back"})),
        env.step(Action("a", "", "click", {"target": task.target_id})),  # not on this page
        env.step(Action("a", "", "search", {"query": "  "})),
        env.step(Action("a", "", "final_answer", {"answer": task.answer})),
    ]
    assert all(e[1].startswith("Error:") for e in errors), errors
    assert not env.done
    noun = parse_instruction(task.question)[1]
    page = env.step(Action("a", "", "search", {"query": noun + "s"}))[1]
    while f"[{task.target_id}]" not in page:  # results come in pages of a few items
        assert "[next]" in page
        page = env.step(Action("a", "", "click", {"target": "next"}))[1]
    env.step(Action("a", "", "click", {"target": task.target_id}))
    bad = env.step(Action("a", "", "select_option", {"name": "colour", "value": "plaid"}))[1]
    assert bad.startswith("Error:") and "choose from" in bad
    assert env.step(Action("a", "", "add_to_cart", {}))[1].startswith("Error: select a colour")


@pytest.mark.parametrize("system", ["react", "orchestrator"])
def test_reference_policies_solve_every_task(system: str) -> None:
    for task in TASKS:
        episode = run(system, task)
        assert episode.end_reason == "done" and episode.verdict.success, task.question


def test_registry_and_prompts() -> None:
    bench = get_benchmark("web_shop")
    assert (bench.modality, bench.category) == ("text", "web")
    assert {t["name"] for t in bench.tools} == TOOLS
    from whowhen.benchmarks.web_shop.prompts import PROMPTS
    from whowhen.benchmarks.web_shop.systems import POLICIES

    for system, cls in POLICIES.items():
        assert set(PROMPTS[system]) == set(cls.agents)


@pytest.mark.parametrize("system", ["react", "orchestrator"])
def test_operators_give_different_valid_actions(system: str) -> None:
    seen = set()
    for task in TASKS[:10]:
        episode = run(system, task)
        for step in episode.history:
            if not step.is_agent_step:
                continue
            original, before = step.as_action(), episode.history[: step.step]
            for mode, op in OPERATORS.items():
                new = op(original, random.Random(step.step), before)
                if new is None:
                    continue
                seen.add(mode)
                assert new != original and new.actor == original.actor
                assert new.tool in TOOLS or new.tool is None
                assert "slip" not in new.content.lower() and "wrong" not in new.content.lower()
                if new.tool == "select_option":  # a listed value, so the shop accepts it
                    values = SELECT.fields(new.content)["values"].split(", ")
                    assert new.tool_args["value"] in values
                if new.tool == "click":  # an item or a button the page on screen shows
                    page = next(s for s in reversed(before) if s.actor in ("search", "click"))
                    assert f"[{new.tool_args['target']}]" in page.content
    assert seen >= {
        "action.wrong_tool_argument",
        "planning.premature_finish",
        "action.wrong_tool",
        "perception.misidentified_object",
        "planning.wrong_subgoal",
    }


def test_operators_ignore_other_benchmarks_actions() -> None:
    foreign = [
        Action(
            "assistant",
            "Next, add 3 to the running total of 5.",
            "calculator",
            {"expression": "5 + 3"},
        ),
        Action("assistant", "I will read it.", "read", {"title": "Graz"}),
        Action("verifier", "To orchestrator: Check failed: the numbers differ."),
        Action("assistant", "Done.", "final_answer", {"answer": "7"}),
    ]
    for action in foreign:
        assert all(op(action, random.Random(0)) is None for op in OPERATORS.values())


@pytest.mark.parametrize(
    ("system", "mode", "tool", "actor"),
    [
        ("react", "perception.misidentified_object", "click", "assistant"),
        ("react", "action.wrong_tool_argument", "select_option", "assistant"),
        ("orchestrator", "perception.misidentified_object", "click", "searcher"),
        ("orchestrator", "action.wrong_tool", "add_to_cart", "buyer"),
    ],
)
def test_injected_error_propagates_to_failure(
    system: str, mode: str, tool: str, actor: str
) -> None:
    skipped = 0
    for task in TASKS[:8]:
        episode = run(system, task)
        t = next(  # the first such step (for a click: one that opens a listed item)
            s.step
            for s in episode.history
            if s.tool == tool and s.actor == actor and (tool != "click" or CLICK.read(s.content))
        )
        original = episode.history[t].as_action()
        wrong = ALL_OPERATORS[mode](original, random.Random(t), episode.history[:t])
        if wrong is None:  # e.g. no look-alike over the budget on this results page
            skipped += 1
            continue
        assert wrong != original
        result = inject(system, task, episode, t, wrong)
        # fails, unless the verifier's check of the open item caught a price mix-up
        caught = any(s.actor == "verifier" and ITEM_BAD.read(s.content) for s in result.history)
        assert not result.verdict.success or caught
    assert skipped <= 2


def test_a_wrong_option_is_carried_on_and_a_false_approval_flips_a_rejection() -> None:
    """The buyer's wrong option is what the team then believes (it is bought); a doubled
    cart is sent back and fixed, unless the verifier falsely approves it."""
    task = TASKS[2]
    episode = run("orchestrator", task)
    t = first(episode, "select_option", "buyer")
    wrong = OPERATORS["action.wrong_tool_argument"](
        episode.history[t].as_action(), random.Random(0), episode.history[:t]
    )
    assert not inject("orchestrator", task, episode, t, wrong).verdict.success
    approve = next(s.step for s in episode.history if APPROVE.read(s.content))
    doubled = Action("verifier", episode.history[approve].content, "add_to_cart", {})
    recovered = inject("orchestrator", task, episode, approve, doubled)
    assert recovered.verdict.success  # sent back, cart emptied and bought again
    reject = next(
        s.step
        for s in recovered.history
        if s.actor == "verifier" and s.kind == "message" and REJECT.read(s.content)
    )
    op = OPERATORS["verification.false_approval"]
    yes = op(recovered.history[reject].as_action(), random.Random(0), recovered.history[:reject])
    assert yes.tool == "checkout" and yes.actor == "verifier"
    assert not inject("orchestrator", task, recovered, reject, yes).verdict.success
    assert op(episode.history[1].as_action(), random.Random(0)) is None


@pytest.mark.parametrize("system", ["react", "orchestrator"])
def test_slip_model_fails_without_crashing(system: str) -> None:
    assert slip_failures(system, "web_shop", TASKS[:15], 3) >= 10


MARKERS = ("inject", "error", "wrong", "mistake", "slip", "oops")


def _check(new: Action, original: Action, system: str) -> None:
    """A replacement that differs, keeps the actor, is valid and carries no marker word."""
    from .operator_checks import valid_for_env

    assert new != original and new.actor == original.actor
    assert valid_for_env(new, "web_shop", system)
    assert not any(m in new.content.lower() for m in MARKERS)


def test_wrong_subgoal_searches_for_the_accessory_and_propagates() -> None:
    from whowhen.benchmarks.web_shop.tasks import NOUNS

    op = OPERATORS["planning.wrong_subgoal"]
    for task in TASKS[:6]:
        episode = run("react", task)
        t = next(
            s.step
            for s in episode.history
            if s.tool == "search" and (SEARCH.read(s.content) or RETRY.read(s.content))
        )
        original = episode.history[t].as_action()
        wrong = op(original, random.Random(0))
        _check(wrong, original, "react")
        noun = original.tool_args["query"]
        assert wrong.tool_args == {"query": f"{noun} {NOUNS[noun][2]}"}
        assert not inject("react", task, episode, t, wrong).verdict.success
        # only the policy's own search: a click, or a search it did not word, is left alone
        assert op(episode.history[first(episode, "click")].as_action(), random.Random(0)) is None
        assert (
            op(Action("assistant", "Searching.", "search", {"query": noun}), random.Random(0))
            is None
        )


def test_distorted_handoffs_keep_their_forms_and_propagate() -> None:
    from whowhen.benchmarks.web_shop.swaps import HANDOFFS

    op = OPERATORS["coordination.distorted_handoff"]
    kinds, made, flipped = set(), 0, 0
    for task in TASKS[:6]:
        episode = run("orchestrator", task)
        for step in episode.history:
            if step.kind != "message" or step.actor == "verifier":
                continue
            original, before = step.as_action(), episode.history[: step.step]
            wrong = op(original, random.Random(step.step), before)
            if wrong is None:
                continue
            _check(wrong, original, "orchestrator")
            form = next(p for p in HANDOFFS if p.read(original.content))
            assert form.read(wrong.content)[0] == form.read(original.content)[0]
            kinds.add(form.key)
            made += 1
            flipped += not inject("orchestrator", task, episode, step.step, wrong).verdict.success
    assert len(kinds) >= 5 and flipped == made > 0
    assert op(Action("orchestrator", "To verifier: check the cart."), random.Random(0)) is None
    assert op(Action("buyer", "I will add it.", "add_to_cart", {}), random.Random(0)) is None


def test_buyer_opens_the_item_it_is_named() -> None:
    """The buyer trusts the hand-off: a neighbouring id gets opened (and bought if it
    offers the options, the verifier not re-checking the price)."""
    task = TASKS[0]
    episode = run("orchestrator", task)
    t = next(s.step for s in episode.history if BUY.read(s.content))
    original = episode.history[t].content
    item = BUY_ID.search(original).group(1)
    before = episode.history[:t]
    from whowhen.benchmarks.web_shop.pages import listed_ids

    other = next(i for i in listed_ids(before) if i != item)
    wrong = Action("orchestrator", original.replace(item, other))
    result = inject("orchestrator", task, episode, t, wrong)
    clicks = [
        s.tool_args["target"]
        for s in result.history[t:]
        if s.actor == "buyer" and s.tool == "click"
    ]
    assert clicks[:2] == ["back", other]
