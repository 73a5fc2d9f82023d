"""The expert group chat on HumanEval, shaped like the AG2 chats Who&When's
Algorithm-Generated runs come from: its runs succeed without slips, speak with the three
experts, run every program on the `Computer_terminal` (an observation, as AG2's executor
prints it), hold failed runs and their fixes, are as long as the recorded chats, and come
back through the Who&When export and import with the same speakers and kinds. An injected
step reads like the policy's and flips the run."""

from __future__ import annotations

import random
import statistics
from pathlib import Path

import pytest

from whowhen.assembly import make_system
from whowhen.benchmarks.humaneval.expert_forms import (
    CHECKER,
    CODER,
    REJECT,
    TESTER,
    reads_as,
    run_outcome,
)
from whowhen.benchmarks.humaneval.expert_operators import approved_anyway, logic_bug
from whowhen.benchmarks.humaneval.steps import _code, task_prompt
from whowhen.benchmarks.humaneval.variants import key_line
from whowhen.operators import random_slip
from whowhen.registry import BENCHMARKS
from whowhen.runtime import Action, Step, warm_start
from whowhen.runtime.episode import Episode, run_episode
from whowhen.tools import TERMINAL, said

from .who_and_when_checks import check_round_trip

SPEC = BENCHMARKS["humaneval"]
TASKS = SPEC.make_tasks({"n_tasks": 40}, 1)
EXPERTS = {CODER, TESTER, CHECKER}


@pytest.fixture(scope="module")
def chats() -> list[list[Step]]:
    out = []
    for i, task in enumerate(TASKS):
        episode = run_episode(SPEC.make_env(task), SPEC.policies["expert_chat"](seed=i), 240)
        assert episode.end_reason == "done" and episode.verdict is not None
        assert episode.verdict.success, task.source_id
        out.append(episode.history)
    return out


def test_the_coding_chat_speaks_like_an_ag2_chat(chats: list[list[Step]]) -> None:
    for history in chats:
        assert {s.actor for s in history if s.is_agent_step} == EXPERTS
        terminal = [s for s in history if s.actor == TERMINAL]
        assert terminal and all(s.kind == "observation" for s in terminal)
        assert all(s.content.startswith("exitcode: 0 (execution succeeded)\n") for s in terminal)
        for out in terminal:  # each program is quoted in the message that runs it
            run = history[out.step - 1]
            assert run.tool == TERMINAL and run.actor in EXPERTS
            assert run.content.endswith(f"```python\n{_code(run).rstrip()}\n```")
        last = history[-1]
        assert last.actor == CHECKER and last.tool == "final_answer"
        assert last.content.endswith("TERMINATE")
        assert "```" not in said(last) and "def " in (last.tool_args or {})["answer"]


def _failed(step: Step) -> bool:
    """A terminal output of an example check that did not pass."""
    return (
        step.actor == TERMINAL
        and "examples passed." in step.content
        and not run_outcome(step.content)[0]
    )


def test_runs_hold_failed_runs_fixes_and_send_backs(chats: list[list[Step]]) -> None:
    failed = [h for h in chats if any(_failed(s) for s in h)]
    sent_back = [h for h in chats if any(reads_as(s, REJECT) for s in h)]
    assert 0 < len(sent_back) < len(failed) < len(chats) / 2
    for history in sent_back:  # the send-back follows the Testing_Expert's failing run
        i = next(s.step for s in history if reads_as(s, REJECT))
        assert history[i - 1].actor == TESTER and _failed(history[i - 2])


def test_the_runs_are_as_long_as_ag2_chats(chats: list[list[Step]]) -> None:
    lengths = sorted(sum(s.is_agent_step for s in h) for h in chats)
    assert 7 <= statistics.median(lengths) <= 9
    assert 10 <= lengths[int(0.9 * len(lengths))] <= 12
    programs = [sum(s.tool == TERMINAL for s in h) for h in chats]
    assert 2 <= statistics.mean(programs) <= 4  # each program is a sandboxed process


def _inject(history: list[Step], t: int, replacement: Action) -> Episode:
    task = next(task for task in TASKS if task.question in history[0].content)
    system = SPEC.policies["expert_chat"](seed=0)
    result = warm_start(SPEC.make_env(task), system, history, t, replacement, 240)
    assert result.fidelity.exact
    return result.episode


def test_a_logic_bug_in_the_first_program_is_what_the_verifier_approves(
    chats: list[list[Step]],
) -> None:
    history = next(h for h in chats if key_line(task_prompt(h)).variants)
    t = next(s.step for s in history if s.actor == CODER and s.tool == TERMINAL)
    bugged = logic_bug(history[t].as_action(), random.Random(0), history[:t])
    assert bugged is not None and said(bugged) == said(history[t])
    assert bugged.content.endswith(f"```python\n{_code(bugged).rstrip()}\n```")
    episode = _inject(history, t, bugged)
    assert episode.verdict is not None and not episode.verdict.success
    line = key_line(task_prompt(history))
    wrong = _code(bugged).rstrip().splitlines()[line.index].strip()
    assert wrong != line.text and wrong in (episode.history[-1].tool_args or {})["answer"]


def test_an_approval_instead_of_a_send_back_flips_the_run(chats: list[list[Step]]) -> None:
    history = next(h for h in chats if any(reads_as(s, REJECT) for s in h))
    t = next(s.step for s in history if reads_as(s, REJECT))
    approved = approved_anyway(history[t].as_action(), random.Random(0), history[:t])
    assert approved is not None and approved.tool == "final_answer"
    episode = _inject(history, t, approved)
    assert episode.verdict is not None and not episode.verdict.success


def test_slips_at_rate_one_fail_without_crashing() -> None:
    outcomes = []
    for task in TASKS[:12]:
        policy = make_system("expert_chat", "humaneval", slip_rate=1.0, seed=1, slip=random_slip)
        episode = run_episode(SPEC.make_env(task), policy, 30)
        assert not episode.end_reason.startswith("error"), episode.end_reason
        outcomes.append(episode.verdict is not None and episode.verdict.success)
        assert all(r.slipped != r.original for r in policy.slips)
    assert not all(outcomes)


def test_built_runs_come_back_through_the_who_and_when_files(
    chats: list[list[Step]], tmp_path: Path
) -> None:
    check_round_trip(chats[:3], tmp_path)
