from __future__ import annotations

import ast
import difflib
import functools
import random
import re
from collections.abc import Callable

import pytest

from whowhen.benchmarks.humaneval.actions import kind_of, program_for, read_run
from whowhen.benchmarks.humaneval.env import HumanEvalEnv, passes, run_code
from whowhen.benchmarks.humaneval.mutate import mutate_code, truncate_body
from whowhen.benchmarks.humaneval.operators import OPERATORS as HUMANEVAL_OPERATORS
from whowhen.benchmarks.humaneval.phrases import SUBMIT_EARLY
from whowhen.benchmarks.humaneval.prompts import PROMPTS
from whowhen.benchmarks.humaneval.steps import report_passes
from whowhen.benchmarks.humaneval.tasks import (
    EXAMPLES_MARKER,
    Problem,
    Task,
    make_tasks,
    parse_examples,
    problems,
    reference_solution,
    visible_examples,
)
from whowhen.injection.operators import OPERATORS, random_slip
from whowhen.registry import make_system
from whowhen.runtime import Action, Episode, Step, run_episode, warm_start

from .conftest import MAX_STEPS
from .operator_checks import valid_for_env

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


@pytest.mark.parametrize("system", SYSTEMS)
def test_reference_policies_solve_all_164(system: str) -> None:
    for task in ALL:
        episode = _episode(system, task)
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


def test_operators_apply_to_their_actions_only() -> None:
    task = TASKS[0]
    act = _episode("code_act", task).history
    run = next(
        s for s in act if s.tool == "run_python" and kind_of(s.tool_args["code"]) == "examples"
    ).as_action()
    bugged = OPERATORS["reasoning.logic_bug"](run, random.Random(0))
    head, tail = bugged.tool_args["code"].split(EXAMPLES_MARKER)
    assert tail == run.tool_args["code"].split(EXAMPLES_MARKER)[1]  # the check is kept
    assert head != run.tool_args["code"].split(EXAMPLES_MARKER)[0]
    assert bugged.content == run.content
    history = _episode("pipeline", task).history
    run_tests = next(s for s in history if s.tool == "run_tests")
    # the tester never submits (a role the reference tester never plays): no early finish
    assert OPERATORS["planning.premature_finish"](run_tests.as_action(), random.Random(0)) is None
    passed = next(
        s
        for s in history
        if s.actor == "tester"
        and s.kind == "message"
        and report_passes(s.content)
        and "passed" in s.content
    )
    for mode in ("verification.false_approval", "coordination.ignored_message"):
        op = OPERATORS[mode]
        assert op(passed.as_action(), random.Random(0), history[: passed.step]) is None
    calc = Action("assistant", "Next, add 3 to the running total of 4.", "calculator", {})
    for mode in ("reasoning.logic_bug", "planning.premature_finish"):
        assert OPERATORS[mode](calc, random.Random(0)) is None


@functools.lru_cache(maxsize=1)
def _caught_and_missed() -> tuple[tuple[Task, str], tuple[Task, str]]:
    """(task, buggy draft) whose bug the tester's run of the docstring examples catches in
    the pipeline (the coder's own try of the first example does not), and one the examples
    miss but the hidden tests catch."""
    caught = missed = None
    for task in TASKS:
        first = next(s for s in _episode("pipeline", task).history if _first_draft(s))
        if first.tool_args["code"] != task.answer:  # the coder starts from a buggy draft
            continue
        for seed in range(3):
            bug = mutate_code(task.answer, random.Random(seed))
            if bug is None or (caught and missed):
                continue
            visible = read_run(run_code(program_for(bug, task.examples)), len(task.examples))[0]
            hidden = passes(bug, _problem(task.source_id))
            if not visible and caught is None:
                run = _inject("pipeline", task, _first_draft, _with_code(bug))
                if any(_fail_report(s) for s in run.history):
                    caught = task, bug
            if visible and not hidden and missed is None:
                missed = task, bug
    assert caught and missed
    return caught, missed


def _first_draft(step: Step) -> bool:
    return step.tool == "write_code"


def _with_code(code: str) -> Callable[[Action], Action]:
    return lambda a: Action(a.actor, a.content, a.tool, {"code": code})


def _fail_report(step: Step) -> bool:
    """A tester's report that the draft fails examples."""
    return (
        step.actor == "tester"
        and step.kind == "message"
        and "passed" in step.content
        and not report_passes(step.content)
    )


def _inject(
    system: str,
    task: Task,
    pick: Callable[[Step], bool],
    replacement_of: Callable[[Action], Action],
) -> Episode:
    original = _episode(system, task)
    t = next(s.step for s in original.history if pick(s))
    replacement = replacement_of(original.history[t].as_action())
    assert replacement != original.history[t].as_action()
    env = HumanEvalEnv(task)
    system_ = make_system(system, "humaneval")
    result = warm_start(env, system_, original.history, t, replacement, MAX_STEPS)
    assert result.fidelity.exact
    return result.episode


