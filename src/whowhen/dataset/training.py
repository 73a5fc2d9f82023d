"""Training data for LLM attributors: the train split (optionally dev) of a labelled dataset
as supervised (SFT) and reinforcement-learning (GRPO-style) JSONL files.

The prompt is built by the all_at_once attributor's own `build_request`, so a model trained
on these files sees exactly what it will be evaluated with. Test items are never written:
the split filter is not a parameter. The same input gives byte-identical files.

Files (in OUT):
    sft_train.jsonl   {"messages": [system, user, assistant], "run_id", "split", ...}
    rl_train.jsonl    {"prompt": [system, user], "gold_agent", "gold_step", "gold_mode",
                       "agents", "steps", "sigma", "agent_weight", "run_id", "split", ...}
    sft_dev.jsonl, rl_dev.jsonl   with include_dev, when the dev split is not empty
    manifest.json     counts, skipped runs, prompt and reward parameters, file hashes
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import polars as pl

from whowhen.attribution.baselines import agent_steps
from whowhen.attribution.llm import LLMAttributor, build_request
from whowhen.attribution.reward import DEFAULT_AGENT_WEIGHT, DEFAULT_SIGMA, FORMULA, check_params
from whowhen.errors import WhowhenError
from whowhen.io import atomic_path, write_json
from whowhen.models import ChatRequest
from whowhen.schema import LABELS, RUNS, STEPS, read_table
from whowhen.taxonomy import load_taxonomy

log = logging.getLogger(__name__)

FORMAT = "whowhen-training/1"
DEFAULT_ATTRIBUTOR = LLMAttributor("all_at_once", "")
Modes = list[str] | dict[str, str]


def _splits(include_dev: bool) -> tuple[str, ...]:
    return ("train", "dev") if include_dev else ("train",)


def gold_reason(agent: str, step: int, mode: str | None, definitions: dict[str, str]) -> str:
    """A one-sentence reason for labels that carry none (injected ones): who, where, the
    mode, and the mode's taxonomy definition when known."""
    text = f"{agent} made the decisive error at step {step}"
    if mode:
        text += f" ({mode})"
        if definitions.get(mode):
            text += f": {definitions[mode].strip().rstrip('.')}"
    return text + "."


def training_items(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    labels: pl.DataFrame,
    include_dev: bool = False,
    modes: Modes | None = None,
    attributor: LLMAttributor = DEFAULT_ATTRIBUTOR,
    definitions: dict[str, str] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """(items, skipped). One item per labelled run of the train (and dev) split, ordered by
    split then run_id. A run is skipped, with a reason, when its gold agent or step is not
    among the agent steps the attributor may name (such a target could never be parsed)."""
    if getattr(attributor, "with_media", False):
        raise WhowhenError("the training export is text-only: use an attributor without media")
    modes = modes or []
    mode_ids = list(modes)
    definitions = definitions or (modes if isinstance(modes, dict) else {})
    rows, wanted = _labelled_rows(runs, labels, _splits(include_dev))
    mine = steps.filter(pl.col("run_id").is_in(wanted))
    by_run = {k[0]: f for k, f in mine.group_by("run_id")}
    cands = agent_steps(mine)
    cand_by_run = {k[0]: f for k, f in cands.group_by("run_id")}
    items, skipped = [], []
    for row in rows:
        run_id = row["run_id"]
        run_cands = cand_by_run.get(run_id, cands.clear())
        agents = sorted(set(run_cands["actor"])) or ["unknown"]  # as attribute_llm does
        cand_steps = run_cands["step"].to_list()
        gold = dict(zip(run_cands["step"], run_cands["actor"], strict=True))
        if gold.get(row["decisive_step"]) != row["decisive_agent"]:
            skipped.append(
                {
                    "run_id": run_id,
                    "reason": f"gold ({row['decisive_agent']}, step {row['decisive_step']}) "
                    "is not an agent step of the trajectory",
                }
            )
            continue
        request = build_request(attributor, row, by_run.get(run_id, steps.clear()), agents, modes)
        items.append(_item(row, request, agents, cand_steps, mode_ids, definitions))
    return items, skipped


def _labelled_rows(
    runs: pl.DataFrame, labels: pl.DataFrame, splits: tuple[str, ...]
) -> tuple[list[dict[str, Any]], list[str]]:
    """(label rows joined with their runs, ordered by split then run_id; their run ids)."""
    chosen = labels.filter(pl.col("split").is_in(splits)).join(
        runs, on="run_id", how="inner", suffix="_run"
    )
    order = {s: i for i, s in enumerate(splits)}
    rows = sorted(chosen.iter_rows(named=True), key=lambda r: (order[r["split"]], r["run_id"]))
    return rows, chosen["run_id"].unique().to_list()


def _item(
    row: dict[str, Any],
    request: ChatRequest,
    agents: list[str],
    cand_steps: list[int],
    mode_ids: list[str],
    definitions: dict[str, str],
) -> dict[str, Any]:
    """One training item: the prompt's messages and the gold target; a mode outside the
    prompt's list is dropped (the model could never answer it)."""
    mode = row["mode"] if row["mode"] and (not mode_ids or row["mode"] in mode_ids) else None
    return {
        "run_id": row["run_id"],
        "split": row["split"],
        "benchmark": row["benchmark"],
        "system": row["system"],
        "prompt": [{"role": m.role, "content": m.joined_text()} for m in request.messages],
        "agents": agents,
        "steps": cand_steps,
        "gold_agent": row["decisive_agent"],
        "gold_step": row["decisive_step"],
        "gold_mode": mode,
        "gold_reason": row["reason"]
        or gold_reason(row["decisive_agent"], row["decisive_step"], mode, definitions),
    }


def gold_answer(item: dict[str, Any]) -> str:
    """The assistant target: the JSON object the prompt asks for, keys in the prompt's order."""
    return json.dumps(
        {
            "agent": item["gold_agent"],
            "step": item["gold_step"],
            "mode": item["gold_mode"],
            "reason": item["gold_reason"],
        },
        ensure_ascii=False,
    )


def _meta(item: dict[str, Any]) -> dict[str, Any]:
    return {k: item[k] for k in ("run_id", "split", "benchmark", "system")}


def sft_record(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "messages": [*item["prompt"], {"role": "assistant", "content": gold_answer(item)}],
        **_meta(item),
    }


def rl_record(item: dict[str, Any], sigma: float, agent_weight: float) -> dict[str, Any]:
    """Prompt plus what `whowhen.attribution.reward.reward_fn` needs to score a completion."""
    return {
        "prompt": item["prompt"],
        "gold_agent": item["gold_agent"],
        "gold_step": item["gold_step"],
        "gold_mode": item["gold_mode"],
        "agents": item["agents"],
        "steps": item["steps"],
        "sigma": float(sigma),
        "agent_weight": float(agent_weight),
        **_meta(item),
    }


def to_jsonl(records: list[dict[str, Any]]) -> bytes:
    """One compact JSON object per line, UTF-8, "\\n" endings: stable bytes."""
    return "".join(
        json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records
    ).encode("utf-8")


def build_training(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    labels: pl.DataFrame,
    sigma: float = DEFAULT_SIGMA,
    agent_weight: float = DEFAULT_AGENT_WEIGHT,
    include_dev: bool = False,
    modes: Modes | None = None,
    attributor: LLMAttributor = DEFAULT_ATTRIBUTOR,
    definitions: dict[str, str] | None = None,
) -> tuple[dict[str, bytes], dict[str, Any]]:
    """({file name: bytes}, manifest) without touching the disk."""
    check_params(sigma, agent_weight)
    items, skipped = training_items(
        runs, steps, labels, include_dev, modes, attributor, definitions
    )
    files: dict[str, bytes] = {}
    counts: dict[str, int] = {}
    for split in _splits(include_dev):
        part = [i for i in items if i["split"] == split]
        counts[split] = len(part)
        if part:
            files[f"sft_{split}.jsonl"] = to_jsonl([sft_record(i) for i in part])
            files[f"rl_{split}.jsonl"] = to_jsonl([rl_record(i, sigma, agent_weight) for i in part])
    manifest = {
        "format": FORMAT,
        "counts": counts,
        "skipped": skipped,
        "prompt": {
            "protocol": attributor.protocol,
            "max_step_chars": attributor.max_step_chars,
            "with_gold_answer": attributor.with_gold_answer,
            "modes": list(modes or []),
        },
        "reward": {"formula": FORMULA, "sigma": float(sigma), "agent_weight": float(agent_weight)},
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in files.items()},
    }
    return files, manifest


