"""Taxonomy stage: load and validate the failure taxonomy, and summarise natural failures.

The taxonomy is a versioned YAML in config. The overview counts failed rollouts per
(benchmark, system); annotating *which mode* each natural failure shows is the
counterfactual-replay work of a later stage and is not claimed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import polars as pl
import yaml

from whowhen.errors import WhowhenError
from whowhen.io import write_text
from whowhen.schema import (
    MODE_OVERVIEW,
    OVERVIEW,
    PREDICTIONS,
    RUNS,
    SLIPS,
    STEPS,
    empty,
    read_tables,
    write_table,
)

TAXONOMY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["version", "categories", "modes"],
    "additionalProperties": False,
    "properties": {
        "version": {"type": "integer", "minimum": 1},
        "categories": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {"type": "string"},
        },
        "modes": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "category", "definition", "example", "action_types"],
                "properties": {
                    "id": {"type": "string", "pattern": r"^[a-z_]+\.[a-z_]+$"},
                    "category": {"type": "string"},
                    "definition": {"type": "string"},
                    "example": {"type": "string"},
                    "action_types": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                },
            },
        },
    },
}


@dataclass(frozen=True)
class Mode:
    id: str
    category: str
    definition: str
    example: str
    action_types: tuple[str, ...]


@dataclass(frozen=True)
class Taxonomy:
    version: int
    categories: dict[str, str]
    modes: tuple[Mode, ...]

    def mode(self, mode_id: str) -> Mode:
        for m in self.modes:
            if m.id == mode_id:
                return m
        raise WhowhenError(f"unknown failure mode {mode_id!r}", field="mode")

    def modes_for(self, action_type: str | None) -> list[Mode]:
        return [m for m in self.modes if action_type in m.action_types]

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "categories": self.categories,
            "modes": [
                {
                    "id": m.id,
                    "category": m.category,
                    "definition": m.definition,
                    "example": m.example,
                    "action_types": list(m.action_types),
                }
                for m in self.modes
            ],
        }


def parse_taxonomy(data: Any, source: str = "<taxonomy>") -> Taxonomy:
    """Validate a taxonomy document; errors name the file and the offending field."""
    try:
        jsonschema.validate(data, TAXONOMY_SCHEMA)
    except jsonschema.ValidationError as exc:
        where = ".".join(str(p) for p in exc.absolute_path) or "(top level)"
        raise WhowhenError(exc.message, path=source, field=where) from None
    modes = tuple(
        Mode(m["id"], m["category"], m["definition"], m["example"], tuple(m["action_types"]))
        for m in data["modes"]
    )
    seen: set[str] = set()
    for i, m in enumerate(modes):
        if m.category not in data["categories"]:
            raise WhowhenError(
                f"category {m.category!r} is not declared", path=source, field=f"modes.{i}.category"
            )
        if m.id in seen:
            raise WhowhenError(f"duplicate mode id {m.id!r}", path=source, field=f"modes.{i}.id")
        seen.add(m.id)
    return Taxonomy(data["version"], dict(data["categories"]), modes)


def load_taxonomy(path: str | Path) -> Taxonomy:
    path = Path(path)
    if not path.exists():
        raise WhowhenError("taxonomy file not found", path=str(path))
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise WhowhenError(f"not valid YAML ({str(exc).splitlines()[0]})", path=str(path)) from None
    return parse_taxonomy(data, str(path))


def failure_overview(runs: pl.DataFrame, slips: pl.DataFrame | None = None) -> pl.DataFrame:
    """Rollouts and natural failures per (benchmark, system), with the slip model's log:
    how many slips, in how many runs, and how many slipped runs still succeeded."""
    slips = slips if slips is not None else empty(SLIPS)
    per_run = slips.group_by("run_id").agg(pl.len().cast(pl.Int64).alias("slips"))
    return (
        runs.join(per_run, on="run_id", how="left")
        .with_columns(pl.col("slips").fill_null(0))
        .group_by("benchmark", "system")
        .agg(
            pl.col("modality").first(),
            pl.col("category").first(),
            pl.len().cast(pl.Int64).alias("n_runs"),
            (~pl.col("success")).sum().cast(pl.Int64).alias("n_failed"),
            pl.col("slips").sum().cast(pl.Int64).alias("n_slips"),
            (pl.col("slips") > 0).sum().cast(pl.Int64).alias("n_slipped_runs"),
            ((pl.col("slips") > 0) & pl.col("success")).sum().cast(pl.Int64).alias("n_recovered"),
        )
        .with_columns((pl.col("n_failed") / pl.col("n_runs")).alias("failure_rate"))
        .sort("benchmark", "system")
    )


def mode_overview(annotations: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """Counts and shares of annotated modes among natural failures, per (benchmark, system)."""
    joined = annotations.filter(pl.col("mode").is_not_null()).join(
        runs.select("run_id", "benchmark", "system"), on="run_id"
    )
    return (
        joined.group_by("benchmark", "system", "mode")
        .agg(pl.len().cast(pl.Int64).alias("count"))
        .with_columns(
            (pl.col("count") / pl.col("count").sum().over("benchmark", "system")).alias("share")
        )
        .sort("benchmark", "system", "mode")
    )


def annotate_failures(
    runs: pl.DataFrame, steps: pl.DataFrame, taxonomy: Taxonomy, client: Any
) -> pl.DataFrame:
    """LLM annotator: the decisive agent, step and mode of each failed rollout, with the
    taxonomy (ids and definitions) in the prompt and the mode constrained to it."""
    from whowhen.attribution.llm import LLMAttributor, attribute_llm

    failed = runs.filter(~pl.col("success"))
    annotator = LLMAttributor(f"annotator:{client.spec.model_id}", client.spec.model_id)
    modes = {m.id: m.definition for m in taxonomy.modes}
    return attribute_llm(failed, steps, annotator, client, modes)


def stage(params: dict[str, Any], inputs: Any, outputs: Any, wildcards: Any) -> None:
    """Snakemake edge: validated taxonomy copy, the natural-failure overview, and (with an
    annotator model) mode annotations of the natural failures and their mode overview."""
    taxonomy = load_taxonomy(inputs["taxonomy"])
    write_text(outputs["taxonomy"], yaml.safe_dump(taxonomy.to_dict(), sort_keys=False))
    runs = read_tables(list(inputs["runs"]), RUNS)
    slips = read_tables(list(inputs["slips"]), SLIPS)
    write_table(failure_overview(runs, slips), OVERVIEW, outputs["overview"])
    annotations = empty(PREDICTIONS)
    model = params["taxonomy"].get("annotator")
    if model:
        from whowhen.models import make_client

        client = make_client(model, {**params["llm"], "progress": False}, params["models"])
        annotations = annotate_failures(
            runs, read_tables(list(inputs["steps"]), STEPS), taxonomy, client
        )
    write_table(annotations, PREDICTIONS, outputs["annotations"])
    write_table(mode_overview(annotations, runs), MODE_OVERVIEW, outputs["mode_overview"])
