"""Inspect AI logs import: the fixtures are real logs, written by `inspect_ai.eval` running
tiny tasks on its mock model (scripted outputs, a real `add` tool, no network, no key),
in both log formats. The imported steps must be what the model and the tool did, in
order, spoken by the agent that did it (a `handoff()` team too), and success must come
from the scorer. Unreadable logs and unconvertible samples are one line each."""

from __future__ import annotations

import json
import logging
import re
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.agent import handoff, react
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate, system_message, use_tools
from inspect_ai.tool import tool

from whowhen.cli import main
from whowhen.imports.inspect_log import import_inspect, is_success, score_value

MOCK = "mockllm/model"
QUESTIONS = {"s1": ("What is 2 + 3?", "5"), "s2": ("What is 4 + 4?", "8")}
SLIP = {"s2": 1}  # the mock model adds one too many to s2's second number: a failure


@tool
def add() -> Callable[..., Any]:
    async def execute(x: int, y: int) -> int:
        """Add two numbers.

        Args:
            x: First number.
            y: Second number.
        """
        return x + y

    return execute


def _used(output: ModelOutput) -> ModelOutput:
    """Usage given, so the mock model never counts tokens (tiktoken would download)."""
    output.usage = ModelUsage(input_tokens=7, output_tokens=3, total_tokens=10)
    return output


def _adder(messages: list[Any], tools: list[Any], *_: Any) -> ModelOutput:
    """The scripted single agent: call add on the question's numbers, then answer with
    the tool's result. Chosen from the input, so samples may run in any order."""
    result = next((m for m in messages if m.role == "tool"), None)
    if result is not None:
        return _used(ModelOutput.from_content(MOCK, f"The answer is {result.text}."))
    question = next(m.text for m in messages if m.role == "user")
    x, y = (int(n) for n in re.findall(r"\d+", question))
    y += 1 if question == QUESTIONS["s2"][0] else 0
    return _used(ModelOutput.for_tool_call(MOCK, "add", {"x": x, "y": y}, content="Adding."))


def _adder_task() -> Task:
    return Task(
        dataset=[Sample(input=q, target=t, id=i) for i, (q, t) in QUESTIONS.items()],
        solver=[system_message("You add numbers."), use_tools(add()), generate()],
        scorer=match(location="any"),
        name="adder",
    )


def _team_task() -> Task:
    """A supervisor that hands off to a calculator agent (Inspect's `handoff`)."""
    calculator = react(name="calculator", description="Adds numbers.", tools=[add()])
    supervisor = react(name="supervisor", description="Plans.", tools=[handoff(calculator)])
    sample = Sample(input="What is 2 + 3?", target="5", id="team-1")
    return Task(dataset=[sample], solver=supervisor, scorer=match(), name="team")


TEAM_OUTPUTS = [
    ("transfer_to_calculator", {}, "Handing to the calculator."),
    ("add", {"x": 2, "y": 3}, "Adding."),
    ("submit", {"answer": "5"}, ""),
    ("submit", {"answer": "6"}, "Done."),  # the supervisor misreports: the failure
]