def export_training(
    data: str | Path,
    out_dir: str | Path,
    sigma: float = DEFAULT_SIGMA,
    agent_weight: float = DEFAULT_AGENT_WEIGHT,
    include_dev: bool = False,
    modes: Modes | None = None,
    attributor: LLMAttributor = DEFAULT_ATTRIBUTOR,
    definitions: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Read a dataset folder (runs/steps/labels.parquet), write the JSONL files and
    manifest.json to `out_dir` atomically; return the manifest. Stale files of ours from an
    earlier export (a dev split no longer asked for) are removed."""
    try:
        check_params(sigma, agent_weight)
    except ValueError as exc:
        raise WhowhenError(str(exc), field="sigma/agent_weight") from None
    data = Path(data)
    if not data.is_dir():
        raise WhowhenError("dataset folder not found", path=str(data))
    runs = read_table(data / "runs.parquet", RUNS)
    steps = read_table(data / "steps.parquet", STEPS)
    labels = read_table(data / "labels.parquet", LABELS)
    files, manifest = build_training(
        runs, steps, labels, sigma, agent_weight, include_dev, modes, attributor, definitions
    )
    if manifest["counts"]["train"] == 0:
        present = labels["split"].fill_null("none").value_counts().sort("split").rows()
        raise WhowhenError(
            "no usable train-split items (labels by split: "
            + ", ".join(f"{s} {n}" for s, n in present)
            + "; imports are test-only, and test items are never exported)",
            path=str(data / "labels.parquet"),
        )
    out = Path(out_dir)
    for split in ("train", "dev"):
        for kind in ("sft", "rl"):
            name = f"{kind}_{split}.jsonl"
            if name not in files and (out / name).exists():
                (out / name).unlink()
    for name, blob in files.items():
        with atomic_path(out / name) as tmp:
            Path(tmp).write_bytes(blob)
    write_json(out / "manifest.json", manifest)
    log.info(
        "training export: %s items, %d skipped -> %s",
        manifest["counts"],
        len(manifest["skipped"]),
        out,
    )
    return manifest


def taxonomy_modes(path: str | Path) -> tuple[list[str], dict[str, str]]:
    """(mode ids, {id: definition}) of a taxonomy file: the ids go into the prompt exactly as
    the attribution stage sends them, the definitions only into the gold reasons."""
    taxonomy = load_taxonomy(path)
    return [m.id for m in taxonomy.modes], {m.id: m.definition for m in taxonomy.modes}
