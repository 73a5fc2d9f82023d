"""HumanEval's error operators: every agent step states or acts on the task's
key line, so an operator can put a coherent, decisive error at any kind of step; the
verdict and coordination modes flip runs; a wrong line the examples catch is repaired."""

from __future__ import annotations

import ast
import difflib
import functools
import random
import re

import pytest

from whowhen.assembly import make_system
from whowhen.benchmarks.humaneval.actions import kind_of, program_for, read_run
from whowhen.benchmarks.humaneval.env import HumanEvalEnv, passes, run_code
from whowhen.benchmarks.humaneval.operators import OPERATORS
from whowhen.benchmarks.humaneval.phrases import SUBMIT_EARLY
from whowhen.benchmarks.humaneval.steps import _code, report_counts, report_passes, stated
from whowhen.benchmarks.humaneval.tasks import EXAMPLES_MARKER, Problem, Task, make_tasks, problems
from whowhen.benchmarks.humaneval.variants import _verdicts, candidates, key_line
from whowhen.runtime import Action, Episode, Step, run_episode, warm_start

from .conftest import MAX_STEPS
from .operator_checks import valid_for_env

TASKS = make_tasks({"n_tasks": 164}, seed=4)[:40]
SUBTLE = [t for t in TASKS if key_line(t.question).variants]
MARKERS = ("inject", "error", "wrong", "mistake", "slip", "oops")


def _problem(task: Task) -> Problem:
    return next(p for p in problems() if p.source_id == task.source_id)


@functools.cache
def _episode(system: str, task: Task) -> Episode:
    return run_episode(HumanEvalEnv(task), make_system(system, "humaneval"), MAX_STEPS)


def _inject(system: str, task: Task, t: int, replacement: Action) -> Episode:
    """The run of `task` with step `t` replaced, warm-started from the exact prefix."""
    history = _episode(system, task).history
    assert replacement != history[t].as_action()
    result = warm_start(
        HumanEvalEnv(task), make_system(system, "humaneval"), history, t, replacement, MAX_STEPS
    )
    assert result.fidelity.exact
    return result.episode


def _sound(replaced: Action | None, original: Action, system: str) -> Action:
    assert replaced is not None and replaced != original and replaced.actor == original.actor
    assert valid_for_env(replaced, "humaneval", system)
    new, old = replaced.content.lower(), original.content.lower()
    assert not any(word in new and word not in old for word in MARKERS)
    return replaced


def _fail_report(step: Step) -> bool:
    return step.actor == "tester" and "passed" in step.content and not report_passes(step.content)


def test_a_third_of_the_tasks_have_a_subtle_key_line_and_every_step_states_it() -> None:
    assert len(SUBTLE) >= len(TASKS) // 4
    for system in ("code_act", "pipeline"):
        for task in SUBTLE[:4]:
            key = key_line(task.question)
            for step in _episode(system, task).history:
                if not step.is_agent_step or step.tool == "run_tests":
                    continue  # run_tests takes no argument: it acts on the saved draft
                assert stated(step, key) == key.text, (system, step.content[:80])


def test_the_variants_pass_the_examples_and_fail_the_hidden_tests() -> None:
    for task in SUBTLE[:6]:
        problem, key = _problem(task), key_line(task.question)
        line = problem.reference.rstrip().splitlines()[key.index]
        indent = line[: len(line) - len(line.lstrip())]
        for variant, _ in key.variants[:2]:
            lines = problem.reference.rstrip().splitlines()
            lines[key.index] = indent + variant
            program = "\n".join(lines) + "\n"
            out = run_code(program_for(program, task.examples))
            assert read_run(out, len(task.examples))[0], (task.source_id, variant)
            assert not passes(program, problem), (task.source_id, variant)


