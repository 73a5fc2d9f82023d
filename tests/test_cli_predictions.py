"""What the command line keeps in a dataset's `predictions/`: one file per `--name` for
every attributor, no prediction of a run whose steps a re-import changed, `score` refusing
a dataset without labels, and a missing model key named by its environment variable."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import polars as pl
import pytest

from whowhen.cli import main

from .recordings import write_recording
from .wnw_files import ag_record, hc_record, write_files


def _jsonl(path: Path, oops: dict[str, str]) -> Path:
    """Runs r1..r3 (agents a then b, b errs at step 1); `oops` replaces b's words per run."""
    rows = [
        {"run_id": r, "history": [{"name": "a", "content": "plan"},
                                  {"name": "b", "content": oops.get(r, "oops")},
                                  {"name": "a", "content": "done"}],
         "mistake_agent": "b", "mistake_step": 1}
        for r in ("r1", "r2", "r3")
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _preds(data: Path, by_task: bool = True) -> dict[str, list[str]]:
    """Predictions file name -> the runs it predicts, by their task ids (a JSONL import's
    source ids r1, r2, ...) or by run id."""
    runs = pl.read_parquet(data / "runs.parquet")
    source = dict(runs.select("run_id", "task_id").rows()) if by_task else {}
    return {
        p.stem: sorted(source.get(r, r) for r in pl.read_parquet(p)["run_id"])
        for p in sorted((data / "predictions").glob("*.parquet"))
    }


def _wnw(tmp: Path) -> Path:
    raw = tmp / "raw"
    write_files(raw / "Algorithm-Generated", {"1.json": ag_record(), "2.json": ag_record("0")})
    write_files(raw / "Hand-Crafted", {"1.json": hc_record()})
    assert main(["import", "who-and-when", str(raw), "-o", str(tmp / "ds")]) == 0
    return tmp / "ds"


def test_name_keeps_each_attributors_predictions_apart(tmp_path: Path, capsys) -> None:
    data = _wnw(tmp_path)
    models = []
    for i, seed in enumerate((1, 2)):
        models.append(tmp_path / f"m{i}.json")
        args = ["fit", str(data), "-o", str(models[-1]), "--folds", "2", "--seed", str(seed)]
        assert main(args) == 0
    tracer = ["attribute", str(data), "--attributor", "tracer_lite", "--model"]
    assert main([*tracer, str(models[0])]) == 0
    assert main([*tracer, str(models[1]), "--name", "other"]) == 0
    assert main(["attribute", str(data), "--attributor", "random", "--name", "rnd-7"]) == 0
    runs = sorted(pl.read_parquet(data / "runs.parquet")["run_id"].to_list())
    assert _preds(data, by_task=False) == {"other": runs, "rnd-7": runs, "tracer_lite": runs}
    other = pl.read_parquet(data / "predictions" / "other.parquet")
    assert set(other["attributor"]) == {"other"}
    capsys.readouterr()
    assert main(["score", str(data)]) == 0
    table = capsys.readouterr().out.split("\n\n")[0].splitlines()[4:]
    assert sorted({line.split()[0] for line in table}) == ["other", "rnd-7", "tracer_lite"]


@pytest.mark.parametrize("name", ["", "  ", "a/b", "../up"])
def test_a_name_that_cannot_name_a_file_is_one_line(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _wnw(tmp_path)
    capsys.readouterr()
    assert main(["attribute", str(data), "--attributor", "random", "--name", name]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--name" in err
    assert not (data / "predictions").exists()


def test_reimport_drops_the_predictions_of_changed_runs(tmp_path: Path, capsys) -> None:
    data = tmp_path / "ds"
    logs = _jsonl(tmp_path / "logs.jsonl", {})
    assert main(["import", "jsonl", str(logs), "-o", str(data)]) == 0
    for name in ("random", "last_agent_step"):
        assert main(["attribute", str(data), "--attributor", name]) == 0
    capsys.readouterr()
    assert main(["import", "jsonl", str(logs), "-o", str(data)]) == 0  # unchanged
    assert "prediction" not in capsys.readouterr().out
    assert _preds(data) == {"last_agent_step": ["r1", "r2", "r3"], "random": ["r1", "r2", "r3"]}

    _jsonl(logs, {"r2": "a different slip"})
    assert main(["import", "jsonl", str(logs), "-o", str(data)]) == 0
    out = capsys.readouterr().out.splitlines()
    said = [line for line in out if "prediction" in line]
    changed = pl.read_parquet(data / "runs.parquet").filter(pl.col("task_id") == "r2")
    assert len(said) == 1 and changed["run_id"][0] in said[0] and "2 predictions" in said[0]
    assert _preds(data) == {"last_agent_step": ["r1", "r3"], "random": ["r1", "r3"]}
    assert main(["score", str(data)]) == 0
    assert "1 labelled runs have no prediction" in capsys.readouterr().err


def test_reimport_without_a_run_drops_its_predictions(tmp_path: Path, capsys) -> None:
    data = tmp_path / "ds"
    logs = _jsonl(tmp_path / "logs.jsonl", {})
    assert main(["import", "jsonl", str(logs), "-o", str(data)]) == 0
    assert main(["attribute", str(data), "--attributor", "random"]) == 0
    gone = pl.read_parquet(data / "runs.parquet").filter(pl.col("task_id") == "r3")["run_id"][0]
    logs.write_text("\n".join(logs.read_text().splitlines()[:2]) + "\n")  # r3 is gone
    capsys.readouterr()
    assert main(["import", "jsonl", str(logs), "-o", str(data)]) == 0
    assert gone in capsys.readouterr().out
    assert _preds(data) == {"random": ["r1", "r2"]}


def test_score_without_labels_is_one_line(tmp_path: Path, capsys) -> None:
    write_recording(tmp_path / "rec", "run-1", "6 * 7", "43", False)
    data = tmp_path / "ds"
    assert main(["import", "gateway", str(tmp_path / "rec"), "-o", str(data)]) == 0
    assert main(["attribute", str(data), "--attributor", "first_agent_step"]) == 0
    capsys.readouterr()
    assert main(["score", str(data)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "no labels" in err and f"whowhen review export {data} -o sheet.csv" in err
    assert "--labels" in err
    assert not (data / "scores.json").exists()


@pytest.mark.parametrize(
    ("model", "env"),
    [("openai/gpt-4.1-mini", "OPENAI_API_KEY"), ("gemini/gemini-2.0-flash", "GEMINI_API_KEY")],
)
def test_a_missing_key_names_its_variable(
    model: str, env: str, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(env, raising=False)
    data = _wnw(tmp_path)
    capsys.readouterr()
    args = ["attribute", str(data), "--attributor", "all_at_once", "--model", model]
    assert main([*args, "--cache-dir", str(tmp_path / "cache")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"set the environment variable {env}" in err
    assert not (data / "predictions").exists()


class _Refuses(BaseHTTPRequestHandler):
    """A server that wants a key it was not given: 401 to every call."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b'{"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def refusing() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_a_server_that_wants_a_key_names_the_variable(
    refusing: str, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    data = _wnw(tmp_path)
    capsys.readouterr()
    args = ["attribute", str(data), "--attributor", "all_at_once"]
    args += ["--model", "openai-compatible/served", "--base-url", refusing]
    assert main([*args, "--cache-dir", str(tmp_path / "cache")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "OPENAI_COMPATIBLE_API_KEY" in err, err
    assert not (data / "predictions").exists()
