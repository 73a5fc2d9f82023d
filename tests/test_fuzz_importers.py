"""Property-based tests of the importers: files holding good records mixed with malformed
ones (arbitrary bytes, non-objects, a field missing or of another type, truncated JSON).

Who&When and the generic JSONL importer skip bad records: every good record is imported
(with exactly the rows a clean file gives), every other record is imported or reported
once, naming the file, the record and, for an object, the field. The dataset-file reader
stops at the first bad record with a WhowhenError naming the file and that record; it
never blames a good one. No other exception type ever escapes."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import example, given
from hypothesis import strategies as st

from whowhen.benchmarks.dataset_file import load_tasks
from whowhen.errors import WhowhenError
from whowhen.imports.generic import import_generic
from whowhen.imports.who_and_when import import_who_and_when

from .fuzz_strategies import fuzz_settings, garbage_lines, json_values, truncated

File = tuple[bytes, bool]
"""A file's (or a line's) bytes, and whether it is a known-good record."""


def _dump(value: Any, ascii_only: bool = True) -> bytes:
    """JSON bytes; `ascii_only=False` leaves U+2028, U+0085 & co unescaped, as JSON allows."""
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


@st.composite
def mutated(draw: st.DrawFn, record: dict[str, Any], list_key: str) -> bytes:
    """`record` damaged once: a key dropped or retyped, one list entry damaged, the whole
    record replaced, cut short, or raw bytes."""
    how = draw(st.sampled_from(["drop", "retype", "entry", "whole", "truncated", "bytes"]))
    record = json.loads(json.dumps(record))
    if how == "drop":
        del record[draw(st.sampled_from(sorted(record)))]
    elif how == "retype":
        record[draw(st.sampled_from(sorted(record)) | st.text(max_size=5))] = draw(json_values)
    elif how == "entry":
        entries = record[list_key]
        i = draw(st.integers(0, len(entries) - 1))
        keys = sorted(entries[i])
        action = draw(st.sampled_from(["drop", "retype", "replace"]))
        if action == "drop" and keys:
            del entries[i][draw(st.sampled_from(keys))]
        elif action == "retype" and keys:
            entries[i][draw(st.sampled_from(keys))] = draw(json_values)
        else:
            entries[i] = draw(json_values)
    elif how == "whole":
        return _dump(draw(json_values))
    elif how == "truncated":
        text = json.dumps(record)
        return truncated(text, draw(st.integers(0, len(text)))).encode()
    else:
        return draw(st.binary(max_size=60))
    return _dump(record)


# --- Who&When ------------------------------------------------------------------------


@st.composite
def who_and_when_records(draw: st.DrawFn) -> dict[str, Any]:
    """A valid Who&When record: Algorithm-Generated (name and role) or Hand-Crafted (role)."""
    history = []
    for _ in range(draw(st.integers(1, 4))):
        entry: dict[str, Any] = {"content": draw(st.text(max_size=15))}
        if draw(st.booleans()):
            entry["name"] = draw(st.text(min_size=1, max_size=8))
            entry["role"] = draw(st.sampled_from(["assistant", "user"]))
        else:
            entry["role"] = draw(
                st.sampled_from(["human", "Orchestrator (thought)", "WebSurfer"])
                | st.text(max_size=10)
            )
        history.append(entry)
    step = draw(st.integers(0, len(history) - 1))
    record = {
        "question": draw(st.text(max_size=15)),
        "history": history,
        "mistake_agent": draw(st.text(max_size=8)),
        "mistake_step": draw(st.sampled_from([str(step), step, f" {step} "])),
    }
    for key in ("question_ID", "level", "ground_truth", "mistake_reason", "is_correct"):
        if draw(st.booleans()):
            record[key] = draw(json_values)
    return record


good_who_and_when = who_and_when_records().map(lambda r: (_dump(r), True))
any_who_and_when = st.one_of(
    good_who_and_when,
    who_and_when_records().flatmap(lambda r: mutated(r, "history")).map(lambda b: (b, False)),
)

_W = {"question": "q", "mistake_agent": "a", "mistake_step": "0"}
_GOOD_W = (_dump({**_W, "history": [{"content": "hi", "name": "a"}]}), True)


def _object(content: bytes) -> bool:
    try:
        return isinstance(json.loads(content), dict)
    except (ValueError, RecursionError):
        return False


def _same_rows(result: Any, clean: Any, tables: tuple[str, ...]) -> None:
    """`result` holds exactly the rows that importing the clean file alone gives."""
    ids = clean.tables()["runs"]["run_id"].to_list()
    for name in tables:
        key = ["run_id", "step"] if name == "steps" else ["run_id"]
        got = result.tables()[name].filter(pl.col("run_id").is_in(ids)).sort(key)
        assert got.equals(clean.tables()[name].sort(key)), name


@fuzz_settings(80)
@given(st.lists(any_who_and_when, min_size=1, max_size=6))
@example([_GOOD_W, (_dump({**_W, "history": [{"content": "x", "name": ""}]}), False)])
@example([_GOOD_W, (_dump({**_W, "mistake_step": 0.5, "history": [{"content": "x"}]}), False)])
@example([_GOOD_W, (_dump({**_W, "mistake_step": [0], "history": [{"content": "x"}]}), False)])
@example([_GOOD_W, (b'{"question": 1, "x": ' + b"1" * 5000 + b"}", False)])
@example([_GOOD_W, (b"[" * 100_000, False)])
@example([_GOOD_W, (_dump({**_W, "history": [{"content": "\ud800", "name": "a"}]}), False)])
def test_who_and_when_keeps_every_good_file(files: list[File]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "mixed" / "Algorithm-Generated"
        clean = Path(tmp) / "clean" / "Algorithm-Generated"
        folder.mkdir(parents=True)
        clean.mkdir(parents=True)
        for i, (content, good) in enumerate(files):
            (folder / f"{i}.json").write_bytes(content)
            if good:
                (clean / f"{i}.json").write_bytes(content)
        result = import_who_and_when(folder)
        metas = result.tables()["runs"]["meta"].to_list()
        imported = {json.loads(meta)["file"] for meta in metas}
        for i, (content, good) in enumerate(files):
            name, path = f"{i}.json", str(folder / f"{i}.json")
            errors = [e for e in result.errors if e.startswith(f"{path}: ")]
            assert len(errors) == (name not in imported), (name, errors)
            assert not good or name in imported, (name, errors)
            for error in errors:
                assert "\n" not in error
                assert not _object(content) or "field '" in error, error
        assert len(result.errors) == len(files) - len(imported)
        if any(good for _, good in files):
            alone = import_who_and_when(clean)
            assert alone.n_runs == sum(good for _, good in files)
            _same_rows(result, alone, ("runs", "steps", "labels"))


# --- generic JSONL (trajectories and steps layouts) ------------------------------------


@st.composite
def trajectory_records(draw: st.DrawFn, run_id: str) -> dict[str, Any]:
    """A valid trajectory record for the default field mapping."""
    history = [
        {"name": draw(st.text(min_size=1, max_size=6)), "content": draw(st.text(max_size=15))}
        for _ in range(draw(st.integers(1, 4)))
    ]
    record: dict[str, Any] = {
        "run_id": run_id,
        "history": history,
        "mistake_agent": draw(st.text(min_size=1, max_size=6)),
        "mistake_step": draw(st.integers(0, len(history) - 1)),
    }
    for key in ("question", "ground_truth", "mistake_reason"):
        if draw(st.booleans()):
            record[key] = draw(st.text(max_size=10))
    return record


@st.composite
def jsonl_lines(draw: st.DrawFn) -> list[File]:
    """Good trajectory records (unique run ids), damaged ones and garbage lines, shuffled."""
    lines: list[File] = []
    for i in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["good", "mutated", "garbage"]))
        if kind == "garbage":
            lines.append((draw(garbage_lines), False))
            continue
        record = draw(trajectory_records(f"{kind}-{i}"))
        if kind == "good":
            lines.append((_dump(record, draw(st.booleans())), True))
        else:
            lines.append((draw(mutated(record, "history")), False))
    return lines


_T = {"run_id": "t", "mistake_agent": "a", "mistake_step": 0}
_GOOD_T = (_dump({**_T, "run_id": "good", "history": [{"name": "a", "content": "x"}]}), True)


@fuzz_settings(100)
@given(jsonl_lines())
@example([_GOOD_T, (_dump({**_T, "history": [{"role": 5, "content": "x"}]}), False)])
@example(
    [_GOOD_T, (_dump({**_T, "question": 5, "history": [{"name": "a", "content": "x"}]}), False)]
)
@example([_GOOD_T, (_dump({**_T, "history": [{"name": "a", "content": "x", "tool": [1]}]}), False)])
@example([_GOOD_T, (b"\xff\xfe{", False)])
@example([_GOOD_T, (b'{"a": ' + b"1" * 5000 + b"}", False)])
@example([_GOOD_T, (b"[" * 100_000, False)])
@example([_GOOD_T, (b"\x1c\x1d", False), (*_GOOD_T[:1], False)])
@example([(_dump({**_T, "history": [{"name": "a", "content": "x\u2028y\x85\x1c"}]}, False), True)])
def test_generic_jsonl_keeps_every_good_line(lines: list[File]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path, clean = Path(tmp) / "logs.jsonl", Path(tmp) / "clean.jsonl"
        path.write_bytes(b"".join(content + b"\n" for content, _ in lines))
        clean.write_bytes(b"".join(content + b"\n" for content, good in lines if good))
        result = import_generic(path, "jsonl", "trajectories", None, "mine")
        metas = result.tables()["runs"]["meta"].to_list()
        imported = {json.loads(meta)["record"] for meta in metas}
        for n, (content, good) in enumerate(lines, start=1):
            record = f"line {n}"
            errors = [e for e in result.errors if e.startswith(f"{path}: record {record}: ")]
            if not content.strip():
                assert not errors and record not in imported
                continue
            assert len(errors) == (record not in imported), (record, errors)
            assert not good or record in imported, (record, errors)
            for error in errors:
                assert "\n" not in error
                assert not _object(content) or "field '" in error, error
        assert all(e.startswith(f"{path}: record line ") for e in result.errors)
        alone = import_generic(clean, "jsonl", "trajectories", None, "mine")
        assert alone.n_runs == sum(good for _, good in lines)
        _same_rows(result, alone, ("steps", "labels"))


@st.composite
def step_lines(draw: st.DrawFn) -> list[File]:
    """Steps layout: the good runs' step records (out of order, with an index field)
    interleaved with garbage lines and damaged step records of other runs."""
    lines: list[File] = []
    for r in range(draw(st.integers(0, 3))):
        record = draw(trajectory_records(f"run-{r}"))
        blame = {"culprit": record["mistake_agent"], "culprit_step": record["mistake_step"]}
        steps = [
            {**step, **blame, "trace": f"run-{r}", "idx": i}
            for i, step in enumerate(record["history"])
        ]
        lines += [(_dump(s), True) for s in draw(st.permutations(steps))]
    for i in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            line = draw(garbage_lines)
        else:
            bad = {"trace": f"bad-{i}", "idx": draw(json_values), "name": "x", "content": "y"}
            line = draw(mutated({**bad, "history": [{}]}, "history"))
        lines.insert(draw(st.integers(0, len(lines))), (line, False))
    return lines


STEP_FIELDS = {
    "run_id": "trace",
    "step": "idx",
    "decisive_agent": "culprit",
    "decisive_step": "culprit_step",
}


@fuzz_settings(60)
@given(step_lines())
@example([(_dump({"trace": "b", "idx": 10**400}), False), (_dump({"trace": "b", "idx": 1}), False)])
def test_generic_steps_layout_keeps_every_good_run(lines: list[File]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path, clean = Path(tmp) / "steps.jsonl", Path(tmp) / "clean.jsonl"
        path.write_bytes(b"".join(content + b"\n" for content, _ in lines))
        clean.write_bytes(b"".join(content + b"\n" for content, good in lines if good))
        result = import_generic(path, "jsonl", "steps", STEP_FIELDS, "mine")
        alone = import_generic(clean, "jsonl", "steps", STEP_FIELDS, "mine")
        assert alone.errors == []
        _same_rows(result, alone, ("steps", "labels"))
        assert all(e.startswith(f"{path}: record line ") for e in result.errors), result.errors
        assert all("\n" not in e for e in result.errors)


@fuzz_settings(40)
@given(st.binary(max_size=200), st.sampled_from(["jsonl", "parquet"]))
@example(b"PAR1\x00\x00PAR1", "parquet")
@example(b"\x80\x81\n{}\n", "jsonl")
def test_generic_any_bytes_import_or_name_the_file(content: bytes, fmt: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"data.{fmt}"
        path.write_bytes(content)
        try:
            result = import_generic(path, fmt, "trajectories", None, "mine")
        except WhowhenError as exc:
            assert str(exc).startswith(f"{path}: ") and "\n" not in str(exc)
        else:
            assert all(e.startswith(f"{path}: ") for e in result.errors)


# --- dataset-file benchmarks ----------------------------------------------------------

FIELDS = {"id": "qid", "question": "q", "answer": "gold", "choices": "opts", "image": "img"}


@st.composite
def task_lines(draw: st.DrawFn) -> list[tuple[bytes, bool, dict[str, Any] | None]]:
    """Task records (good ones have unique ids `good-i`, a question, an answer, lettered
    choices and an existing image or none) mixed with damaged records and garbage lines.
    Each line: (bytes, known good, the record when the line is a JSON object)."""
    lines = []
    for i in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["good", "good", "random", "garbage"]))
        if kind == "garbage":
            lines.append((draw(garbage_lines), False, None))
            continue
        record: dict[str, Any] = {
            "qid": f"good-{i}",
            "q": draw(st.text(min_size=1, max_size=10)),
            "gold": draw(st.text(min_size=1, max_size=5) | st.integers()),
        }
        options = st.lists(st.text(max_size=4), max_size=10)
        extras = {
            "opts": options | st.dictionaries(st.sampled_from("ABCD"), st.text(max_size=4)),
            "img": st.sampled_from([None, "", "ok.png", ["ok.png", "ok.png"], []]),
        }
        for key, values in extras.items():
            if draw(st.booleans()):
                record[key] = draw(values)
        if kind == "random":
            for key in draw(st.lists(st.sampled_from([*FIELDS.values(), "zz"]), max_size=3)):
                if draw(st.booleans()):
                    record.pop(key, None)
                else:
                    record[key] = draw(json_values | st.sampled_from([".", "..", "/", "ok.png"]))
        lines.append((_dump(record), kind == "good", record))
    return lines


def _blame_names(lines: list[tuple[bytes, bool, dict[str, Any] | None]]) -> set[str]:
    """The record names the reader may blame: any line that is not known good."""
    names, index = set(), 0
    for n, (content, good, record) in enumerate(lines, start=1):
        if not content.strip():
            continue
        if record is None:
            names.add(f"line {n}")
        else:
            if not good:
                names |= {f"line {n}", str(record.get("qid", index))}
            index += 1
    return names


@fuzz_settings(100)
@given(task_lines())
@example([(b"\xff\n", False, None)])
@example([(_dump({"q": "x", "gold": "1", "opts": list("abcdefghijkl")}), False, {})])
@example([(_dump({"q": "x", "gold": "1", "opts": 5}), False, {})])
@example([(_dump({"q": "x", "gold": "1", "img": "."}), False, {})])
@example([(_dump({"q": "x", "gold": "1", "img": "x" * 300}), False, {})])
@example([(b'{"q": ' + b"1" * 5000 + b"}", False, None)])
@example([(b"[" * 100_000, False, None)])
@example([(_dump({"q": "x\ud800", "gold": "1"}), False, {})])
@example([(_dump({"q": "x", "gold": "1", "opts": {"A": "\udfff"}}), False, {})])
def test_dataset_file_tasks_or_error_naming_the_bad_record(
    lines: list[tuple[bytes, bool, dict[str, Any] | None]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "set.jsonl"
        path.write_bytes(b"".join(content + b"\n" for content, _, _ in lines))
        (Path(tmp) / "ok.png").write_bytes(b"\x89PNG not really")
        cfg = {"file": str(path), "fields": FIELDS}
        try:
            tasks = load_tasks("fz", cfg)
        except WhowhenError as exc:
            assert exc.path == str(path) and exc.record is not None, str(exc)
            assert exc.record in _blame_names(lines), (exc.record, str(exc))
            assert "\n" not in str(exc)
        else:
            records = [rec for content, _, rec in lines if content.strip()]
            assert len(tasks) == len(records)
            assert [t.answer for t in tasks] == [str(rec["gold"]) for rec in records if rec]
            for task in tasks:  # every task's text can go into a prompt and a table
                assert (task.question + task.answer).encode("utf-8")


@fuzz_settings(20)
@given(st.binary(max_size=100))
@example(b"PAR1junkPAR1")
def test_dataset_file_any_parquet_bytes(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "set.parquet"
        path.write_bytes(content)
        try:
            load_tasks("fz", {"file": str(path)})
        except WhowhenError as exc:
            assert exc.path == str(path) and "\n" not in str(exc)


def test_generic_duplicate_run_id_is_reported_and_the_rest_writes(tmp_path: Path) -> None:
    """A second record with an imported run id is reported; the import still writes (a
    duplicate key used to fail the whole write, losing every record)."""
    record = {**_T, "run_id": "a", "history": [{"name": "a", "content": "x"}]}
    path = tmp_path / "dup.jsonl"
    path.write_text(f"{json.dumps(record)}\n{json.dumps({**record, 'mistake_step': '0'})}\n")
    result = import_generic(path, "jsonl", "trajectories", None, "mine")
    assert result.n_runs == 1
    assert result.errors == [
        f"{path}: record line 2: field 'run_id': duplicate run id 'a' (record line 1 has it)"
    ]
    assert result.write(tmp_path / "out")["runs"].exists()