def test_every_kind_of_step_holds_a_decisive_error() -> None:
    """In a task with a subtle key line, each agent step of both systems takes a valid,
    marker-free replacement from some operator, and the continued run fails."""
    for system in ("code_act", "pipeline"):
        for task in SUBTLE[:2]:
            history = _episode(system, task).history
            for t, step in enumerate(history):
                if not step.is_agent_step:
                    continue
                rng, original = random.Random(t), step.as_action()
                made = [op(original, rng, history[:t]) for op in OPERATORS.values()]
                replaced = next((a for a in made if a is not None and a != original), None)
                replaced = _sound(replaced, original, system)
                result = _inject(system, task, t, replaced)
                assert not result.verdict.success, (system, task.source_id, step.content[:80])


def test_operators_apply_to_their_actions_only() -> None:
    task, plain = SUBTLE[0], next(t for t in TASKS if not key_line(t.question).variants)
    history = _episode("code_act", task).history
    t = next(
        i
        for i, s in enumerate(history)
        if kind_of(str((s.tool_args or {}).get("code"))) == "examples"
    )
    run = history[t].as_action()
    bugged = OPERATORS["reasoning.logic_bug"](run, random.Random(0), history[:t])
    old_head, old_tail = run.tool_args["code"].split(EXAMPLES_MARKER)
    head, tail = bugged.tool_args["code"].split(EXAMPLES_MARKER)
    assert tail == old_tail and bugged.content == run.content  # the check and text are kept
    changed = [d for d in difflib.ndiff(old_head.splitlines(), head.splitlines()) if d[0] in "+-"]
    assert len(changed) == 2  # one line: the key line
    plain_history = _episode("code_act", plain).history
    for t, step in enumerate(plain_history):  # no subtle variant: no operator applies
        for op in OPERATORS.values():
            assert op(step.as_action(), random.Random(0), plain_history[:t]) is None
    calc = Action("assistant", "Next, add 3 to the running total of 4.", "calculator", {})
    for op in OPERATORS.values():
        assert op(calc, random.Random(0), history[:3]) is None


@functools.cache
def _with_fail_report() -> Task:
    """A subtle task whose pipeline run holds a failure report (a buggy first draft)."""
    return next(t for t in SUBTLE if any(_fail_report(s) for s in _episode("pipeline", t).history))


def test_false_approval_and_ignored_message_flip_the_run() -> None:
    task = _with_fail_report()
    history = _episode("pipeline", task).history
    t = next(i for i, s in enumerate(history) if _fail_report(s))
    op = OPERATORS["verification.false_approval"]
    approval = _sound(
        op(history[t].as_action(), random.Random(0), history[:t]),
        history[t].as_action(),
        "pipeline",
    )
    assert report_passes(approval.content)
    after = _inject("pipeline", task, t, approval)
    assert not after.verdict.success or any(_fail_report(s) for s in after.history[t + 1 :])
    # the reviewer ignores the failure report: it approves and submits the failing draft
    back = next(
        i
        for i, s in enumerate(history)
        if i > t and s.actor == "reviewer" and report_counts(s.content) is not None
    )
    op = OPERATORS["coordination.ignored_message"]
    ignored = _sound(
        op(history[back].as_action(), random.Random(0), history[:back]),
        history[back].as_action(),
        "pipeline",
    )
    assert ignored.tool == "final_answer"
    assert not _inject("pipeline", task, back, ignored).verdict.success


def test_a_wrong_line_the_examples_catch_is_repaired() -> None:
    """A plan that states a key line the docstring examples show wrong is recovered: the
    first runs fail, and the fix writes the reference's line."""
    for task in SUBTLE:
        problem, key = _problem(task), key_line(task.question)
        caught = [
            line.strip()
            for (i, line, _), verdict in zip(candidates(problem), _verdicts(problem), strict=True)
            if i == key.index and verdict == "caught"
        ]
        if caught and task.examples:
            break
    else:
        raise AssertionError("no task with a caught key-line edit")
    history = _episode("code_act", task).history
    t = next(i for i, s in enumerate(history) if s.is_agent_step)
    plan = history[t].as_action()
    wrong = Action(plan.actor, plan.content.replace(f"`{key.text}`", f"`{caught[0]}`"))
    result = _inject("code_act", task, t, wrong)
    assert result.verdict.success
    assert any(
        s.content.startswith(("Only", "Still wrong", "The run fails")) for s in result.history
    )


