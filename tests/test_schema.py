from __future__ import annotations

import polars as pl
import pyarrow as pa
import pytest

from whowhen.errors import WhowhenError
from whowhen.schema import (
    LABELS,
    PREDICTIONS,
    STEPS,
    TABLES,
    read_table,
    stable_id,
    to_arrow,
    validate,
    write_table,
)


def _step(run_id: str = "r1", step: int = 0, kind: str = "message") -> dict:
    return {
        "run_id": run_id,
        "step": step,
        "actor": "user",
        "role": "user",
        "kind": kind,
        "content": "hi",
        "tool": None,
        "tool_args": None,
        "media": [],
        "tokens_in": 0,
        "tokens_out": 0,
        "cost_usd": 0.0,
        "latency_s": 0.0,
    }


def test_stable_id_is_deterministic_and_input_sensitive() -> None:
    assert stable_id("a", 1, {"x": 2, "y": 3}) == stable_id("a", 1, {"y": 3, "x": 2})
    assert stable_id("a", 1) != stable_id("a", 2)
    assert len(stable_id("a")) == 16


def test_roundtrip_sorts_by_key(tmp_path) -> None:
    path = write_table([_step("b", 1), _step("a", 0), _step("b", 0)], STEPS, tmp_path / "s.pq")
    frame = read_table(path, STEPS)
    assert frame.select("run_id", "step").rows() == [("a", 0), ("b", 0), ("b", 1)]
    assert list(tmp_path.iterdir()) == [path]  # no temp file left behind


def test_write_is_byte_identical(tmp_path) -> None:
    rows = [_step("a", i) for i in range(5)]
    a = write_table(rows, STEPS, tmp_path / "a.parquet").read_bytes()
    b = write_table(list(reversed(rows)), STEPS, tmp_path / "b.parquet").read_bytes()
    assert a == b


def test_missing_column_is_named() -> None:
    table = pa.Table.from_pylist([{"run_id": "x"}])
    with pytest.raises(WhowhenError, match=r"lacks column.*attributor"):
        validate(table, PREDICTIONS, "preds.parquet")


def test_bad_enum_value_names_record_and_field() -> None:
    with pytest.raises(WhowhenError) as info:
        to_arrow([_step("r9", 3, kind="thought")], STEPS)
    assert "r9/3" in str(info.value) and "'kind'" in str(info.value)


def test_null_in_required_field() -> None:
    row = {
        "run_id": "r",
        "decisive_agent": None,
        "decisive_step": 1,
        "mode": None,
        "category": None,
        "original_action": None,
        "replacement_action": None,
        "source": "injection",
        "split": "test",
    }
    with pytest.raises(WhowhenError, match="decisive_agent"):
        to_arrow([row], LABELS)


def test_duplicate_key_rejected() -> None:
    with pytest.raises(WhowhenError, match="duplicate key"):
        to_arrow([_step("a", 0), _step("a", 0)], STEPS)


def test_wrong_type_names_column() -> None:
    frame = pl.DataFrame([_step()]).with_columns(pl.lit("zero").alias("step"))
    with pytest.raises(WhowhenError, match="field 'step'"):
        to_arrow(frame, STEPS)


def test_malformed_parquet_gives_one_line(tmp_path) -> None:
    bad = tmp_path / "runs.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(WhowhenError) as info:
        read_table(bad, STEPS)
    assert str(bad) in str(info.value) and "\n" not in str(info.value)


def test_missing_file(tmp_path) -> None:
    with pytest.raises(WhowhenError, match="missing input file"):
        read_table(tmp_path / "nope.parquet", STEPS)


def test_every_table_has_a_key() -> None:
    assert all(spec.key for spec in TABLES.values())