def _run(task: Task, outputs: Any, log_dir: Path, **options: Any) -> Path:
    model = get_model(MOCK, custom_outputs=outputs)
    [log] = inspect_eval(task, model=model, log_dir=str(log_dir), display="none", **options)
    assert log.status == "success", log.error
    return Path(log.location)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three real logs: the adder as `.eval`, as `.json` over two epochs, and the team."""
    root = tmp_path_factory.mktemp("inspect")
    logger = logging.getLogger()
    handlers, level = logger.handlers[:], logger.level
    # Inspect adds a root log handler and warning filters: undone, so that the test files
    # that run next in this worker see the logging they expect
    with pytest.MonkeyPatch.context() as env, warnings.catch_warnings():
        env.setenv("INSPECT_DISPLAY", "none")
        for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "INSPECT_EVAL_MODEL"):
            env.delenv(key, raising=False)
        team = [
            _used(ModelOutput.for_tool_call(MOCK, name, args, content=text))
            for name, args, text in TEAM_OUTPUTS
        ]
        try:
            return {
                "eval": _run(_adder_task(), _adder, root / "eval"),
                "json": _run(_adder_task(), _adder, root / "json", log_format="json", epochs=2),
                "team": _run(_team_task(), team, root / "team"),
            }
        finally:
            logger.handlers[:] = handlers
            logger.setLevel(level)


def _steps(steps: pl.DataFrame, run_id: str) -> list[tuple]:
    cols = ("actor", "kind", "content", "tool", "tool_args")
    return steps.filter(pl.col("run_id") == run_id).sort("step").select(cols).rows()


def _expected(sample: str) -> list[tuple]:
    question, _ = QUESTIONS[sample]
    x, y = (int(n) for n in re.findall(r"\d+", question))
    y += SLIP.get(sample, 0)
    args = json.dumps({"x": x, "y": y}, separators=(",", ":"))
    return [
        ("user", "message", question, None, None),  # the system message is no step
        ("assistant", "action", "Adding.", "add", args),
        ("add", "observation", str(x + y), None, None),
        ("assistant", "message", f"The answer is {x + y}.", None, None),
    ]


# --- 1. steps and runs are what the model and the tool did ----------------------------


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_steps_are_what_the_model_and_tool_did(logs: dict[str, Path], fmt: str) -> None:
    result = import_inspect(logs[fmt])
    assert result.errors == []
    tables = result.tables()
    runs = tables["runs"].sort("task_id", "run_id")
    assert runs["n_steps"].to_list() == [4] * runs.height
    for run in runs.iter_rows(named=True):
        assert _steps(tables["steps"], run["run_id"]) == _expected(run["task_id"])
    assert tables["labels"].height == 0  # runs come unlabelled: attribute them


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_runs_carry_task_answer_and_success_from_the_score(logs: dict[str, Path], fmt: str) -> None:
    runs = import_inspect(logs[fmt]).tables()["runs"]
    epochs = 2 if fmt == "json" else 1
    assert runs.height == 2 * epochs  # one run per sample and epoch
    assert runs["run_id"].n_unique() == runs.height
    for run in runs.iter_rows(named=True):
        question, target = QUESTIONS[run["task_id"]]
        slipped = run["task_id"] in SLIP
        meta = json.loads(run["meta"])
        assert (run["benchmark"], run["subset"], run["system"]) == ("inspect", "adder", "inspect")
        assert (run["question"], run["gold_answer"], run["topology"]) == (
            question,
            target,
            "single",
        )
        assert run["success"] is (not slipped)
        assert meta["scores"] == {"match": "I" if slipped else "C"}
        assert meta["epoch"] in range(1, epochs + 1)
        assert run["final_answer"] == f"The answer is {int(target) + slipped}."
        assert (run["tokens_in"], run["tokens_out"], run["end_reason"]) == (14, 6, "done")


def test_a_handoff_team_names_each_agent(logs: dict[str, Path]) -> None:
    """The calculator's messages reach the supervisor's conversation rewritten (text
    prefixed, tool calls as text, the tool's result as a user message); the import reads
    them back from the events as the calculator did them."""
    result = import_inspect(logs["team"])
    assert result.errors == []
    tables = result.tables()
    [run] = tables["runs"].iter_rows(named=True)
    assert (run["system"], run["topology"], run["success"]) == ("supervisor", "multi", False)
    assert _steps(tables["steps"], run["run_id"]) == [
        ("user", "message", "What is 2 + 3?", None, None),
        ("supervisor", "action", "Handing to the calculator.", "transfer_to_calculator", "{}"),
        (
            "transfer_to_calculator",
            "observation",
            "Successfully transferred to calculator.",
            None,
            None,
        ),
        ("calculator", "action", "Adding.", "add", '{"x":2,"y":3}'),
        ("add", "observation", "5", None, None),
        ("calculator", "action", "", "submit", '{"answer":"5"}'),
        ("user", "message", "The calculator agent has completed its work.", None, None),
        ("supervisor", "action", "Done.", "submit", '{"answer":"6"}'),
    ]


def test_a_folder_imports_every_log_in_it(logs: dict[str, Path], tmp_path: Path) -> None:
    for name, log in logs.items():
        shutil.copy(log, tmp_path / f"{name}{log.suffix}")
    result = import_inspect(tmp_path)
    assert result.errors == []
    assert result.n_runs == 2 + 4 + 1


@pytest.mark.parametrize(
    ("value", "success", "score"),
    [
        *[("C", True, 1.0), ("correct", True, 1.0), (True, True, 1.0), (1, True, 1.0)],
        *[(1.0, True, 1.0), ("I", False, 0.0), ("P", False, 0.5), (0.25, False, 0.25)],
        *[(None, False, 0.0), ({"a": "C"}, False, 0.0)],  # no score; a dict of values
    ],
)
def test_success_is_the_first_scorers_correct_value(value: Any, success: bool, score: float):
    assert (is_success(value), score_value(value)) == (success, score)


# --- 2. bad input: one line per file or sample, never a traceback ----------------------


def _run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err.splitlines()


def test_unreadable_logs_are_one_skipped_line_each(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    good = logs["eval"].read_bytes()
    shutil.copy(logs["eval"], folder / "a_good.eval")
    (folder / "b_truncated.eval").write_bytes(good[: len(good) // 2])
    (folder / "c_notes.json").write_text('{"not": "a log"}')
    (folder / "d_garbage.eval").write_bytes(b"\x00not a zip")
    (folder / "logs.json").write_text("{}")  # Inspect's listing: not a log, not reported
    code, out, err = _run_cli(["import", "inspect", str(folder), "-o", str(tmp_path / "o")], capsys)
    assert code == 0
    assert "imported 2 runs (8 steps), skipped 3" in out
    assert len(err) == 3, err
    for line, name in zip(err, ["b_truncated.eval", "c_notes.json", "d_garbage.eval"], strict=True):
        assert line.startswith(f"skipped: {folder / name}: not a readable Inspect log (")
    assert json.loads((tmp_path / "o" / "manifest.json").read_text())["skipped"] == 3


def test_a_sample_that_cannot_convert_is_one_line_and_the_others_import(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    log = read_eval_log(str(logs["eval"]))
    assert log.samples is not None
    bad = next(s for s in log.samples if s.id == "s2")
    bad.messages = [m for m in bad.messages if m.role == "system"]  # nothing to import
    write_eval_log(log, str(tmp_path / "edited.eval"))
    result = import_inspect(tmp_path / "edited.eval")
    assert result.n_runs == 1
    assert result.errors == [
        f"{tmp_path / 'edited.eval'}: record sample s2 epoch 1: "
        "field 'messages': sample has no messages"
    ]


def test_nothing_to_import_is_an_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run_cli(["import", "inspect", str(tmp_path / "nope.eval"), "-o", "x"], capsys)
    assert (code, err) == (1, [f"error: {tmp_path / 'nope.eval'}: not found"])


# --- 3. the import works like any dataset -----------------------------------------------


def test_attribute_and_show_work_on_the_import(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "team"
    code, text, err = _run_cli(["import", "inspect", str(logs["team"]), "-o", str(out)], capsys)
    assert (code, err) == (0, [])
    assert "imported 1 runs (8 steps), skipped 0" in text
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["format"], manifest["subsets"]) == ("inspect", {"team": 1})
    code, _, err = _run_cli(["attribute", str(out), "--attributor", "last_agent_step"], capsys)
    assert code == 0, err
    predictions = pl.concat([pl.read_parquet(p) for p in (out / "predictions").glob("*")])
    [row] = predictions.iter_rows(named=True)
    assert (row["agent"], row["step"]) == ("supervisor", 7)  # the last agent step
    run_id = row["run_id"]
    code, text, err = _run_cli(["show", run_id[:8], "--data", str(out)], capsys)
    assert code == 0, err
    assert "system=supervisor" in text
    assert '[  3] calculator (action)\n      Adding.\n      -> add({"x":2,"y":3})' in text
    assert "[  4] add (observation)\n      5" in text
    assert "[  7] supervisor (action)  <== last_agent_step" in text


def test_without_events_a_handoff_agent_is_named_from_its_prefix(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    """A log whose events were dropped still holds the `[calculator] ` prefix the handoff
    put on its agent's messages (the tool calls and results stay as the filter made them)."""
    log = read_eval_log(str(logs["team"]))
    assert log.samples is not None
    log.samples[0].events = []
    write_eval_log(log, str(tmp_path / "no_events.eval"))
    result = import_inspect(tmp_path / "no_events.eval")
    assert result.errors == []
    steps = result.tables()["steps"].sort("step")
    agents = steps.filter(pl.col("role") == "assistant")
    assert agents["actor"].to_list() == ["assistant", "calculator", "calculator", "assistant"]
    assert agents["content"][1] == "Adding.\nadd(x=2, y=3)"


def test_a_config_import_of_inspect_logs(logs: dict[str, Path]) -> None:
    """`imports: [{format: inspect, path: ...}]`: the pipeline's import stage reads the
    same runs as the CLI."""
    from whowhen.imports.inspect_log import import_inspect
    from whowhen.imports.stage import import_dataset

    spec = {"name": "evals", "format": "inspect", "path": str(logs["eval"])}
    staged = import_dataset(spec).tables()
    direct = import_inspect(logs["eval"]).tables()
    assert staged["steps"].equals(direct["steps"]) and staged["runs"].height == 2
