"""The multi-granular attribution reward (hand-computed values) and the training-data export:
train split only, byte-identical, prompts equal to what the LLM attributor sends over HTTP."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import polars as pl
import pytest

from whowhen.attribution.llm import LLMAttributor, parse_answer
from whowhen.attribution.llm_protocols import attribute_llm
from whowhen.attribution.offline import attribute
from whowhen.attribution.reward import (
    attribution_reward,
    completion_text,
    reward,
    reward_fn,
    reward_frame,
    step_kernel,
)
from whowhen.dataset.training import build_training, export_training, taxonomy_modes
from whowhen.errors import WhowhenError
from whowhen.models import DEFAULT_PRICES, ModelClient, load_prices, parse_model
from whowhen.schema import LABELS, RUNS, STEPS, write_table
from whowhen.standin.server import Behaviour, TestServer, attribution_responder

from .conftest import ROOT
from .helpers import pipeline

E_HALF = 0.6065306597126334  # exp(-1/2)
MODE_IDS, DEFINITIONS = taxonomy_modes(ROOT / "config" / "taxonomy.yaml")


# --- the reward ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kw", "expected"),
    [
        (("a", 5, "a", 5), {}, 1.0),  # exact hit
        (("a", 6, "a", 5), {}, 0.5 + 0.5 * E_HALF),  # d=1, sigma=1: 0.80327
        (("a", 4, "a", 5), {}, 0.8032653298563167),
        (("b", 5, "a", 5), {}, 0.5),  # right step, wrong agent
        (("b", 9, "a", 5), {"sigma": 2.0}, 0.5 * math.exp(-2.0)),  # d=4, sigma=2: 16/8
        (("a", 8, "a", 5), {"sigma": 1.5}, 0.5 + 0.5 * math.exp(-2.0)),  # d=3: 9/4.5
        (("a", 7, "a", 5), {"sigma": 2.0, "agent_weight": 0.25}, 0.25 + 0.75 * E_HALF),
        (("b", 5, "a", 5), {"agent_weight": 1.0}, 0.0),  # agent-only reward
        (("a", 6, "a", 5), {"agent_weight": 0.0}, E_HALF),  # step-only reward
        (("a", 5, "a", 5), {"parse_ok": False}, 0.0),  # unparseable: nothing
        ((None, 5, "a", 5), {}, 0.0),
        (("a", None, "a", 5), {}, 0.0),
    ],
)
def test_reward_hand_computed(args, kw, expected) -> None:
    assert reward(*args, **kw) == pytest.approx(expected, abs=1e-12)


def test_kernel_values() -> None:
    assert step_kernel(0) == 1.0
    assert step_kernel(1) == pytest.approx(E_HALF)
    assert step_kernel(3, sigma=3.0) == pytest.approx(E_HALF)
    assert step_kernel(2) == pytest.approx(math.exp(-2.0))


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("agent", ["a", "b"])
def test_reward_symmetric_and_monotone(sigma, agent) -> None:
    gold = 10
    values = [reward(agent, gold + d, "a", gold, sigma) for d in range(9)]
    for d in range(9):
        assert reward(agent, gold - d, "a", gold, sigma) == values[d]
    assert all(x >= y for x, y in itertools.pairwise(values))  # 0.5 + 1e-56 rounds to 0.5
    kernel = [reward(agent, gold + d, "a", gold, sigma, agent_weight=0.0) for d in range(9)]
    assert all(x > y > 0 for x, y in itertools.pairwise(kernel))


def test_reward_bounds() -> None:
    for w in (0.0, 0.3, 0.5, 1.0):
        for sigma in (0.1, 1.0, 10.0):
            for delta in range(-50, 51, 7):
                for agent in ("a", "b"):
                    assert 0.0 <= reward(agent, 20 + delta, "a", 20, sigma, w) <= 1.0
    assert reward("a", 20, "a", 20, 0.1, 0.3) == 1.0
    assert reward("b", 10_000, "a", 0) == 0.0  # far away, wrong agent: underflows to 0


@pytest.mark.parametrize("bad", [{"sigma": 0.0}, {"sigma": -1.0}, {"agent_weight": 1.5}])
def test_reward_rejects_bad_parameters(bad) -> None:
    with pytest.raises(ValueError):
        reward("a", 1, "a", 1, **bad)


RECORD = {
    "gold_agent": "solver",
    "gold_step": 5,
    "agents": ["solver", "verifier"],
    "steps": [1, 3, 5, 7, 8],
    "sigma": 2.0,
    "agent_weight": 0.5,
}


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ('{"agent": "solver", "step": 5, "mode": null, "reason": "r"}', 1.0),
        ('Sure.\n```json\n{"agent": "Solver", "step": "Step 7"}\n```', 0.5 + 0.5 * E_HALF),
        ([{"role": "assistant", "content": '{"agent": "verifier", "step": 1}'}], 0.5 * E_HALF**4),
        (
            {"role": "assistant", "content": '{"agent": "verifier", "step": 8}'},
            0.5 * E_HALF ** (9 / 4),
        ),
        ("I cannot tell.", 0.0),
        ('{"agent": "solver", "step": 4}', 0.0),  # step 4 is an observation
        ('{"agent": "calculator", "step": 5}', 0.0),  # not an agent of this run
        ('{"agent": "solver", "step": 5', 0.0),  # unterminated
        ([], 0.0),
    ],
)
def test_reward_fn_parses_like_the_attributor(completion, expected) -> None:
    assert reward_fn(completion, RECORD) == pytest.approx(expected, abs=1e-12)


def test_trl_shaped_reward_function() -> None:
    columns = {k: [v, v] for k, v in RECORD.items()}
    completions = [
        [{"role": "assistant", "content": '{"agent": "solver", "step": 5}'}],
        [{"role": "assistant", "content": "no idea"}],
    ]
    out = attribution_reward(
        prompts=[[], []], completions=completions, trainer_state=None, completion_ids=[], **columns
    )
    assert out == [1.0, 0.0]
    assert completion_text("plain") == "plain"
    with pytest.raises(KeyError, match="gold_step"):
        attribution_reward(completions=["x"], gold_agent=["a"], agents=[["a"]], steps=[[1]])


@pytest.fixture(scope="module")
def data() -> dict[str, pl.DataFrame]:
    """Two systems (multi- and single-agent), so agents lists of two and of one."""
    parts = [pipeline("solver_verifier"), pipeline("react")]
    return {k: pl.concat([p[k] for p in parts]) for k in ("runs", "steps", "labels")}


def test_reward_frame_matches_scalar_reward(data) -> None:
    preds = pl.concat(
        [
            attribute(data["runs"], data["steps"], name, seed=3)
            for name in ("random", "first_agent_step", "last_agent_step")
        ]
    )
    broken = preds.head(2).with_columns(
        pl.lit("broken").alias("attributor"), pl.lit(False).alias("parse_ok")
    )
    preds = pl.concat([preds, broken])
    frame = reward_frame(preds, data["labels"], sigma=1.5, agent_weight=0.4)
    gold = {r["run_id"]: r for r in data["labels"].iter_rows(named=True)}
    by_key = {(r["run_id"], r["attributor"]): r for r in preds.iter_rows(named=True)}
    assert frame.height == preds.height
    for row in frame.iter_rows(named=True):
        p, g = by_key[(row["run_id"], row["attributor"])], gold[row["run_id"]]
        expected = reward(
            p["agent"], p["step"], g["decisive_agent"], g["decisive_step"], 1.5, 0.4, p["parse_ok"]
        )
        assert row["reward"] == pytest.approx(expected, abs=1e-12)
    assert (frame.filter(pl.col("attributor") == "broken")["reward"] == 0).all()


# --- the training export ------------------------------------------------------------------


def _write(folder: Path, runs, steps, labels) -> Path:
    write_table(runs, RUNS, folder / "runs.parquet")
    write_table(steps, STEPS, folder / "steps.parquet")
    write_table(labels, LABELS, folder / "labels.parquet")
    return folder


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _with_dev(labels: pl.DataFrame) -> pl.DataFrame:
    """Move every other test item to dev, so all three splits are present."""
    test_ids = sorted(labels.filter(pl.col("split") == "test")["run_id"])[::2]
    return labels.with_columns(
        pl.when(pl.col("run_id").is_in(test_ids))
        .then(pl.lit("dev"))
        .otherwise(pl.col("split"))
        .alias("split")
    )


def test_export_round_trip_train_only(tmp_path, data) -> None:
    labels = _with_dev(data["labels"])
    src = _write(tmp_path / "ds", data["runs"], data["steps"], labels)
    manifest = export_training(
        src, tmp_path / "out", sigma=2.0, modes=MODE_IDS, definitions=DEFINITIONS
    )
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "manifest.json",
        "rl_train.jsonl",
        "sft_train.jsonl",
    ]
    train = labels.filter(pl.col("split") == "train")
    sft, rl = _read(out / "sft_train.jsonl"), _read(out / "rl_train.jsonl")
    assert manifest["counts"] == {"train": train.height} and not manifest["skipped"]
    assert [r["run_id"] for r in sft] == sorted(train["run_id"]) == [r["run_id"] for r in rl]
    blob = (out / "sft_train.jsonl").read_bytes() + (out / "rl_train.jsonl").read_bytes()
    for run_id in labels.filter(pl.col("split") != "train")["run_id"]:
        assert run_id.encode() not in blob  # no dev or test item, not even by id
    gold = {r["run_id"]: r for r in train.iter_rows(named=True)}
    for s, r in zip(sft, rl, strict=True):
        g = gold[s["run_id"]]
        assert [m["role"] for m in s["messages"]] == ["system", "user", "assistant"]
        assert s["messages"][:2] == r["prompt"] and s["split"] == r["split"] == "train"
        answer = s["messages"][2]["content"]
        assert list(json.loads(answer)) == ["agent", "step", "mode", "reason"]
        agent, step, mode, reason = parse_answer(answer, r["agents"], r["steps"], MODE_IDS)
        assert (agent, step, mode) == (g["decisive_agent"], g["decisive_step"], g["mode"])
        assert reason.startswith(f"{agent} made the decisive error at step {step} ({mode}): ")
        assert (r["gold_agent"], r["gold_step"], r["sigma"]) == (agent, step, 2.0)
        assert reward_fn(answer, r) == 1.0  # the SFT target earns the full RL reward
        assert f"[{step}] {agent} (" in r["prompt"][1]["content"]


def test_export_dev_on_request_and_stale_files_removed(tmp_path, data) -> None:
    labels = _with_dev(data["labels"])
    src = _write(tmp_path / "ds", data["runs"], data["steps"], labels)
    out = tmp_path / "out"
    manifest = export_training(src, out, include_dev=True)
    dev = sorted(labels.filter(pl.col("split") == "dev")["run_id"])
    n_train = labels.filter(pl.col("split") == "train").height
    assert manifest["counts"] == {"train": n_train, "dev": len(dev)} and len(dev) > 0
    assert [r["run_id"] for r in _read(out / "sft_dev.jsonl")] == dev
    assert {r["split"] for r in _read(out / "rl_dev.jsonl")} == {"dev"}
    test_ids = set(labels.filter(pl.col("split") == "test")["run_id"])
    for path in out.glob("*.jsonl"):
        assert not test_ids & {r["run_id"] for r in _read(path)}
    export_training(src, out)  # without dev: the dev files of the first export go
    assert not (out / "sft_dev.jsonl").exists() and not (out / "rl_dev.jsonl").exists()


def test_export_is_byte_identical(tmp_path, data) -> None:
    src = _write(tmp_path / "ds", data["runs"], data["steps"], data["labels"])
    export_training(src, tmp_path / "a", modes=MODE_IDS)
    export_training(src, tmp_path / "b", modes=MODE_IDS)
    shuffled = {k: data[k].sample(fraction=1.0, shuffle=True, seed=9) for k in data}
    files, manifest = build_training(
        shuffled["runs"], shuffled["steps"], shuffled["labels"], modes=MODE_IDS
    )
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    for name, blob in files.items():  # input row order does not matter either
        assert (tmp_path / "a" / name).read_bytes() == blob
    saved = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert saved["files"] == manifest["files"]


def test_export_skips_unusable_gold_and_refuses_no_train(tmp_path, data) -> None:
    train_id = sorted(data["labels"].filter(pl.col("split") == "train")["run_id"])[0]
    obs = data["steps"].filter((pl.col("run_id") == train_id) & (pl.col("kind") == "observation"))
    labels = data["labels"].with_columns(
        pl.when(pl.col("run_id") == train_id)
        .then(pl.lit(obs["step"][0]))
        .otherwise(pl.col("decisive_step"))
        .alias("decisive_step")
    )
    files, manifest = build_training(data["runs"], data["steps"], labels)
    assert [s["run_id"] for s in manifest["skipped"]] == [train_id]
    assert train_id.encode() not in files["sft_train.jsonl"]
    unsplit = _write(
        tmp_path / "imp",
        data["runs"],
        data["steps"],
        data["labels"].with_columns(pl.lit(None, pl.String).alias("split")),
    )
    with pytest.raises(WhowhenError, match="no usable train-split items"):
        export_training(unsplit, tmp_path / "out")
    imported = _write(  # imports are test-only
        tmp_path / "imp2",
        data["runs"],
        data["steps"],
        data["labels"].with_columns(pl.lit("test").alias("split")),
    )
    with pytest.raises(WhowhenError, match="labels by split: test"):
        export_training(imported, tmp_path / "out")
    with pytest.raises(WhowhenError, match="sigma"):
        export_training(unsplit, tmp_path / "out", sigma=0)
    assert not (tmp_path / "out").exists()


def test_exported_files_load_with_hf_datasets(tmp_path, data) -> None:
    datasets = pytest.importorskip("datasets")
    src = _write(tmp_path / "ds", data["runs"], data["steps"], data["labels"])
    export_training(src, tmp_path / "out")
    rl = datasets.load_dataset(
        "json", data_files=str(tmp_path / "out" / "rl_train.jsonl"), split="train"
    )
    sft = datasets.load_dataset(
        "json", data_files=str(tmp_path / "out" / "sft_train.jsonl"), split="train"
    )
    assert rl.num_rows == sft.num_rows > 0
    batch = rl[:]
    fields = {k: v for k, v in batch.items() if k != "prompt"}
    answers = [m[2]["content"] for m in sft["messages"]]
    assert (
        attribution_reward(prompts=batch["prompt"], completions=answers, **fields)
        == [1.0] * rl.num_rows
    )


# --- the prompts are the attributor's, over real HTTP -------------------------------------


def test_prompts_equal_what_the_attributor_sends(tmp_path, data) -> None:
    """Run the all_at_once attributor against the test server on the train runs: the
    messages it sends are the export's prompts, and its answers score as hand-computed."""
    files, _ = build_training(data["runs"], data["steps"], data["labels"], modes=MODE_IDS)
    rl = [json.loads(line) for line in files["rl_train.jsonl"].decode().splitlines()]
    train_runs = data["runs"].filter(pl.col("run_id").is_in([r["run_id"] for r in rl]))
    prices = load_prices(DEFAULT_PRICES)
    with TestServer(Behaviour(responder=attribution_responder)) as srv:
        spec = parse_model(
            "openai-compatible/mock", {"openai-compatible/mock": {"base_url": srv.url}}
        )
        client = ModelClient(spec, prices, None, progress=False)
        preds = attribute_llm(
            train_runs, data["steps"], LLMAttributor("aao", "mock"), client, MODE_IDS
        )
        sent = sorted(json.dumps(b["messages"], sort_keys=True) for b in srv.bodies)
    assert sent == sorted(json.dumps(r["prompt"], sort_keys=True) for r in rl)
    by_run = {r["run_id"]: r for r in preds.iter_rows(named=True)}
    for record in rl:
        pred = by_run[record["run_id"]]
        first = record["steps"][0]  # the mock names the first agent step it sees
        expected = 0.5 * (pred["agent"] == record["gold_agent"]) + 0.5 * math.exp(
            -((first - record["gold_step"]) ** 2) / 2
        )
        assert pred["step"] == first
        assert reward_fn(pred["raw_output"], record) == pytest.approx(expected, abs=1e-12)


