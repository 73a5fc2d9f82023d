"""The dataset's item selection (no siblings in evaluation splits, gold positions spread)
and the leakage audit: each probe finds a leak planted in synthetic data, and finds none
where there is none."""

from __future__ import annotations

import random

import polars as pl
import pytest

from whowhen.dataset.audit import leakage_audit, leaks
from whowhen.dataset.positions import gold_positions
from whowhen.dataset.select import cap_per_parent, spread_positions
from whowhen.dataset.stage import audit
from whowhen.errors import WhowhenError

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
]


def synthetic(
    n_parents: int = 60,
    per_parent: int = 3,
    n_agent: int = 10,
    marker: str | None = None,
    seed: int = 0,
    gold_at: str = "uniform",
) -> dict[str, pl.DataFrame]:
    """Runs of `n_agent` agent steps (each followed by an observation) with random text; one
    gold step each. `marker` is written into the gold step only (a planted leak)."""
    rng = random.Random(seed)
    runs, steps, labels = [], [], []
    for p in range(n_parents):
        split = ("train", "train", "dev", "test", "test")[p % 5]
        for k in range(per_parent):
            rid = f"r{p:03d}_{k}"
            gold = n_agent - 1 if gold_at == "last" else rng.randrange(n_agent)
            runs.append({"run_id": rid, "parent_run_id": f"p{p:03d}", "system": "react"})
            steps.append({"run_id": rid, "step": 0, "actor": "user", "kind": "message"})
            for i in range(n_agent):
                text = " ".join(rng.choice(WORDS) for _ in range(6))
                if marker and i == gold:
                    text += f" {marker}"
                steps.append(
                    {"run_id": rid, "step": 2 * i + 1, "actor": "assistant", "kind": "action"}
                    | {"content": text, "tool": "calculator", "tool_args": None}
                )
                steps.append({"run_id": rid, "step": 2 * i + 2, "actor": "tool"})
                steps[-1] |= {"kind": "observation", "content": "ok"}
            labels.append(
                {"run_id": rid, "decisive_agent": "assistant", "decisive_step": 2 * gold + 1}
                | {"split": split}
            )
    return {
        "runs": pl.DataFrame(runs),
        "steps": pl.DataFrame(steps, infer_schema_length=None),
        "labels": pl.DataFrame(labels),
    }


def test_evaluation_splits_keep_one_item_per_parent_and_train_keeps_all() -> None:
    data = synthetic()
    kept = cap_per_parent(
        data["labels"], data["runs"], data["steps"], {"train": None, "dev": 1, "test": 1}, 3
    )
    with_parent = kept.join(data["runs"], on="run_id")
    per = with_parent.group_by("split", "parent_run_id").len()
    assert per.filter(pl.col("split") != "train")["len"].max() == 1
    assert per.filter(pl.col("split") == "train")["len"].min() == 3
    assert kept.filter(pl.col("split") == "test").height == 24  # every test parent kept once
    again = cap_per_parent(data["labels"], data["runs"], data["steps"], {"test": 1}, 3)
    assert again.filter(pl.col("split") == "test").equals(kept.filter(pl.col("split") == "test"))


def test_spread_caps_last_step_and_every_tenth() -> None:
    uniform = synthetic(seed=1)
    last = synthetic(seed=2, gold_at="last")
    labels = pl.concat([uniform["labels"], last["labels"].with_columns(pl.col("run_id") + "L")])
    steps = pl.concat([uniform["steps"], last["steps"].with_columns(pl.col("run_id") + "L")])
    before = gold_positions(labels, steps)
    assert before["is_last"].mean() > 0.5
    kept = spread_positions(labels, steps, tenth_share=0.2, last_share=0.2, seed=0)
    pos = gold_positions(kept, steps)
    for _, group in pos.group_by("split"):
        assert group["is_last"].mean() <= 0.2
        tenths = (group["rel_pos"] * 10).floor().value_counts()
        assert (tenths["count"] / group.height).max() <= 0.2
    assert kept.height > 0.3 * labels.height


