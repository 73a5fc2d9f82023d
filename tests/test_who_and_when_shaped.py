"""The two built systems shaped like the ones Who&When's runs come from: an AG2-style
expert group chat (arithmetic, data analysis) and a Magentic-One-style ledger orchestrator
(web shop, document QA).
Their runs succeed without slips, speak with the recorded runs' speaker roles, report tool
output as observations, are as long as the recorded ones, and come back through the
Who&When export and import with the same speakers, kinds and gold step."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from whowhen.registry import BENCHMARKS
from whowhen.runtime import Step
from whowhen.runtime.episode import run_episode

from .who_and_when_checks import check_round_trip


def _episodes(benchmark: str, system: str, n: int) -> list[list[Step]]:
    spec = BENCHMARKS[benchmark]
    out = []
    for i, task in enumerate(spec.make_tasks({"n_tasks": n}, 1)):
        episode = run_episode(spec.make_env(task), spec.policies[system](seed=i), 400)
        assert episode.end_reason == "done" and episode.verdict is not None
        assert episode.verdict.success, (system, task.task_id)
        out.append(episode.history)
    return out


@pytest.fixture(scope="module")
def chats() -> list[list[Step]]:
    return _episodes("arithmetic", "expert_chat", 12)


@pytest.fixture(scope="module")
def data_chats() -> list[list[Step]]:
    return _episodes("table_qa", "expert_chat", 16)


@pytest.fixture(scope="module")
def ledgers() -> list[list[Step]]:
    return _episodes("web_shop", "ledger", 60)


@pytest.fixture(scope="module")
def file_ledgers() -> list[list[Step]]:
    return _episodes("doc_qa", "ledger", 12)


def test_the_group_chat_speaks_like_an_ag2_chat(chats: list[list[Step]]) -> None:
    experts = {"Arithmetic_Expert", "Python_Expert", "Verification_Expert"}
    for history in chats:
        agents = {s.actor for s in history if s.is_agent_step}
        assert agents == experts
        terminal = [s for s in history if s.actor == "Computer_terminal"]
        assert terminal and all(s.kind == "observation" for s in terminal)
        assert all(
            s.content.startswith("exitcode: 0 (execution succeeded)\nCode output: ")
            for s in terminal
        )
        assert all("```python\n" in history[s.step - 1].content for s in terminal)
        assert history[-1].actor == "Verification_Expert"
        assert history[-1].content.endswith("TERMINATE")


def test_the_data_analysis_chat_runs_programs_over_the_table_file(
    data_chats: list[list[Step]],
) -> None:
    experts = {"DataAnalysis_Expert", "Python_Expert", "Verification_Expert"}
    failed_first = 0
    for history in data_chats:
        assert {s.actor for s in history if s.is_agent_step} == experts
        terminal = [s for s in history if s.actor == "Computer_terminal"]
        assert all(s.kind == "observation" for s in terminal)
        assert all('open("/sandbox/sales.csv")' in history[s.step - 1].content for s in terminal)
        outputs = [s.content for s in terminal]
        assert all(o.startswith("exitcode: 0") or "KeyError: 'Region'" in o for o in outputs)
        failed_first += any(o.startswith("exitcode: 1") for o in outputs)
        assert history[-1].content.endswith("TERMINATE")
        assert history[-1].tool == "final_answer"
    assert 0 < failed_first < len(data_chats)  # a tool error and its fix, on some tasks


def test_the_ledger_runs_are_as_long_as_magentic_one_runs(ledgers: list[list[Step]]) -> None:
    lengths = sorted(sum(s.is_agent_step for s in h) for h in ledgers)
    assert statistics.median(lengths) >= 30
    assert lengths[int(0.9 * len(lengths))] >= 80
    coded = 0
    for history in ledgers:
        agents = {s.actor for s in history if s.is_agent_step}
        assert {"Orchestrator", "WebSurfer"} <= agents <= {"Orchestrator", "WebSurfer", "Assistant"}
        terminal = [s for s in history if s.actor == "ComputerTerminal"]
        assert all(s.kind == "observation" for s in terminal)
        assert all(
            s.content.startswith("The script ran, then exited with Unix exit code: ")
            for s in terminal
        )
        assert all(
            history[s.step - 1].content.startswith("To ComputerTerminal: ") for s in terminal
        )
        coded += bool(terminal)
        orchestrator = [s.content for s in history if s.actor == "Orchestrator"]
        assert orchestrator[0].startswith("Initial plan:")
        ledgers_said = [
            json.loads(t.split("\n", 1)[1])
            for t in orchestrator
            if t.startswith("Updated Ledger:\n")
        ]
        assert ledgers_said and all("instruction_or_question" in b for b in ledgers_said)
        assert ledgers_said[-1]["is_request_satisfied"]["answer"] is True
        assert any(t.startswith("To WebSurfer: ") for t in orchestrator)
    assert 0 < coded < len(ledgers)  # the Assistant's check scripts, on some tasks


def test_the_file_surfer_reads_hop_by_hop_and_the_orchestrator_answers(
    file_ledgers: list[list[Step]],
) -> None:
    for history in file_ledgers:
        assert {s.actor for s in history if s.is_agent_step} == {"Orchestrator", "FileSurfer"}
        surfer = [s for s in history if s.actor == "FileSurfer"]
        assert {s.tool for s in surfer} == {"search", "read"}
        assert all(history[s.step + 1].kind == "observation" for s in surfer)
        last = history[-1]
        assert last.actor == "Orchestrator" and last.tool == "final_answer"
        assert last.content == f"FINAL ANSWER: {(last.tool_args or {})['answer']}"


@pytest.mark.parametrize("which", ["chats", "data_chats", "ledgers", "file_ledgers"])
def test_built_runs_come_back_through_the_who_and_when_files(
    which: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    check_round_trip(request.getfixturevalue(which)[:3], tmp_path)
