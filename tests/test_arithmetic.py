from __future__ import annotations

import pytest

from whowhen.benchmarks import get_benchmark
from whowhen.benchmarks.arithmetic import (
    ArithmeticEnv,
    calculate,
    generate_tasks,
    normalize_answer,
    parse_problem,
)
from whowhen.errors import WhowhenError
from whowhen.runtime import Action


def test_generation_is_seeded() -> None:
    a, b = generate_tasks(20, seed=1), generate_tasks(20, seed=1)
    assert a == b
    assert a != generate_tasks(20, seed=2)
    assert len({t.task_id for t in a}) == 20


def test_intermediate_values_are_positive_integers() -> None:
    for task in generate_tasks(200, seed=3, min_ops=2, max_ops=6):
        assert 2 <= len(task.ops) <= 6
        value = task.start
        for op, n in task.ops:
            value = {"add": value + n, "sub": value - n, "mul": value * n, "div": value / n}[op]
            assert value == int(value) and value > 0
        assert value == task.answer


def test_parser_reads_back_every_problem() -> None:
    for task in generate_tasks(200, seed=4):
        start, ops = parse_problem(task.question)
        assert start == task.start and tuple(ops) == task.ops


def test_parser_rejects_text_without_start() -> None:
    with pytest.raises(ValueError):
        parse_problem("How many apples?")


@pytest.mark.parametrize(
    ("expr", "out"),
    [
        ("84 - 9", "75"),
        ("7 * 6", "42"),
        ("10 / 4", "2.5"),
        ("(2 + 3) * 4", "20"),
        ("1 / 0", "Error: division by zero"),
        ("__import__('os')", "Error: cannot evaluate"),
        ("2 ** 8", "Error: cannot evaluate"),
    ],
)
def test_calculator(expr: str, out: str) -> None:
    assert calculate(expr).startswith(out)


def test_exact_match_evaluator() -> None:
    assert normalize_answer(" 1,200.0 ") == "1200"
    assert normalize_answer("12") != normalize_answer("120")
    task = generate_tasks(1, seed=9)[0]
    env = ArithmeticEnv(task)
    env.reset()
    assert env.step(Action("a", "x", "calculator", {"expression": "2 + 2"})) == ("calculator", "4")
    assert env.step(Action("a", "just talking")) is None
    assert not env.done
    env.step(Action("a", "done", "final_answer", {"answer": f"{task.answer}.0"}))
    assert env.done and env.evaluate().success
    env.reset()
    env.step(Action("a", "done", "final_answer", {"answer": str(task.answer + 1)}))
    assert not env.evaluate().success


def test_registry_rejects_unknown_benchmark() -> None:
    with pytest.raises(WhowhenError, match="unknown benchmark"):
        get_benchmark("chess")