def test_audit_finds_a_planted_marker_and_no_leak_without_it() -> None:
    leaky = synthetic(marker="OOPS", seed=4)
    table = leakage_audit(leaky["runs"], leaky["steps"], leaky["labels"], margin=0.05)
    clf = table.filter(pl.col("probe") == "one_step_classifier")
    assert clf["accuracy"].min() > 0.9 and clf["leak"].all()

    clean = synthetic(seed=5)
    table = leakage_audit(clean["runs"], clean["steps"], clean["labels"], margin=0.05)
    row = table.filter((pl.col("probe") == "one_step_classifier") & (pl.col("subset") == "all"))
    assert abs(row["accuracy"][0] - row["random"][0]) < 0.1
    assert row["random"][0] == pytest.approx(0.1)


def test_audit_finds_siblings_and_a_label_column() -> None:
    data = synthetic(seed=6)
    # siblings: each item of a parent differs from the parent's shared text only at its gold
    base = (
        data["steps"]
        .filter(pl.col("run_id").str.ends_with("_0"))
        .with_columns(pl.col("run_id").str.slice(0, 4).alias("parent"))
    )
    gold = dict(data["labels"].select("run_id", "decisive_step").iter_rows())
    steps = (
        data["steps"]
        .with_columns(pl.col("run_id").str.slice(0, 4).alias("parent"))
        .join(
            base.select("parent", "step", pl.col("content").alias("shared")), on=["parent", "step"]
        )
        .with_columns(
            pl.when(pl.col("step") == pl.col("run_id").replace_strict(gold))
            .then(pl.col("shared") + " changed by " + pl.col("run_id"))
            .otherwise(pl.col("shared"))
            .alias("content")
        )
        .drop("parent", "shared")
    )
    runs = data["runs"].with_columns(
        pl.col("run_id").replace_strict(gold, return_dtype=pl.Int64).alias("hint")
    )
    table = leakage_audit(runs, steps, data["labels"], margin=0.05)
    sib = table.filter(pl.col("probe") == "sibling_diff").row(0, named=True)
    assert sib["accuracy"] > 0.9 and sib["leak"]
    col = table.filter(pl.col("probe") == "column[step]=runs.hint").row(0, named=True)
    assert col["accuracy"] == 1.0 and col["leak"]
    assert any("runs.hint" in line for line in leaks(table))


def test_strict_audit_fails_the_stage_and_names_the_probe(tmp_path) -> None:
    data = synthetic(marker="OOPS", seed=7)
    opts = {"audit_margin": 5, "strict_audit": True}
    with pytest.raises(WhowhenError, match="one_step_classifier"):
        audit(data, opts, str(tmp_path / "leakage.csv"))
    table = audit(data, opts | {"strict_audit": False}, str(tmp_path / "leakage.csv"))
    assert pl.read_csv(tmp_path / "leakage.csv").equals(table)


def test_step_kind_prior_reads_no_text_and_finds_a_kind_prior() -> None:
    data = synthetic(seed=8)
    gold = dict(data["labels"].select("run_id", "decisive_step").iter_rows())
    # the gold step is the run's one `sql` call among calculator calls: a kind prior
    steps = data["steps"].with_columns(
        pl.when(pl.col("step") == pl.col("run_id").replace_strict(gold, default=-1))
        .then(pl.lit("sql"))
        .otherwise(pl.col("tool"))
        .alias("tool")
    )
    table = leakage_audit(data["runs"], steps, data["labels"], margin=0.05)
    kind = table.filter((pl.col("probe") == "step_kind_prior") & (pl.col("subset") == "all"))
    assert kind["accuracy"][0] == 1.0 and kind["leak"][0]
    clean = leakage_audit(data["runs"], data["steps"], data["labels"], margin=0.05)
    kind = clean.filter((pl.col("probe") == "step_kind_prior") & (pl.col("subset") == "all"))
    assert kind["accuracy"][0] < 0.25  # one kind everywhere: the first step, about random