def test_injected_errors_propagate_or_are_caught() -> None:
    (task_c, bug_c), (task_m, bug_m) = _caught_and_missed()
    # a bug the tester's run catches: reviewer sends it back, the coder fixes it (recovery)
    caught = _inject("pipeline", task_c, _first_draft, _with_code(bug_c))
    assert caught.verdict.success
    fail_msg = next(s for s in caught.history if _fail_report(s))
    back = next(s for s in caught.history if s.step > fail_msg.step and s.actor == "reviewer")
    assert back.content.startswith("To coder:") and not report_passes(back.content)
    # the tester now falsely reports the failing run as a pass: the bug is submitted,
    # unless the reviewer's own re-run request catches it
    op = OPERATORS["verification.false_approval"]
    approval = op(fail_msg.as_action(), random.Random(0), caught.history[: fail_msg.step])
    assert approval is not None and report_passes(approval.content)
    result = warm_start(
        HumanEvalEnv(task_c),
        make_system("pipeline", "humaneval"),
        caught.history,
        fail_msg.step,
        approval,
        MAX_STEPS,
    )
    after = result.episode.history[fail_msg.step + 1 :]
    assert result.fidelity.exact
    assert not result.episode.verdict.success or any(_fail_report(s) for s in after)
    # a bug the examples miss: approved and submitted, the hidden tests fail it
    missed = _inject("pipeline", task_m, _first_draft, _with_code(bug_m))
    assert not missed.verdict.success
    # code_act: the bug in the submitted program fails the task
    code_act = _inject(
        "code_act",
        task_m,
        lambda s: s.tool == "final_answer",
        lambda a: Action(a.actor, a.content, a.tool, {"answer": bug_m}),
    )
    assert not code_act.verdict.success


def test_ignored_feedback_loops_back() -> None:
    (task, bug), _ = _caught_and_missed()
    caught = _inject("pipeline", task, _first_draft, _with_code(bug))
    back = next(
        s
        for s in caught.history
        if s.actor == "reviewer" and s.content.startswith("To coder:") and "passed" in s.content
    )
    reply = caught.history[back.step + 1]  # the coder reproduces the failing call
    assert reply.actor == "coder" and reply.tool == "run_python"
    op = OPERATORS["coordination.ignored_message"]
    ignored = op(reply.as_action(), random.Random(0), caught.history[: reply.step])
    assert ignored.tool is None and ignored.content.startswith("To tester:")
    result = warm_start(
        HumanEvalEnv(task),
        make_system("pipeline", "humaneval"),
        caught.history,
        reply.step,
        ignored,
        MAX_STEPS,
    )
    # the unfixed draft is tested again and sent back again before the fix
    assert result.fidelity.exact and result.episode.verdict.success
    after = result.episode.history[reply.step :]
    assert sum(_fail_report(s) for s in after) >= 1
    assert sum(_fail_report(s) for s in result.episode.history) > sum(
        _fail_report(s) for s in caught.history
    )


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


MARKERS = ("inject", "error", "wrong", "mistake", "slip", "oops")


def _sound(replaced: Action | None, original: Action, system: str) -> Action:
    assert replaced is not None and replaced != original and replaced.actor == original.actor
    assert valid_for_env(replaced, "humaneval", system)
    assert not any(word in replaced.content.lower() for word in MARKERS)
    return replaced


def test_premature_finish_submits_an_unfinished_body() -> None:
    early = []
    for task in TASKS[:10]:
        history = _episode("code_act", task).history
        run = next(
            s
            for s in history
            if s.tool == "run_python" and kind_of(s.tool_args["code"]) == "examples"
        )
        op = OPERATORS["planning.premature_finish"]
        finish = op(run.as_action(), random.Random(0), history[: run.step])
        finish = _sound(finish, run.as_action(), "code_act")
        assert finish.tool == "final_answer"
        assert finish.content in {v.format(entry=task.entry_point) for v in SUBMIT_EARLY}
        answer = finish.tool_args["answer"]
        assert answer.startswith(task.question.rstrip()) and EXAMPLES_MARKER not in answer
        assert len(answer) < len(task.answer)
        ast.parse(answer)  # cut at a statement: it still parses
        early.append(passes(answer, _problem(task.source_id)))
        # submitted unfinished, the hidden tests fail it
        result = _inject("code_act", task, lambda s, r=run: s.step == r.step, lambda a, f=finish: f)
        assert result.verdict.success == early[-1]
    assert not any(early)
    assert truncate_body("x = 1\n", random.Random(0)) is None


def test_wrong_tool_argument_copies_the_submitted_program_with_one_slip() -> None:
    failed = applied = 0
    for task in TASKS[:12]:
        history = _episode("pipeline", task).history
        final = next(s for s in history if s.tool == "final_answer").as_action()
        replaced = OPERATORS["action.wrong_tool_argument"](final, random.Random(0))
        if replaced is None:  # e.g. `return len(string)`: no short name, digit or spare line
            continue
        applied += 1
        typo = _sound(replaced, final, "pipeline")
        assert typo.content == final.content and typo.tool == "final_answer"
        old, new = final.tool_args["answer"], typo.tool_args["answer"]
        ast.parse(new)
        # one small edit, and no word the original does not have
        diff = list(difflib.ndiff(old.splitlines(), new.splitlines()))
        assert sum(d.startswith("- ") for d in diff) == 1 >= sum(d.startswith("+ ") for d in diff)
        assert set(re.findall(r"[a-z]{3,}", new.lower())) <= set(
            re.findall(r"[a-z]{3,}", old.lower())
        )
        result = _inject("pipeline", task, lambda s: s.tool == "final_answer", lambda a, t=typo: t)
        failed += not result.verdict.success
    assert applied >= 9 and failed >= applied - 2
    calc = Action("assistant", "Next, add 3 to the running total of 4.", "calculator", {})
    answer = Action("assistant", "The answer is 7.", "final_answer", {"answer": "7"})
    for foreign in (calc, answer):
        assert HUMANEVAL_OPERATORS["action.wrong_tool_argument"](foreign, random.Random(0)) is None
        assert HUMANEVAL_OPERATORS["planning.premature_finish"](foreign, random.Random(0)) is None
