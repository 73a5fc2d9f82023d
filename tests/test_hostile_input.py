"""Input files made to break the importers: nesting deeper than any decoder's stack, bytes
that are not UTF-8, an Inspect `.eval` archive that inflates to a gibibyte, and links
inside an input folder that lead out of it. Each is one line naming the file (the
import goes on with the other files), never a traceback, a hang or a memory blow-up."""

from __future__ import annotations

import csv
import json
import struct
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from whowhen.cli import main

from .wnw_files import ag_record

DEEP = 100_000
"""Levels of nesting: far past Python's recursion limit (1000)."""


def _deep(depth: int = DEEP) -> str:
    return "[" * depth + "]" * depth


def _span(trace_id: str = "ab" * 16, span_id: str = "cd" * 8) -> dict:
    """One GenAI model span: a user message in, an assistant answer out."""

    def text(key: str, value: str) -> dict:
        return {"key": key, "value": {"stringValue": value}}

    messages = [{"role": "user", "parts": [{"type": "text", "content": "2+3?"}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "5"}]}]
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "name": "chat m",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [
            text("gen_ai.operation.name", "chat"),
            text("gen_ai.input.messages", json.dumps(messages)),
            text("gen_ai.output.messages", json.dumps(answer)),
        ],
    }


def _trace(*spans: dict) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]})


def _run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err.splitlines()


def _one_line_naming(err: list[str], path: Path, *words: str) -> str:
    lines = [line for line in err if str(path) in line]
    assert len(lines) == 1, err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# --- how each importer's input is laid out: (argv, the file the bad content goes in) ----


def _who_and_when(tmp: Path) -> tuple[list[str], Path]:
    folder = tmp / "raw"
    folder.mkdir()
    (folder / "1.json").write_text(json.dumps(ag_record()))
    return ["import", "who-and-when", str(folder)], folder / "2.json"


GOOD_RECORD = {
    "run_id": "ok",
    "history": [{"name": "a", "content": "x"}],
    "mistake_agent": "a",
    "mistake_step": 0,
}


def _jsonl(tmp: Path) -> tuple[list[str], Path]:
    return ["import", "jsonl", str(tmp / "logs.jsonl")], tmp / "logs.jsonl"


def write_files(bad: Path, content: bytes) -> None:
    """`content` into the bad file; a JSONL file also gets a good record after it."""
    if bad.suffix == ".jsonl":
        content = content.rstrip(b"\n") + b"\n" + json.dumps(GOOD_RECORD).encode() + b"\n"
    bad.write_bytes(content)


def _otel(tmp: Path) -> tuple[list[str], Path]:
    folder = tmp / "traces"
    folder.mkdir()
    (folder / "a.json").write_text(_trace(_span()))
    return ["import", "otel", str(folder)], folder / "b.json"


def _labels(tmp: Path) -> tuple[list[str], Path]:
    (tmp / "t.json").write_text(_trace(_span()))
    labels = tmp / "labels.json"
    return ["import", "otel", str(tmp / "t.json"), "--labels", str(labels)], labels


def _outcomes(tmp: Path) -> tuple[list[str], Path]:
    (tmp / "t.json").write_text(_trace(_span()))
    outcomes = tmp / "outcomes.json"
    return ["import", "otel", str(tmp / "t.json"), "--outcomes", str(outcomes)], outcomes


def _inspect_json(tmp: Path) -> tuple[list[str], Path]:
    pytest.importorskip("inspect_ai")
    folder = tmp / "logs"
    folder.mkdir()
    return ["import", "inspect", str(folder)], folder / "run.json"


def _mapping(tmp: Path) -> tuple[list[str], Path]:
    (tmp / "logs.jsonl").write_text(json.dumps({"run_id": "r"}) + "\n")
    mapping = tmp / "mapping.yaml"
    return ["import", "jsonl", str(tmp / "logs.jsonl"), "--mapping", str(mapping)], mapping


IMPORTERS: dict[str, Callable[[Path], tuple[list[str], Path]]] = {
    "who_and_when": _who_and_when,
    "jsonl": _jsonl,
    "otlp": _otel,
    "labels": _labels,
    "outcomes": _outcomes,
    "inspect_json": _inspect_json,
}


