"""Bad input the importers must survive: a mapping file of the wrong shape or broken YAML
(one error line naming the file and field, no traceback), Who&When folders holding names
no number parser expects and entries that are not regular files (a FIFO would hang the
import), and megabyte values (an error line quotes a short preview, not the value)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from whowhen.cli import main
from whowhen.config import config_schema
from whowhen.errors import WhowhenError, preview
from whowhen.imports.generic import MAPPABLE, import_generic, load_mapping
from whowhen.imports.who_and_when import _key, import_who_and_when

from .wnw_files import ag_record, write_files

BIG = 10_000_000
"""A 10 MB value: the size of bad value that once made a 10 MB error line."""


def _finishes(call: Callable[[], Any], fifos: list[Path], timeout: float = 20.0) -> Any:
    """`call()`'s value, run in a thread; fails the test if it is still running after
    `timeout` s (first opening each FIFO's write end, so a reader stuck on one gets EOF
    and the thread ends)."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = call()
        except BaseException as exc:  # re-raised in the test's thread
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):  # no reader on it (yet)
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(timeout)
        pytest.fail(f"still running after {timeout} s: blocked reading a FIFO?")
    if "error" in out:
        raise out["error"]
    return out["value"]


def _run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    """Exit code, stdout and the stderr lines of one `whowhen` command run in-process."""
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err.splitlines()


# --- the mapping file of `whowhen import jsonl --mapping` ---------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fields: {run_id: 5}\n", "field 'fields.run_id': expected a source field name"),
        ("fields: [a, b]\n", "field 'fields': expected a mapping of column -> source field"),
        ("run_id: [id]\n", "field 'run_id': expected a source field name (string), got ['id']"),
        ("fields: {conent: msg}\n", "field 'fields.conent': unknown column (known: history"),
        ("fields:\n  run_id: id\n bad: [\n", "not valid YAML (line 3, column 2: "),
        ("fields: {run_id: 'id}\n", "not valid YAML (line 2, column 1: "),
        ("- a\n- b\n", "mapping must be a YAML mapping, got list"),
        (b"fields: {run_id: \xff}\n", "not UTF-8 text (byte 17)"),
    ],
    ids=["number", "list", "flat-list", "typo", "bad-indent", "open-quote", "top-list", "bytes"],
)
def test_bad_mapping_file_is_one_line_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | bytes, expected: str
) -> None:
    (tmp_path / "logs.jsonl").write_text(json.dumps(ag_record() | {"run_id": "r1"}) + "\n")
    mapping = tmp_path / "mapping.yaml"
    mapping.write_bytes(text if isinstance(text, bytes) else text.encode())
    logs, out = str(tmp_path / "logs.jsonl"), str(tmp_path / "out")
    code, _, err = _run_cli(["import", "jsonl", logs, "--mapping", str(mapping), "-o", out], capsys)
    assert code == 1
    assert len(err) == 1, err
    assert err[0].startswith(f"error: {mapping}: ") and expected in err[0], err[0]
    assert "Traceback" not in err[0] and not (tmp_path / "out").exists()


def test_each_bad_mapping_field_gets_its_own_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text("fields:\n  run_id: 5\n  content: ok\n  kind: null\n  typo: x\n")
    code, _, err = _run_cli(
        ["import", "jsonl", str(tmp_path / "none.jsonl"), "--mapping", str(mapping), "-o", "x"],
        capsys,
    )
    assert code == 1
    assert err == [
        f"error: {mapping}: field 'fields.run_id': expected a source field name (string), got 5",
        f"error: {mapping}: field 'fields.kind': expected a source field name (string), got None",
        f"error: {mapping}: field 'fields.typo': unknown column (known: {', '.join(MAPPABLE)})",
    ]