def test_kind_matching_caps_a_favoured_kind_and_keeps_a_fair_set() -> None:
    from whowhen.dataset.kinds import kind_column, match_kinds

    data = synthetic(seed=8)
    runs = data["runs"].with_columns(pl.lit("toy").alias("benchmark"))
    gold = set(zip(data["labels"]["run_id"], data["labels"]["decisive_step"], strict=True))
    # every gold step opens "Checking the value", the others one of four other openings:
    # the gold kind is 1/10 of the steps but all of the gold
    opener = ["Adding", "Reading", "Noting", "Listing"]

    def opening(run_id: str, step: int) -> str:
        return ("Checking" if (run_id, step) in gold else opener[step // 2 % 4]) + " the value: "

    agent = pl.col("actor") == "assistant"
    prefix = [opening(r, s) for r, s in data["steps"].select("run_id", "step").iter_rows()]
    steps = data["steps"].with_columns(
        pl.when(agent)
        .then(pl.Series(prefix) + pl.col("content"))
        .otherwise(pl.col("content"))
        .alias("content")
    )
    kinds = kind_column(steps)["kind"].unique().sort().to_list()
    assert kinds == [f"assistant/calculator/{w} the value:" for w in sorted(["Checking", *opener])]
    kept = match_kinds(data["labels"], runs, steps, max_ratio=1.5, seed=0)
    assert kept.height == 3  # one item per split: the one kind that is ever gold
    # a fair set (every step one kind, so gold kinds follow step kinds) is kept whole
    fair = data["steps"].with_columns(
        pl.when(agent)
        .then("Adding the value: " + pl.col("content"))
        .otherwise(pl.col("content"))
        .alias("content")
    )
    assert match_kinds(data["labels"], runs, fair, 1.5, 0).height == data["labels"].height
    assert match_kinds(data["labels"], runs, steps, None, 0).height == data["labels"].height


def _with_tasks(data: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    return data | {"runs": data["runs"].with_columns(pl.col("parent_run_id").alias("task_id"))}


def test_the_predictable_step_filter_drops_the_planted_leak_and_little_else() -> None:
    from whowhen.dataset.predictable import Candidates, drop_predictable, held_out_hits

    marked = _with_tasks(synthetic(n_parents=45, marker="zzmarker"))
    clean = _with_tasks(synthetic(n_parents=45))
    # half the items carry the marker on their gold step: a classifier finds those
    half = marked["labels"]["run_id"].str.slice(1, 3).cast(pl.Int64) % 2 == 0
    steps = pl.concat(
        [
            marked["steps"].filter(
                pl.col("run_id").is_in(marked["labels"].filter(half)["run_id"].implode())
            ),
            clean["steps"].filter(
                pl.col("run_id").is_in(clean["labels"].filter(~half)["run_id"].implode())
            ),
        ]
    )
    labels, runs = marked["labels"], marked["runs"]
    found = held_out_hits(labels, runs, Candidates.of(labels, steps), 3, 1)
    assert found.filter(pl.col("hit")).height > 2 * found["chance"].sum()
    kept = drop_predictable(labels, runs, steps, 3, 1, rounds=2)
    dropped = set(labels["run_id"]) - set(kept["run_id"])
    planted = set(labels.filter(half)["run_id"])
    assert dropped and len(dropped & planted) >= 0.9 * len(dropped)
    # what is left holds no more hits than chance would give
    left = held_out_hits(kept, runs, Candidates.of(kept, steps), 3, 1)
    assert left.filter(pl.col("hit")).height <= left["chance"].sum() + 3 * left.height**0.5 / 3

    # without a leak, only the noise above chance goes
    plain = drop_predictable(clean["labels"], clean["runs"], clean["steps"], 3, 1)
    assert plain.height >= 0.95 * clean["labels"].height