def test_wrong_tool_has_the_tester_run_its_own_program() -> None:
    def runs_tests(task: Task) -> bool:
        return any(s.tool == "run_tests" for s in _episode("pipeline", task).history)

    def types_draft(task: Task) -> bool:  # a tester that runs the examples with run_python
        history = _episode("pipeline", task).history
        return any(s.actor == "tester" and kind_of(_code(s)) == "examples" for s in history)

    assert any(types_draft(t) for t in TASKS)  # the replacement's form is a reference one
    task = next(t for t in SUBTLE if runs_tests(t))
    history = _episode("pipeline", task).history
    t = next(i for i, s in enumerate(history) if s.tool == "run_tests")
    op = OPERATORS["action.wrong_tool"]
    own = _sound(
        op(history[t].as_action(), random.Random(0), history[:t]),
        history[t].as_action(),
        "pipeline",
    )
    assert own.tool == "run_python" and kind_of(own.tool_args["code"]) == "examples"
    assert own.content == history[t].content
    assert not _inject("pipeline", task, t, own).verdict.success


def test_premature_finish_submits_an_unfinished_body() -> None:
    cut = 0
    for task in SUBTLE[:8]:
        history = _episode("code_act", task).history
        t = next(
            i
            for i, s in enumerate(history)
            if s.tool == "run_python" and kind_of(s.tool_args["code"]) == "examples"
        )
        run = history[t].as_action()
        finish = OPERATORS["planning.premature_finish"](run, random.Random(0), history[:t])
        if finish is None:  # a one-statement body: nothing to cut
            continue
        finish = _sound(finish, run, "code_act")
        assert finish.tool == "final_answer"
        assert finish.content in {v.format(entry=task.entry_point) for v in SUBMIT_EARLY}
        answer = finish.tool_args["answer"]
        assert answer.startswith(task.question.rstrip()) and EXAMPLES_MARKER not in answer
        ast.parse(answer)  # cut at a statement: it still parses
        assert not _inject("code_act", task, t, finish).verdict.success
        cut += 1
    assert cut >= 2


def test_wrong_tool_argument_miscopies_the_key_line_of_the_submission() -> None:
    applied = 0
    for task in SUBTLE[:10]:
        history = _episode("pipeline", task).history
        t = next(i for i, s in enumerate(history) if s.tool == "final_answer")
        final = history[t].as_action()
        op = OPERATORS["action.wrong_tool_argument"]
        replaced = op(final, random.Random(0), history[:t])
        if replaced is None:  # the key line's variants are no copy slips
            continue
        typo = _sound(replaced, final, "pipeline")
        assert typo.content == final.content and typo.tool == "final_answer"
        old, new = final.tool_args["answer"], typo.tool_args["answer"]
        diff = list(difflib.ndiff(old.splitlines(), new.splitlines()))
        assert sum(d.startswith("- ") for d in diff) == 1 == sum(d.startswith("+ ") for d in diff)
        assert set(re.findall(r"[a-z]{3,}", new.lower())) <= set(
            re.findall(r"[a-z]{3,}", old.lower())
        )
        assert not _inject("pipeline", task, t, typo).verdict.success
        applied += 1
    assert applied >= 2


def test_shipped_verdicts_match_every_problems_edits() -> None:
    """The shipped verdicts are current: each problem's fingerprint (its candidate edits,
    examples and tests) matches, so no process recomputes them."""
    from whowhen.benchmarks.humaneval.tasks import problems
    from whowhen.benchmarks.humaneval.variants import _shipped, candidates, fingerprint

    shipped = _shipped()
    with_edits = [p for p in problems() if candidates(p)]
    assert len(with_edits) == len(shipped) > 150
    assert all(shipped[p.source_id]["fingerprint"] == fingerprint(p) for p in with_edits)


@pytest.mark.slow
def test_shipped_verdicts_are_what_the_sandbox_computes(tmp_path) -> None:
    from whowhen.benchmarks.humaneval.variants import VERDICTS, write_verdicts

    write_verdicts(tmp_path / "verdicts.json")
    assert (tmp_path / "verdicts.json").read_text() == VERDICTS.read_text()