def test_good_mapping_loads_flat_or_under_fields(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("fields: {run_id: id, decisive_step: blame.step}\n")
    (tmp_path / "b.yaml").write_text("run_id: id\n")
    (tmp_path / "c.yaml").write_text("fields:\n")
    assert load_mapping(tmp_path / "a.yaml") == {"run_id": "id", "decisive_step": "blame.step"}
    assert load_mapping(tmp_path / "b.yaml") == {"run_id": "id"}
    assert load_mapping(tmp_path / "c.yaml") == {}


def test_mappable_columns_are_the_config_schemas() -> None:
    """A mapping file and a config's `imports.fields` accept the same columns."""
    item = config_schema()["properties"]["imports"]["items"]
    assert sorted(MAPPABLE) == sorted(item["properties"]["fields"]["properties"])


def test_import_generic_checks_fields_given_in_code(tmp_path: Path) -> None:
    (tmp_path / "logs.jsonl").write_text(json.dumps(ag_record() | {"run_id": "r1"}) + "\n")
    with pytest.raises(WhowhenError, match=r"^field 'run_id': expected a source field name"):
        import_generic(tmp_path / "logs.jsonl", "jsonl", "trajectories", {"run_id": 5}, "d")


# --- Who&When folders: any file name, only regular files read ----------------------------


def test_file_order_never_fails_on_a_name() -> None:
    names = ["a", "10", "²", "2", "٣", "0x1", "", "1" * 300, "02"]
    ordered = [p.stem for p in sorted((Path(f"{n}.json") for n in names), key=_key)]
    assert ordered == ["02", "2", "10", "1" * 300, ".json", "0x1", "a", "²", "٣"]


def test_a_superscript_digit_name_imports_with_the_others(tmp_path: Path) -> None:
    folder = write_files(
        tmp_path / "Algorithm-Generated", {"1.json": ag_record(), "².json": ag_record("0")}
    )
    result = import_who_and_when(folder)
    assert result.errors == [] and result.n_runs == 2


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    if len(str(path)) > 100:  # AF_UNIX addresses are limited to about 107 bytes
        pytest.skip("temp path too long for a Unix socket address")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()


def _device(path: Path) -> None:
    if not Path("/dev/null").exists():
        pytest.skip("no /dev/null")
    path.symlink_to("/dev/null")


@pytest.mark.parametrize(
    ("name", "make", "kind"),
    [
        ("99.json", _fifo, "a FIFO"),
        ("909.json", Path.mkdir, "a folder"),
        ("98.json", _socket, "a socket"),
        ("97.json", _device, "a character device"),
    ],
    ids=["fifo", "folder", "socket", "device-link"],
)
def test_an_entry_that_is_not_a_regular_file_is_skipped_unread(
    tmp_path: Path, name: str, make: Callable[[Path], None], kind: str
) -> None:
    folder = write_files(
        tmp_path / "Hand-Crafted", {"1.json": ag_record(), "2.json": ag_record("2")}
    )
    make(folder / name)
    result = _finishes(lambda: import_who_and_when(folder), [folder / name])
    assert result.n_runs == 2
    assert result.errors == [f"{folder / name}: not a regular file ({kind}): not read"]


def test_the_cli_reports_every_skipped_entry_and_imports_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_files(
        tmp_path / "Algorithm-Generated", {"1.json": ag_record(), "².json": ag_record("0")}
    )
    os.mkfifo(folder / "99.json")
    (folder / "909.json").mkdir()
    (folder / "96.json").symlink_to("nowhere")
    argv = ["import", "who-and-when", str(folder), "-o", str(tmp_path / "out")]
    code, out, err = _finishes(lambda: _run_cli(argv, capsys), [folder / "99.json"])
    assert code == 0
    assert err == [
        f"skipped: {folder / '96.json'}: cannot read (No such file or directory)",
        f"skipped: {folder / '99.json'}: not a regular file (a FIFO): not read",
        f"skipped: {folder / '909.json'}: not a regular file (a folder): not read",
        # step 0 is the Planner's: the label is kept, and said to be doubtful
        f"warning: {folder / '².json'}: gold agent 'Math_Expert' but gold step 0 "
        "is spoken by 'Planner'",
    ]
    assert "imported 2 runs (6 steps), skipped 3" in out


# --- megabyte values: an error line quotes a preview --------------------------------------


def test_preview_keeps_short_values_and_cuts_long_ones() -> None:
    assert preview("two") == "'two'" and preview(5) == "5" and preview(None) == "None"
    long = preview("x" * BIG)
    assert long == "'" + "x" * 79 + f"…({BIG} chars)"
    assert preview("y" * 100, quote=False) == "y" * 80 + "…(100 chars)"
    assert len(preview(list(range(10**5)))) < 120


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("x" * BIG, f"…({BIG} chars) is not a step index"),
        (int("9" * 4000), "…(4000 chars) out of range (history has 3 entries)"),
        ([0] * 10**6, "expected str or int, got list"),
    ],
    ids=["10MB-text", "4000-digit-number", "10MB-list"],
)
def test_who_and_when_error_line_is_short_for_a_huge_mistake_step(
    tmp_path: Path, value: Any, expected: str
) -> None:
    folder = write_files(
        tmp_path / "Algorithm-Generated",
        {"1.json": ag_record(), "2.json": ag_record(value), "3.json": ag_record()},
    )
    result = import_who_and_when(folder)
    assert result.n_runs == 2 and len(result.errors) == 1
    (error,) = result.errors
    assert len(error) < 300, error[:400]
    assert error.startswith(f"{folder / '2.json'}: field 'mistake_step': ") and expected in error


def _logs(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize(
    ("over", "field", "expected"),
    [
        ({"mistake_step": "x" * BIG}, "mistake_step", "is not a step index"),
        ({"mistake_step": "9" * 4000}, "mistake_step", "out of range (3 steps)"),
        ({"run_id": "r" * BIG}, "run_id", "duplicate run id"),
        (
            {"history": [{"name": "a", "content": "c", "kind": "k" * BIG}]},
            "step 0: kind",
            "is not one of",
        ),
    ],
    ids=["10MB-step", "4000-digit-step", "10MB-duplicate-id", "10MB-kind"],
)
def test_generic_error_line_is_short_for_a_huge_value(
    tmp_path: Path, over: dict[str, Any], field: str, expected: str
) -> None:
    good = ag_record() | {"run_id": "r" * BIG if field == "run_id" else "good"}
    path = _logs(tmp_path / "logs.jsonl", [good, ag_record() | {"run_id": "bad"} | over])
    fields = {"kind": "kind"} if field.endswith("kind") else None
    result = import_generic(path, "jsonl", "trajectories", fields, "mine")
    assert result.n_runs == 1 and len(result.errors) == 1
    (error,) = result.errors
    assert len(error) < 300, error[:400]
    assert f"record line 2: field '{field}'" in error and expected in error and "chars)" in error
