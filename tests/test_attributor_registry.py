"""Adding an attributor is one module plus its registration: an attributor registered in
process (as a plug-in's module does on import) runs through the factory, the feedback
stage's sources and `whowhen attribute`, is listed by the command line, pooled and placed
by the report from its entry; an unknown name is one line naming the known ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from whowhen.analysis.attributor_info import attributor_protocol
from whowhen.analysis.report import built_dataset_html, learned_html
from whowhen.attribution.baselines import agent_steps, predict_each
from whowhen.attribution.factory import make_attributor
from whowhen.attribution.kinds import (
    ATTRIBUTORS,
    PROTOCOLS,
    Attributor,
    AttributorContext,
    AttributorKind,
)
from whowhen.cli import commands, main
from whowhen.config import config_schema, validate_config
from whowhen.errors import WhowhenError
from whowhen.feedback.stage import attributors as feedback_attributors
from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, read_table, write_table

from .tracer_data import synthetic_runs

NAME = "echo_first"
PARAMS: dict[str, Any] = {"attribution": {"seed": 3, "attributors": [NAME]}}


@pytest.fixture
def plugin() -> Iterator[list[AttributorContext]]:
    """Register `echo_first` (the first agent step, blamed by a made-up step_by_step model
    family) for one test, and the contexts its factory was given."""
    ATTRIBUTORS.names()  # the built-ins first, as when a plug-in's entry point loads
    seen: list[AttributorContext] = []

    @ATTRIBUTORS.register(NAME, protocol="step_by_step", family="echo", section="learned")
    def make(ctx: AttributorContext) -> Attributor:
        seen.append(ctx)

        def pick(frame: pl.DataFrame, _: pl.DataFrame) -> tuple[str, int, str] | None:
            return None if frame.is_empty() else (frame["actor"][0], frame["step"][0], "echo")

        return lambda runs, steps: predict_each(NAME, runs, steps, agent_steps(steps), pick)

    yield seen
    ATTRIBUTORS.remove(NAME)
    assert NAME not in ATTRIBUTORS


@pytest.fixture(scope="module")
def data() -> dict[str, pl.DataFrame]:
    return synthetic_runs(8, seed=2)


def _folder(tmp_path: Path, tables: dict[str, pl.DataFrame]) -> Path:
    for name, spec in (("runs", RUNS), ("steps", STEPS), ("labels", LABELS)):
        write_table(tables[name], spec, tmp_path / f"{name}.parquet")
    return tmp_path


def test_the_built_ins_come_first_in_their_modules_order_and_fill_the_schema() -> None:
    builtins = (
        *("random", "first_agent_step", "last_agent_step"),
        *("majority_agent", "position_prior", "length_prior"),
        *("error_signal", "counterfactual_oracle", "tracer_lite"),
    )
    assert ATTRIBUTORS.names()[: len(builtins)] == builtins
    protocols = ("all_at_once", "step_by_step", "binary_search", "hybrid")
    assert PROTOCOLS.names()[: len(protocols)] == protocols
    props = config_schema()["properties"]["attribution"]["properties"]
    assert tuple(props["attributors"]["items"]["enum"]) == ATTRIBUTORS.names()
    assert tuple(props["llm"]["items"]["properties"]["protocol"]["enum"]) == PROTOCOLS.names()


def test_a_registered_attributor_runs_through_the_factory(plugin, data) -> None:
    preds = make_attributor(NAME, PARAMS, None, data["labels"])(data["runs"], data["steps"])
    assert preds.height == data["runs"].height and preds["parse_ok"].all()
    assert set(preds["attributor"]) == {NAME} and set(preds["reason"]) == {"echo"}
    assert plugin[0].seed == 3 and plugin[0].labels is data["labels"]


def test_a_registered_attributor_is_a_feedback_source(plugin, data) -> None:
    built = feedback_attributors(["none", NAME], "react", PARAMS, None)
    assert set(built) == {NAME}
    assert built[NAME](data["runs"], data["steps"])["parse_ok"].all()


def test_the_command_line_lists_and_runs_a_registered_attributor(
    plugin, data, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert NAME in commands.attributor_names()
    with pytest.raises(SystemExit):
        main(["attribute", "--help"])
    assert NAME in capsys.readouterr().out
    folder = _folder(tmp_path, data)
    assert main(["attribute", str(folder), "--attributor", NAME, "--seed", "5"]) == 0
    preds = read_table(folder / "predictions" / f"{NAME}.parquet", PREDICTIONS)
    assert preds.height == data["runs"].height and plugin[0].seed == 5
    # the replay oracle needs the pipeline's environments: not listed, and refused in one line
    assert not any(n.startswith("counterfactual_oracle") for n in commands.attributor_names())
    assert main(["attribute", str(folder), "--attributor", "counterfactual_oracle"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "snakemake" in err


def test_an_unknown_name_is_one_line_naming_the_known_ones(
    plugin, data, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(WhowhenError) as err:
        make_attributor("psychic", PARAMS)
    line = str(err.value)
    assert "\n" not in line and "unknown attributor 'psychic'" in line
    assert line.endswith(", ".join(ATTRIBUTORS.names())) and NAME in line
    assert err.value.field == "attribution.attributors"
    folder = _folder(tmp_path, data)
    assert main(["attribute", str(folder), "--attributor", "psychic"]) == 1
    out = capsys.readouterr().err.strip()
    assert len(out.splitlines()) == 1 and NAME in out and "all_at_once" in out


def test_the_report_pools_and_places_a_registered_attributor_by_its_entry(plugin) -> None:
    assert attributor_protocol(NAME) == {"protocol": "step_by_step", "family": "echo"}
    assert attributor_protocol("tracer_lite") == {"protocol": "trained", "family": "tracer"}
    rows = [NAME, "random", "tracer_lite"]
    acc = pl.DataFrame(
        {"attributor": rows, "dataset": "all", "split": "test", "n": 4}
    ).with_columns(
        *(pl.lit(0.5).alias(c) for c in ("agent_acc", "step_acc", "step_acc_pm1", "step_acc_pmk"))
    )
    learned = "".join(learned_html(acc, []))
    assert NAME in learned and "tracer_lite" in learned and "random" not in learned
    empty = pl.DataFrame({"a": [1]})
    audit = "".join(built_dataset_html(empty, empty, empty, acc.with_columns(split=pl.lit("all"))))
    assert "random" in audit and NAME not in audit


def test_a_source_fitted_on_the_train_split_is_refused_for_feedback(tiny_config) -> None:
    kind = AttributorKind(
        "train_prior", lambda ctx: lambda r, s: r, "baseline", "none", fitted_on_train=True
    )
    ATTRIBUTORS.add("train_prior", kind)
    try:
        for source in ("majority_agent", "train_prior"):
            tiny_config["feedback"]["sources"] = ["none", source]
            with pytest.raises(WhowhenError, match="fitted on the labelled") as err:
                validate_config(tiny_config)
            assert err.value.field == "feedback.sources.1"
    finally:
        ATTRIBUTORS.remove("train_prior")


def test_a_kind_names_a_report_section_that_exists() -> None:
    with pytest.raises(WhowhenError, match="report section 'appendix'"):
        AttributorKind("x", lambda ctx: lambda r, s: r, "p", "f", section="appendix")
