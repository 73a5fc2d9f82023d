"""Import formats are one registry (`whowhen.imports.formats.FORMATS`): a format registered
from outside the built-in readers imports through the pipeline's stage and through
`whowhen import`, whose subcommands, flags and help come from the registry."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from whowhen.cli import main
from whowhen.errors import WhowhenError
from whowhen.imports.common import ImportResult, base_run, step_row
from whowhen.imports.formats import FORMATS, ImportFormat
from whowhen.imports.stage import import_dataset

BUILT_IN = ("who_and_when", "jsonl", "parquet", "otel", "inspect", "gateway")
NAME = "plain_lines"
SEEN: list[dict[str, Any]] = []


def _read_lines(path: Path, options: dict[str, Any], root: Path | None) -> ImportResult:
    """A plug-in's reader: one run per file, a step per `agent: text` line."""
    SEEN.append(options)
    result = ImportResult()
    lines = [line.split(":", 1) for line in Path(path).read_text().splitlines()]
    run = base_run(Path(path).stem, NAME, "t", "lines", "multi", subset=options.get("subset"))
    steps = [step_row(run["run_id"], i, a.strip(), t.strip()) for i, (a, t) in enumerate(lines)]
    result.add({**run, "n_steps": len(steps)}, steps, None, str(path), "1")
    return result


@pytest.fixture
def plug_in(tmp_path: Path) -> Iterator[Path]:
    """`plain_lines` registered for the test (taking `subset`), and a file of its format."""
    FORMATS.add(NAME, ImportFormat(NAME, _read_lines, "plain text, one line per step", ("subset",)))
    SEEN.clear()
    (tmp_path / "run1.txt").write_text("planner: look it up\ncoder: 42\n")
    try:
        yield tmp_path / "run1.txt"
    finally:
        FORMATS.remove(NAME)


def test_the_built_in_formats_in_the_schemas_order_whichever_reader_loads_first() -> None:
    code = (
        "import whowhen.imports.inspect_log, whowhen.imports.otel\n"
        "from whowhen.imports.formats import FORMATS\n"
        "print(','.join(FORMATS.names()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [",".join(BUILT_IN)]
    assert FORMATS.names()[: len(BUILT_IN)] == BUILT_IN


def test_the_stage_reads_a_registered_format_with_the_entry_as_the_schema_fills_it(
    plug_in: Path,
) -> None:
    spec = {"name": "mine", "format": NAME, "path": plug_in.name, "subset": "Hand-Crafted"}
    tables = import_dataset(spec, root=plug_in.parent).tables()
    assert tables["steps"]["actor"].to_list() == ["planner", "coder"]
    assert tables["runs"]["subset"].to_list() == ["Hand-Crafted"]
    assert SEEN[0]["layout"] == "trajectories" and SEEN[0]["optional"] is False  # defaults
    assert spec == {"name": "mine", "format": NAME, "path": plug_in.name, "subset": "Hand-Crafted"}


def test_the_command_line_runs_a_registered_format(plug_in: Path, capsys) -> None:
    out = plug_in.parent / "out"
    argv = [
        "import",
        NAME.replace("_", "-"),
        str(plug_in),
        "-o",
        str(out),
        "--subset",
        "Hand-Crafted",
    ]
    assert main(argv) == 0
    assert "imported 1 runs (2 steps)" in capsys.readouterr().out
    runs = pl.read_parquet(out / "runs.parquet")
    assert runs["subset"].to_list() == ["Hand-Crafted"]
    assert json.loads((out / "manifest.json").read_text())["format"] == NAME
    assert SEEN[0]["subset"] == "Hand-Crafted" and SEEN[0]["name"] == "imported"


def test_the_command_lines_help_lists_a_registered_format(plug_in: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["import", "--help"])
    assert exit_.value.code == 0
    listing = capsys.readouterr().out
    assert "plain text, one line per step" in listing
    assert all(name in listing for name in (*BUILT_IN, NAME))
    with pytest.raises(SystemExit):
        main(["import", NAME, "--help"])
    own = capsys.readouterr().out
    assert "--subset" in own and "--layout" not in own and "--tool-speakers" not in own


@pytest.mark.parametrize(
    ("flag", "value", "where"),
    [
        ("--tool-speakers", "A", "who_and_when only"),
        ("--layout", "steps", "jsonl, parquet only"),
        ("--mapping", "m.yaml", "jsonl, parquet only"),
        ("--outcomes", "o.json", "otel, gateway only"),
    ],
)
def test_another_formats_flag_is_one_line_naming_where_it_applies(
    plug_in: Path, capsys, flag: str, value: str, where: str
) -> None:
    argv = ["import", NAME, str(plug_in), "-o", str(plug_in.parent / "o"), flag, value]
    assert main(argv) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f"error: {flag} applies to {where}, not {NAME}"]
    assert not SEEN  # nothing was read


def test_an_unknown_format_is_one_line_naming_the_known_ones(plug_in: Path, capsys) -> None:
    with pytest.raises(WhowhenError) as exc:
        import_dataset({"name": "x", "format": "nope", "path": "p"})
    assert str(exc.value).splitlines() == [
        f"field 'imports.format': unknown import format 'nope'; known: "
        f"{', '.join((*BUILT_IN, NAME))}"
    ]
    with pytest.raises(SystemExit) as exit_:
        main(["import", "nope", "p", "-o", "x"])
    assert exit_.value.code == 2
    [line] = [line for line in capsys.readouterr().err.splitlines() if "nope" in line]
    assert all(repr(name) in line for name in (*BUILT_IN, NAME))


def test_a_removed_format_is_gone_from_the_command_line(plug_in: Path, capsys) -> None:
    FORMATS.remove(NAME)
    with pytest.raises(SystemExit):
        main(["import", "--help"])
    assert NAME not in capsys.readouterr().out
    assert NAME not in FORMATS.names()


def test_a_plug_in_that_fails_to_load_stops_import_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys
) -> None:
    def broken() -> Iterator[tuple[str, ImportFormat]]:
        raise WhowhenError("import format plug-in 'bad' (badfmt) failed to load: boom")

    monkeypatch.setattr(FORMATS, "items", broken)
    assert main(["import", "jsonl", "logs.jsonl", "-o", str(tmp_path / "o")]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: import format plug-in 'bad' (badfmt) failed to load: boom"
    ]
    assert main(["score", str(tmp_path / "none")]) == 1  # other commands still parse and run
    assert "dataset folder not found" in capsys.readouterr().err