@pytest.mark.skipif(
    "with_media" not in LLMAttributor.__dataclass_fields__, reason="no media attributors yet"
)
def test_export_refuses_media_prompts(data) -> None:
    media = LLMAttributor("aao", "", with_media=True)  # type: ignore[call-arg]
    with pytest.raises(WhowhenError, match="text-only"):
        build_training(data["runs"], data["steps"], data["labels"], attributor=media)


def _has_cli_command() -> bool:
    from whowhen.cli import commands

    return hasattr(commands, "export_training_cmd")


@pytest.mark.skipif(not _has_cli_command(), reason="`whowhen export-training` not wired yet")
def test_cli_export_training(tmp_path, data, capsys, monkeypatch) -> None:
    from whowhen.cli import main

    monkeypatch.chdir(ROOT)  # the default taxonomy path is relative to the checkout
    src = _write(tmp_path / "ds", data["runs"], data["steps"], data["labels"])
    assert main(["export-training", str(src), "-o", str(tmp_path / "out"), "--sigma", "2"]) == 0
    n = data["labels"].filter(pl.col("split") == "train").height
    assert f"wrote {n} train items" in capsys.readouterr().out
    assert {r["sigma"] for r in _read(tmp_path / "out" / "rl_train.jsonl")} == {2.0}
    files, _ = build_training(
        data["runs"],
        data["steps"],
        data["labels"],
        sigma=2.0,
        modes=MODE_IDS,
        definitions=DEFINITIONS,
    )
    assert (tmp_path / "out" / "sft_train.jsonl").read_bytes() == files["sft_train.jsonl"]
    assert main(["export-training", str(src), "-o", str(tmp_path / "x"), "--sigma", "0"]) == 1
