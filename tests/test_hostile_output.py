"""Data that attacks whoever reads what whowhen writes: terminal escape sequences in step
text, tool names or file names (they must reach the terminal as visible text, never as
commands to it), spreadsheet formulas in review sheets (a cell is text, never a formula),
and run ids or split names that climb out of the export folder."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import polars as pl
import pytest

from whowhen.cli import main
from whowhen.imports.common import base_run, label_row, step_row
from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, write_table

ESCAPES = {
    "title": "\x1b]0;pwned\x07",  # sets the window title
    "clear": "\x1b[2J",  # clears the screen
    "clipboard": "\x1b]52;c;cm0gLXJmIH4K\x07",  # writes the clipboard (OSC 52)
    "c1": "\x9b31m",  # an 8-bit CSI some terminals obey
    "overwrite": "all good\rEVIL",  # a carriage return hides what came before
}
RAW = ("\x1b", "\x07", "\x9b", "\r")


def _assert_inert(text: str) -> None:
    """No control character a terminal acts on, except newlines and tabs."""
    bad = sorted({repr(c) for c in text if c in RAW or (ord(c) < 32 and c not in "\n\t")})
    assert not bad, f"raw control characters reach the terminal: {bad}"


def _logs(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _record(run_id: str, contents: list[str], agent: str = "planner", **extra: object) -> dict:
    history = [{"name": agent, "content": c} for c in contents]
    return {
        "run_id": run_id,
        "history": history,
        "mistake_agent": agent,
        "mistake_step": 0,
        **extra,
    }


@pytest.fixture
def hostile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """An imported dataset whose steps, question and answers carry escape sequences."""
    contents = [f"{name}: {seq}" for name, seq in ESCAPES.items()] + ["line one\nline two\tcol"]
    record = _record("r1", contents, question="ask \x1b[2J", ground_truth="4\x1b]0;gold\x07")
    _logs(tmp_path / "logs.jsonl", [record])
    out = tmp_path / "ds"
    assert main(["import", "jsonl", str(tmp_path / "logs.jsonl"), "-o", str(out)]) == 0
    capsys.readouterr()
    return out


def test_show_prints_escape_sequences_as_visible_text(
    hostile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = pl.read_parquet(hostile / "runs.parquet")["run_id"][0]
    assert main(["show", run_id, "--data", str(hostile)]) == 0
    out = capsys.readouterr().out
    _assert_inert(out)
    assert "\\x1b]0;pwned\\x07" in out and "\\x1b[2J" in out and "\\x9b31m" in out
    assert "line one\n" in out and "line two" in out  # ordinary text stays readable


def test_skipped_and_error_lines_quote_file_names_inertly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "raw"
    folder.mkdir()
    (folder / "\x1b]0;pwned\x07.json").write_text("{oops")
    (folder / "1.json").write_text(
        json.dumps(
            {
                "question": "q",
                "history": [{"name": "a\x1b[2J", "content": "x", "role": "assistant"}],
                "mistake_agent": "b",
                "mistake_step": "0",
            }
        )
    )
    code = main(["import", "who-and-when", str(folder), "-o", str(tmp_path / "o")])
    captured = capsys.readouterr()
    assert code == 0
    _assert_inert(captured.out + captured.err)
    assert "\\x1b]0;pwned\\x07.json: bad JSON" in captured.err
    code = main(["import", "jsonl", str(tmp_path / "no\x1b[2Jfile.jsonl"), "-o", "x"])
    captured = capsys.readouterr()
    assert code == 1
    _assert_inert(captured.err)
    assert "no\\x1b[2Jfile.jsonl" in captured.err


def test_score_tables_print_names_from_data_inertly(
    hostile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = pl.read_parquet(hostile / "runs.parquet")["run_id"][0]
    prediction = {
        "run_id": run_id,
        "attributor": "evil\x1b]0;pwned\x07",
        "agent": "planner",
        "step": 0,
        "parse_ok": True,
    }
    write_table([prediction], PREDICTIONS, hostile / "predictions" / "evil.parquet")
    assert main(["score", str(hostile)]) == 0
    captured = capsys.readouterr()
    _assert_inert(captured.out + captured.err)
    assert "evil\\x1b]0;pwned\\x07" in captured.out


# --- review sheets: a cell is text, never a formula -------------------------------------

FORMULAS = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\tTAB", "\rCR", "'q"]


def _dataset(folder: Path, rows: list[dict]) -> Path:
    """A labelled dataset folder whose runs carry `rows`' run id, question, agent, mode
    and split."""
    runs, steps, labels = [], [], []
    for k, row in enumerate(rows):
        run_id = row.get("run_id", f"run{k}")
        agent = row.get("agent", "a")
        runs.append(
            base_run(run_id, "bench", f"t{k}", "sys", "single", question=row.get("question"))
        )
        steps.append(step_row(run_id, 0, agent, "hi"))
        labels.append(
            label_row(run_id, agent, 0, None, mode=row.get("mode"), split=row.get("split", "test"))
        )
    write_table(runs, RUNS, folder / "runs.parquet")
    write_table(steps, STEPS, folder / "steps.parquet")
    write_table(labels, LABELS, folder / "labels.parquet")
    return folder


def test_review_sheet_cells_never_start_a_formula_and_read_back_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _dataset(
        tmp_path / "ds",
        [{"question": f, "agent": f"{f}agent", "mode": f"{f}mode"} for f in FORMULAS],
    )
    sheet = tmp_path / "sheet.csv"
    assert main(["review", "export", str(data), "-o", str(sheet), "-n", "50"]) == 0
    with sheet.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(FORMULAS)
    for row in rows:
        for column, cell in row.items():
            assert not cell or cell[0] not in "=+-@\t\r", (column, cell)
    for row in rows:
        row["verdict"] = "yes"
    with sheet.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    capsys.readouterr()
    assert main(["review", "import", str(sheet)]) == 0
    agreement = json.loads(capsys.readouterr().out)
    assert sorted(agreement["by_mode"]) == sorted(f"{f}mode" for f in FORMULAS)


def test_a_filled_unlabelled_sheet_reads_agent_names_kept_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reviewer enters an agent called `-planner` as text (`'-planner`, as the sheet itself
    writes such a cell): the label names `-planner`."""
    names = [f"{f}agent" for f in FORMULAS if not f[0].isspace()]  # labels strip names
    records = [_record(f"r{k}", ["hi", "there"], agent=name) for k, name in enumerate(names)]
    logs = _logs(tmp_path / "logs.jsonl", records)
    data = tmp_path / "ds"
    assert main(["import", "jsonl", str(logs), "-o", str(data)]) == 0
    labels = pl.read_parquet(data / "labels.parquet")
    labels.clear().write_parquet(data / "labels.parquet")
    sheet = tmp_path / "sheet.csv"
    assert main(["review", "export", str(data), "-o", str(sheet), "--unlabelled"]) == 0
    with sheet.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    gold = dict(labels.select("run_id", "decisive_agent").iter_rows())
    for row in rows:
        name = gold[row["item_id"]]
        row |= {"labelled_agent": f"'{name}", "labelled_step": "1"}
    with sheet.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    from whowhen.imports.generic import import_generic
    from whowhen.imports.labels import attach_labels

    result = import_generic(logs, "jsonl", "trajectories", None, "imported")
    result.frames["labels"] = []
    assert attach_labels(result, sheet) == len(names), result.errors
    got = dict(result.tables()["labels"].select("run_id", "decisive_agent").iter_rows())
    assert got == gold


# --- export: every file name derived from data stays inside -o --------------------------


def test_export_keeps_every_file_inside_the_output_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = ["../../escaped", str(tmp_path / "absolute"), "..", "a/b", "ok_id"]
    data = _dataset(tmp_path / "work" / "ds", [{"run_id": i} for i in ids])
    out = tmp_path / "work" / "deep" / "out"
    assert main(["export", str(data), "-o", str(out)]) == 0
    written = sorted(p for p in tmp_path.rglob("*.json"))
    assert written and all(p.is_relative_to(out) for p in written), written
    assert len(written) == len(ids)
    assert (out / "ok_id.json").is_file()  # a plain id keeps its name
    back = {json.loads(p.read_text())["question_ID"] for p in written}
    assert back == {f"t{k}" for k in range(len(ids))}
