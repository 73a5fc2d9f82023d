"""The web-lookup group chat on the web shop, shaped like the AG2 chats of Who&When's
Algorithm-Generated runs: its runs succeed without slips, speak with the three experts,
run the lookups on the `Computer_terminal` over the catalogue file (the output an
observation), buy with the shop's own tools, are as long as the recorded chats, and come
back through the Who&When export and import with the same speakers and kinds. Its
operators re-say a step in the policy's forms, and the error carries on to the purchase."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from pathlib import Path

import pytest

from whowhen.benchmarks.web_shop import expert_operators as X
from whowhen.benchmarks.web_shop.env import WebShopEnv, catalogue_json
from whowhen.benchmarks.web_shop.expert_code import (
    printed,
)
from whowhen.benchmarks.web_shop.expert_forms import (
    CHECKER,
    CODER,
    PICK,
    SELECT_OPTION,
    SHOPPER,
    believed,
)
from whowhen.benchmarks.web_shop.experts import ExpertChatSystem
from whowhen.registry import BENCHMARKS
from whowhen.runtime import Action, Step, warm_start
from whowhen.runtime.episode import run_episode

from .who_and_when_checks import check_round_trip

SPEC = BENCHMARKS["web_shop"]
TASKS = SPEC.make_tasks({"n_tasks": 40}, 1)
EXPERTS = {CODER, SHOPPER, CHECKER}
SHOP_TOOLS = {"search", "click", "select_option", "add_to_cart", "checkout"}


def _system(seed: int = 0) -> ExpertChatSystem:
    return ExpertChatSystem(seed=seed)


@pytest.fixture(scope="module")
def chats() -> list[list[Step]]:
    out = []
    for i, task in enumerate(TASKS):
        episode = run_episode(SPEC.make_env(task), _system(i), 400)
        assert episode.end_reason == "done" and episode.verdict is not None
        assert episode.verdict.success, task.task_id
        out.append(episode.history)
    return out


def test_the_chat_speaks_like_an_ag2_chat_and_buys_with_the_shop_tools(
    chats: list[list[Step]],
) -> None:
    failed_first = sent_back = 0
    for history in chats:
        assert {s.actor for s in history if s.is_agent_step} == EXPERTS
        terminal = [s for s in history if s.actor == "Computer_terminal"]
        assert terminal and all(s.kind == "observation" for s in terminal)
        for s in terminal:
            asked = history[s.step - 1]
            assert asked.tool == "Computer_terminal" and asked.actor in (CODER, CHECKER)
            assert "```python\n" in asked.content
            assert 'open("/sandbox/catalogue.json")' in asked.content
        outputs = [s.content for s in terminal]
        assert all(o.startswith("exitcode: 0") or "KeyError: 'colour'" in o for o in outputs)
        failed_first += any(o.startswith("exitcode: 1") for o in outputs)
        shop = [s for s in history if s.is_agent_step and s.tool in SHOP_TOOLS]
        assert {s.actor for s in shop} <= {SHOPPER, CHECKER}
        assert all(history[s.step + 1].actor == s.tool for s in shop)
        assert all(history[s.step + 1].kind == "observation" for s in shop)
        sent_back += any(
            s.actor == CHECKER and "Python_Expert, please" in s.content for s in history
        )
        closing = history[-2]
        assert closing.actor == CHECKER and closing.tool == "checkout"
        assert closing.content.endswith("TERMINATE")
    assert 0 < failed_first < len(chats)  # a tool error and its fix, on some tasks
    assert 0 < sent_back < len(chats)  # the verifier's send-back, on some tasks


def test_the_runs_are_as_long_as_ag2_chats(chats: list[list[Step]]) -> None:
    lengths = sorted(sum(s.is_agent_step for s in h) for h in chats)
    assert 7 <= statistics.median(lengths) <= 9
    assert 10 <= lengths[int(0.9 * len(lengths))] <= 13
    programs = [sum(s.actor == "Computer_terminal" for s in h) for h in chats]
    assert 1 <= statistics.mean(programs) <= 3  # each a sandboxed process


def test_the_catalogue_file_holds_what_the_pages_show() -> None:
    task = TASKS[0]
    env = WebShopEnv(task)
    env.reset()
    code = (
        "import json\n\nwith open('/sandbox/catalogue.json') as f:\n    c = json.load(f)\n"
        "print(len(c), c[0]['id'], c[0]['price'])"
    )
    out = env.tools()["Computer_terminal"]({"code": code})
    first = task.catalogue[0]
    shown = f"{len(task.catalogue)} {first.item_id} ${first.cents // 100}.{first.cents % 100:02d}"
    assert out == f"exitcode: 0 (execution succeeded)\nCode output: {shown}"
    assert catalogue_json(task.catalogue) is catalogue_json(task.catalogue)  # memoized


def test_the_lookup_marks_exactly_one_line_under_the_budget(chats: list[list[Step]]) -> None:
    for history in chats:
        pick = next(s for s in history if s.actor == CHECKER and PICK.read(s.content))
        lookup = history[pick.step - 2]
        lines = printed(history[pick.step - 1].content)
        assert lookup.actor == CODER and len(lines) >= 2  # a look-alike over the budget, too
        assert [ln.verdict for ln in lines].count("under") == 1


@pytest.mark.parametrize(
    ("operator", "actor"),
    [
        (X.other_option, CODER),
        (X.misread_price, CHECKER),
        (X.other_option_handed, CHECKER),
        (X.neighbour_value, SHOPPER),
    ],
)
def test_an_injected_step_reads_like_the_policy_and_carries_on(
    operator: Callable[..., Action | None], actor: str, chats: list[list[Step]]
) -> None:
    flipped = 0
    for task, history in list(zip(TASKS, chats, strict=True))[:12]:
        at = next(
            (
                (s.step, new)
                for s in history
                if s.is_agent_step
                and s.actor == actor
                and (new := operator(s.as_action(), random.Random(1), history[: s.step]))
                not in (None, s.as_action())
            ),
            None,
        )
        if at is None:
            continue
        t, new = at
        assert new.actor == actor
        result = warm_start(WebShopEnv(task), _system(), history, t, new, 300)
        assert result.fidelity.exact
        episode = result.episode
        assert episode.history[t].content == new.content
        flipped += not episode.verdict.success
    assert flipped >= 3


def test_a_wrong_option_selected_is_what_the_verifier_checks_against() -> None:
    history = [
        Step(0, "user", "message", "Instruction: Buy a red lamp in size M under $35."),
        Step(
            1,
            SHOPPER,
            "action",
            SELECT_OPTION.at(0, name="size", value="L", item="P1234"),
            "select_option",
            {"name": "size", "value": "L"},
        ),
    ]
    assert believed(history).size == "L"


def test_built_runs_come_back_through_the_who_and_when_files(
    chats: list[list[Step]], tmp_path: Path
) -> None:
    check_round_trip(chats[:3], tmp_path)
