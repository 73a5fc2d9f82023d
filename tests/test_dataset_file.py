"""Dataset-file benchmarks: a local JSONL/Parquet file, a field mapping, an official scoring
rule, images copied into the media store, and a model playing the agent over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from whowhen.errors import WhowhenError
from whowhen.media import load_rgb, media_path, put_png
from whowhen.models import make_client
from whowhen.registry import get_benchmark
from whowhen.rollouts import run_rollouts
from whowhen.standin.server import Behaviour, TestServer


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _cfg(path: Path, **extra) -> dict:
    return {
        "file": str(path),
        "fields": {"id": "qid", "question": "q", "answer": "gold"},
        "scoring": "numeric",
        **extra,
    }


def test_file_tasks_and_scoring_rules(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "set.jsonl",
        [{"qid": 1, "q": "What is 2 + 3?", "gold": "5"}, {"qid": 2, "q": "Pick", "gold": "B"}],
    )
    bench = get_benchmark("mini", _cfg(path))
    tasks = bench.make_tasks(_cfg(path), 0)
    assert [t.answer for t in tasks] == ["5", "B"]
    assert tasks == bench.make_tasks(_cfg(path), 0)
    env = bench.make_env(tasks[0])
    assert "What is 2 + 3?" in env.reset()
    assert env.score("The answer is $5.00", "5") and not env.score("6", "5")
    mc = get_benchmark("mini", _cfg(path, scoring="multiple_choice")).make_env(tasks[1])
    assert mc.score("Answer: (b)", "B") and not mc.score("A", "B")
    relaxed = get_benchmark("mini", _cfg(path, scoring="relaxed")).make_env(tasks[0])
    assert relaxed.score("5.2", "5") and not relaxed.score("5.4", "5")


def test_parquet_and_choices(tmp_path: Path) -> None:
    path = tmp_path / "set.parquet"
    pl.DataFrame({"id": ["a"], "question": ["Colour?"], "answer": ["A"]}).with_columns(
        pl.Series("opts", [["red", "blue"]])
    ).write_parquet(path)
    cfg = {"file": str(path), "fields": {"choices": "opts"}, "scoring": "multiple_choice"}
    (task,) = get_benchmark("mc", cfg).make_tasks(cfg, 0)
    assert "(A) red\n(B) blue" in task.question


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"qid": 1, "q": "x"}], "field 'gold'"),
        ([{"qid": 7, "gold": "1"}], "record 7"),
    ],
)
def test_bad_records_name_file_record_and_field(tmp_path: Path, records, message) -> None:
    path = _write(tmp_path / "bad.jsonl", records)
    with pytest.raises(WhowhenError, match=message) as err:
        get_benchmark("b", _cfg(path)).make_tasks(_cfg(path), 0)
    assert "bad.jsonl" in str(err.value)


def test_invalid_json_line_and_unknown_rule(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"qid": 1, "q": "a", "gold": "1"}\n{oops\n')
    with pytest.raises(WhowhenError, match="line 2"):
        get_benchmark("b", _cfg(path)).make_tasks(_cfg(path), 0)
    with pytest.raises(WhowhenError, match="unknown scoring rule"):
        get_benchmark("b", _cfg(path, scoring="bleu"))


def test_model_answers_image_items_over_http(tmp_path: Path) -> None:
    pixels = np.zeros((8, 8, 3), np.uint8)
    pixels[2:5, 2:5] = (255, 0, 0)
    (tmp_path / "img.png").write_bytes(media_path(put_png(pixels)).read_bytes())
    path = _write(
        tmp_path / "vqa.jsonl",
        [
            {"qid": 1, "q": "What is 2 + 3?", "gold": "5", "image": "img.png"},
            {"qid": 2, "q": "What is 4 * 4?", "gold": "15", "image": "img.png"},
        ],
    )
    cfg = _cfg(
        path,
        modality="image",
        fields={"id": "qid", "question": "q", "answer": "gold", "image": "image"},
    )
    with TestServer(Behaviour(native_tools=False)) as srv:
        client = make_client(
            "m",
            {"cache_dir": None, "progress": False},
            {"m": {"id": "openai-compatible/mock", "base_url": srv.url, "native_tools": False}},
        )
        runs, steps, _ = run_rollouts("vqa", "llm_react", cfg, 1, 0.0, 10, client=client)
        bodies = srv.bodies
    assert runs["success"].to_list() == [True, False]  # 16 is not the (wrong) gold 15
    assert set(runs["modality"]) == {"image"}
    first = steps.filter(pl.col("step") == 0)["media"].to_list()
    assert all(len(m) == 1 for m in first)
    assert (load_rgb(first[0][0]) == pixels).all()
    parts = bodies[0]["messages"][1]["content"]
    assert any(p.get("type") == "image_url" for p in parts)
