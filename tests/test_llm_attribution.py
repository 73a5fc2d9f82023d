"""LLM attribution over real HTTP, the CLI's --model path, the LLM pipeline profile,
kill -9 resumption and the no-key-in-artifacts guarantee."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from whowhen.attribution.llm import LLMAttributor, ParseError, parse_answer
from whowhen.attribution.llm_protocols import attribute_llm
from whowhen.cli import main
from whowhen.models import DEFAULT_PRICES, ModelClient, ResponseCache, load_prices, parse_model
from whowhen.standin.server import Behaviour, TestServer, attribution_responder

from .conftest import ROOT, one_benchmark
from .helpers import pipeline
from .workdir import BUT_PAGES, make_project, snakemake

PRICES = load_prices(DEFAULT_PRICES)
SECRET = "sk-whowhen-SECRET-4f1c9b"


@pytest.fixture(scope="module")
def data():
    return pipeline("solver_verifier")


def _client(server: TestServer, cache: Path | None = None, **kw) -> ModelClient:
    spec = parse_model(
        "openai-compatible/mock", {"openai-compatible/mock": {"base_url": server.url}}
    )
    return ModelClient(spec, PRICES, ResponseCache(cache) if cache else None, progress=False, **kw)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"agent": "solver", "step": 3, "mode": null, "reason": "r"}', ("solver", 3, None, "r")),
        (
            '```json\n{"agent": "Solver", "step": "Step 3", "reason": "x"}\n```',
            ("solver", 3, None, "x"),
        ),
        (
            'I think: {"agent": "solver (thought)", "step": 3, "mode": "m", "reason": ""} done',
            ("solver", 3, "m", ""),
        ),
    ],
)
def test_parse_answer_normalises(text, expected) -> None:
    assert parse_answer(text, ["solver", "verifier"], [1, 3, 5]) == expected


def test_unknown_mode_is_dropped_not_fatal() -> None:
    text = '{"agent": "solver", "step": 1, "mode": "vibes", "reason": "r"}'
    assert parse_answer(text, ["solver"], [1], ["reasoning.wrong_operand"])[2] is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no json here", "no JSON object"),
        ('{"agent": "nobody", "step": 3}', "not one of"),
        ('{"agent": "solver", "step": 4}', "not an agent step"),
        ('{"agent": "solver", "step": "x"}', "not a number"),
        ('{"agent": "solver", "step": 3', "unterminated"),
    ],
)
def test_parse_answer_rejects(text, problem) -> None:
    with pytest.raises(ParseError, match=problem):
        parse_answer(text, ["solver", "verifier"], [1, 3, 5])


def test_llm_attribution_with_repair_and_failures(data) -> None:
    seen: dict[str, int] = {}

    def responder(prompt: str, schema):
        key = prompt.split("Trajectory:")[1][:200] if "Trajectory:" in prompt else prompt
        seen[key] = seen.get(key, 0) + 1
        if "could not be used" in prompt:  # the repair request
            return attribution_responder(prompt, schema)
        return "I am not sure." if len(seen) % 3 == 0 else attribution_responder(prompt, schema)

    runs = data["runs"]
    with TestServer(Behaviour(responder=responder)) as srv:
        preds = attribute_llm(
            runs,
            data["steps"],
            LLMAttributor("llm", "mock"),
            _client(srv),
            ["reasoning.wrong_operand"],
        )
    assert preds.height == runs.height and preds["parse_ok"].all()
    repaired = preds.filter(pl.col("calls") == 2)
    assert 0 < repaired.height < runs.height
    assert (preds["cost_usd"] > 0).all() and (preds["tokens_in"] > 0).all()
    first = attribute_llm(runs, data["steps"], LLMAttributor("b", "m"), _never_client(), [])
    assert not first["parse_ok"].any()
    assert first["reason"].str.starts_with("call failed").all()


def _never_client() -> ModelClient:
    spec = parse_model(
        "openai-compatible/mock", {"openai-compatible/mock": {"base_url": "http://127.0.0.1:9/v1"}}
    )
    return ModelClient(spec, PRICES, None, progress=False, max_retries=0, timeout_s=1)


def test_unparseable_twice_is_recorded_and_scored_wrong(data) -> None:
    with TestServer(Behaviour(responder=lambda p, s: "no idea")) as srv:
        preds = attribute_llm(
            data["runs"].head(3), data["steps"], LLMAttributor("x", "m"), _client(srv)
        )
        assert len(srv.requests) == 6  # one call and one repair each
    assert not preds["parse_ok"].any() and (preds["raw_output"] == "no idea").all()
    assert preds["step"].is_null().all()


def test_cli_attribute_with_model(tmp_path, data, monkeypatch, capsys) -> None:
    out = tmp_path / "ds"
    out.mkdir()
    for name in ("runs", "steps", "labels"):
        data[name].write_parquet(out / f"{name}.parquet")
    monkeypatch.chdir(ROOT)
    with TestServer() as srv:
        args = [
            "attribute",
            str(out),
            "--attributor",
            "all_at_once",
            "--model",
            "openai-compatible/mock",
            "--base-url",
            srv.url,
            "--cache-dir",
            str(tmp_path / "cache"),
            "--name",
            "mock",
        ]
        assert main(args) == 0
        n = len(srv.requests)
        assert main(args) == 0
        assert len(srv.requests) == n  # the rerun is served from the cache
    assert "0 calls" in capsys.readouterr().out
    assert main(["score", str(out)]) == 0
    assert main(["attribute", str(out), "--attributor", "random", "--model", "x/y"]) == 1


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


@pytest.mark.slow
def test_pipeline_with_llm_profile_reruns_free_and_leaks_no_key(tmp_path) -> None:
    """Every LLM role at once (agent policy, annotator, error generator, attributor)."""
    config = one_benchmark()
    with TestServer() as srv:
        config["models"] = {"mock": {"id": "openai-compatible/mock", "base_url": srv.url}}
        config["systems"] = ["react", "llm_react"]
        config["agents"] = {"model": "mock"}
        config["taxonomy"]["annotator"] = "mock"
        config["injection"]["generator"] = "mock"
        config["attribution"]["llm"] = [{"name": "mock_aao", "model": "mock"}]
        config["llm"] = {"progress": False, "max_concurrency": 8}
        project = make_project(tmp_path / "proj", config)
        os.environ["OPENAI_COMPATIBLE_API_KEY"] = SECRET
        try:
            proc = snakemake(project, "--cores", "2")
            assert proc.returncode == 0, proc.stderr[-3000:]
            calls = len(srv.requests)
            assert calls > 0
            # every stage that asks a model again (the pages ask none)
            proc = snakemake(project, *BUT_PAGES, "--cores", "2", "--forceall")
            assert proc.returncode == 0, proc.stderr[-3000:]
            assert len(srv.requests) == calls, "the second run made new model calls"
        finally:
            os.environ.pop("OPENAI_COMPATIBLE_API_KEY")
    metrics = json.loads((project / "results/metrics.json").read_text())
    assert metrics["attribution"]["mock_aao/all/all"]["n"] > 0
    assert metrics["dataset"]["by_system"]["llm_react"] > 0
    rollouts = pl.read_parquet(project / "results/rollouts/arithmetic/llm_react/runs.parquet")
    assert (rollouts["policy"] == "openai-compatible/mock").all() and rollouts["success"].all()
    injections = pl.read_parquet(project / "results/injection/arithmetic/react/injections.parquet")
    assert injections.height > 0  # written by the LLM error generator
    cont = pl.read_parquet(project / "results/continuation/continuations.parquet")
    assert cont["prefix_exact"].all()
    preds = pl.read_parquet(project / "results/predictions/built/mock_aao.parquet")
    assert preds["parse_ok"].all() and (preds["cost_usd"] > 0).all()
    annotations = pl.read_parquet(project / "results/taxonomy/annotations.parquet")
    overview = pl.read_parquet(project / "results/taxonomy/mode_overview.parquet")
    rollouts_all = pl.concat(
        [
            pl.read_parquet(p)
            for p in sorted((project / "results/rollouts").glob("*/*/runs.parquet"))
        ]
    )
    assert annotations.height == (~rollouts_all["success"]).sum()
    assert overview.height > 0 or annotations.height == 0
    assert (overview["source"] == "annotator:mock").all()  # the annotator's modes, not replay
    scanned = _files(project)
    assert len(scanned) > 50 and any(".cache" in str(p) for p in scanned)
    for path in scanned:
        assert SECRET.encode() not in path.read_bytes(), path


KILL_SCRIPT = """
import sys
from whowhen.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_kill_9_mid_run_repeats_no_completed_call(tmp_path, data) -> None:
    out = tmp_path / "ds"
    out.mkdir()
    copies = []  # >= 40 distinct trajectories (distinct prompts) from the tiny dataset's few
    variants = -(-40 // data["runs"].height)
    total = variants * data["runs"].height
    for k in range(variants):
        copies.append(
            {
                name: data[name].with_columns(pl.col("run_id") + f"-{k}")
                for name in ("runs", "steps", "labels")
            }
        )
        copies[-1]["runs"] = copies[-1]["runs"].with_columns(pl.col("question") + f" (variant {k})")
    for name in ("runs", "steps", "labels"):
        pl.concat([c[name] for c in copies]).write_parquet(out / f"{name}.parquet")
    assert pl.read_parquet(out / "runs.parquet").height == total
    cache = tmp_path / "cache"
    with TestServer(Behaviour(latency_s=0.15)) as srv:
        args = [
            sys.executable,
            "-c",
            KILL_SCRIPT,
            "attribute",
            str(out),
            "--attributor",
            "all_at_once",
            "--model",
            "openai-compatible/mock",
            "--base-url",
            srv.url,
            "--cache-dir",
            str(cache),
            "--max-concurrency",
            "2",
            "--prices",
            str(DEFAULT_PRICES),
            "--name",
            "mock",
        ]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while len(list(cache.rglob("*.json"))) < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        srv.behaviour.latency_s = 0.0  # slow answers only to land the kill mid-run
        cached = {p.name for p in cache.rglob("*.json")}
        assert 10 <= len(cached) < total
        # entries are whole (written to a temp file, then renamed): each one parses
        for entry in cache.rglob("*.json"):
            assert json.loads(entry.read_text())["text"]
        before = len(srv.requests)
        rerun = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        new_calls = len(srv.requests) - before
    assert new_calls == total - len(cached), (before, new_calls, len(cached), rerun.stdout)
    preds = pl.read_parquet(out / "predictions" / "mock.parquet")
    assert preds.height == total and preds["parse_ok"].all()