@pytest.mark.parametrize("importer", list(IMPORTERS))
def test_nesting_past_the_stack_is_one_line_naming_the_file(
    importer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, bad = IMPORTERS[importer](tmp_path)
    write_files(bad, _deep().encode())
    code, _, err = _run_cli([*argv, "-o", str(tmp_path / "out")], capsys)
    assert code in (0, 1)
    if importer == "inspect_json":  # Inspect's reader (pydantic's) stops at 200 levels
        _one_line_naming(err, bad, "not a readable Inspect log", "recursion limit")
    else:
        _one_line_naming(err, bad, "nested too deeply")


@pytest.mark.parametrize("importer", ["jsonl", "otlp"])
def test_a_deep_value_the_decoder_accepts_is_refused_before_it_recurses(
    importer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nesting the decoder still reads (900 levels) would make later recursive code (a
    nested attribute's reader, repr, the canonical JSON of a field) run out of stack."""
    argv, bad = IMPORTERS[importer](tmp_path)
    if importer == "jsonl":
        deep = {**GOOD_RECORD, "run_id": "deep", "question": json.loads(_deep(900))}
        write_files(bad, json.dumps(deep).encode())
    else:
        value: dict = {"stringValue": "x"}
        for _ in range(300):  # 3 JSON levels each
            value = {"arrayValue": {"values": [value]}}
        span = _span("ef" * 16)
        span["attributes"].append({"key": "deep", "value": value})
        bad.write_text(_trace(span))
    code, out, err = _run_cli([*argv, "-o", str(tmp_path / "out")], capsys)
    assert code == 0 and "imported 1 runs" in out
    _one_line_naming(err, bad, "nested too deeply")


UTF8_IMPORTERS = {**IMPORTERS, "mapping": _mapping}


@pytest.mark.parametrize("importer", list(UTF8_IMPORTERS))
def test_bytes_that_are_not_utf8_are_one_line_naming_file_and_offset(
    importer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, bad = UTF8_IMPORTERS[importer](tmp_path)
    write_files(bad, b'{"run_id": "a\xff"}\n')
    code, _, err = _run_cli([*argv, "-o", str(tmp_path / "out")], capsys)
    assert code in (0, 1)
    line = _one_line_naming(err, bad)
    if importer == "inspect_json":  # Inspect's own reader says what it could not read
        assert "not a readable Inspect log" in line
    else:
        assert "not UTF-8 text (byte 13)" in line


def test_a_sheet_whose_cells_outgrow_the_csv_default_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A review sheet's trajectory cell holds a whole run: past the csv module's 128 KiB
    field limit for a long one. A filled sheet must still read back, as labels and as
    verdicts; a cell that cannot be read names the file and line."""
    (tmp_path / "t.json").write_text(_trace(_span()))
    argv = ["import", "otel", str(tmp_path / "t.json"), "-o", str(tmp_path / "ds")]
    assert main(argv) == 0
    sheet = tmp_path / "sheet.csv"
    assert main(["review", "export", str(tmp_path / "ds"), "-o", str(sheet)]) == 0
    with sheet.open(newline="") as handle:
        (row,) = csv.DictReader(handle)
    row |= {"labelled_agent": "assistant", "labelled_step": "1", "verdict": "yes"}
    row["trajectory"] = "x" * 200_000
    with sheet.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, list(row))
        writer.writeheader()
        writer.writerow(row)
    header = ",".join(row)
    capsys.readouterr()
    labels = ["import", "otel", str(tmp_path / "t.json"), "-o", str(tmp_path / "l")]
    code, out, err = _run_cli([*labels, "--labels", str(sheet)], capsys)
    assert (code, err) == (0, []) and "1 labelled" in out
    code, out, err = _run_cli(["review", "import", str(sheet)], capsys)
    assert code == 0 and json.loads(out)["overall"]["yes"] == 1
    sheet.write_bytes(header.encode() + b'\n"unclosed\x00\n')
    code, out, err = _run_cli(["review", "import", str(sheet)], capsys)
    assert code == 1 and len(err) == 1 and str(sheet) in err[0], err


# --- an .eval archive that inflates far past its size -------------------------------------

GIB = 1 << 30


def _deflated_zeros(size: int) -> bytes:
    """Raw deflate of `size` zero bytes, made without compressing them all: after a full
    flush the compressor's state repeats, so each MiB's blocks are the same bytes."""
    mib = bytes(1 << 20)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    c.compress(mib)
    c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(mib) + c.flush(zlib.Z_FULL_FLUSH)
    return block * (size >> 20) + c.flush()


def _zip(path: Path, members: dict[str, tuple[bytes, int]], method: int = 8) -> Path:
    """A zip of already compressed members (`method` 8: deflate, 93: zstandard), each
    declared to inflate to the given size (CRCs left 0: the readers under test inflate
    before they check one)."""
    body, central = b"", b""
    for name, (data, size) in members.items():
        raw = name.encode()
        sizes = (0, len(data), size, len(raw))  # crc, compressed, declared, name length
        head = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 0, *sizes, 0)
        central += struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, method, 0, 0, *sizes, 0, 0, 0, 0, 0, len(body)
        )
        central += raw
        body += head + raw + data
    count = len(members)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(central), len(body), 0)
    path.write_bytes(body + central + end)
    return path


PEAK = textwrap.dedent(
    """
    import re, sys
    from pathlib import Path
    from whowhen.cli import main
    code = main(sys.argv[1:])
    # VmHWM: this process's own peak; ru_maxrss would also count its parent's at the fork
    status = Path("/proc/self/status").read_text()
    print("peak_mib", int(re.search(r"VmHWM:\\s+(\\d+)", status).group(1)) // 1024)
    sys.exit(code)
    """
)


@pytest.mark.parametrize("header", ["honest", "lying"])
def test_an_eval_archive_that_inflates_to_a_gibibyte_is_refused_in_little_memory(
    header: str, tmp_path: Path
) -> None:
    pytest.importorskip("inspect_ai")
    bomb = _deflated_zeros(GIB)
    assert len(bomb) < 2 << 20  # about 1 MB on disk
    declared = GIB if header == "honest" else 1000  # the header can lie
    folder = tmp_path / "logs"
    folder.mkdir()
    _zip(folder / "bomb.eval", {"header.json": (bomb, declared)})
    argv = ["import", "inspect", str(folder), "-o", str(tmp_path / "out")]
    proc = subprocess.run(
        [sys.executable, "-c", PEAK, *argv], capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    err = proc.stderr.splitlines()
    _one_line_naming(err, folder / "bomb.eval", "inflates past")
    peak = int(proc.stdout.split("peak_mib")[-1])
    assert peak < 600, f"peak {peak} MiB"


def test_a_zstandard_member_is_counted_as_it_inflates(tmp_path: Path) -> None:
    """Inspect also reads zstandard members (zip method 93): counted the same way, a chunk
    at a time, whatever the header declares."""
    zstandard = pytest.importorskip("zstandard")
    from whowhen.errors import WhowhenError
    from whowhen.imports.archive import check_inflated_size

    packer = zstandard.ZstdCompressor().compressobj()
    mib = bytes(1 << 20)
    data = b"".join(packer.compress(mib) for _ in range(256)) + packer.flush()
    bomb = _zip(tmp_path / "z.eval", {"header.json": (data, 1000)}, method=93)
    with pytest.raises(WhowhenError, match="inflates past the 16 MiB limit"):
        check_inflated_size(bomb, limit=16 << 20)
    assert check_inflated_size(bomb, limit=512 << 20) == 256 << 20


# --- links out of an input folder -------------------------------------------------------


def test_links_out_of_an_input_folder_are_skipped_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text(json.dumps(ag_record("2")))
    (outside / "secret.jsonl").write_text(_trace(_span("ef" * 16)))
    (outside / "sub").mkdir()
    (outside / "sub" / "3.json").write_text(json.dumps(ag_record("2")))
    folder = tmp_path / "raw" / "Algorithm-Generated"
    folder.mkdir(parents=True)
    (folder / "1.json").write_text(json.dumps(ag_record()))
    (folder / "2.json").symlink_to(outside / "secret.json")
    (folder / "4.json").symlink_to(folder / "1.json")  # inside the folder: read
    (tmp_path / "raw" / "Hand-Crafted").symlink_to(outside / "sub")
    code, out, err = _run_cli(
        ["import", "who-and-when", str(tmp_path / "raw"), "-o", str(tmp_path / "o")], capsys
    )
    assert code == 0 and "imported 2 runs" in out, (out, err)
    _one_line_naming(err, folder / "2.json", "skipped:", "link", "outside")
    _one_line_naming(err, tmp_path / "raw" / "Hand-Crafted" / "3.json", "skipped:", "outside")

    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "a.json").write_text(_trace(_span()))
    (traces / "b.jsonl").symlink_to(outside / "secret.jsonl")
    code, out, err = _run_cli(["import", "otel", str(traces), "-o", str(tmp_path / "o2")], capsys)
    assert code == 0 and "imported 1 runs" in out, (out, err)
    _one_line_naming(err, traces / "b.jsonl", "skipped:", "outside")


def test_links_out_of_an_inspect_log_folder_are_skipped_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("inspect_ai")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.json").write_text("{}")
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "x.json").symlink_to(outside / "private.json")
    code, _, err = _run_cli(["import", "inspect", str(folder), "-o", str(tmp_path / "o")], capsys)
    assert code == 1
    _one_line_naming(err, folder / "x.json", "skipped:", "outside")


@pytest.mark.parametrize("manifest", [_deep().encode(), b'{"tool_speakers": ["\xff"]}'])
def test_show_reads_a_dataset_manifest_bounded(
    manifest: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`show` reads the manifest.json a dataset folder came with (someone else's, maybe)."""
    (tmp_path / "t.json").write_text(_trace(_span()))
    data = tmp_path / "ds"
    assert main(["import", "otel", str(tmp_path / "t.json"), "-o", str(data)]) == 0
    (data / "manifest.json").write_bytes(manifest)
    capsys.readouterr()
    code, _, err = _run_cli(["show", "ab", "--data", str(data)], capsys)
    assert code == 1
    _one_line_naming(err, data / "manifest.json", "error: ")
