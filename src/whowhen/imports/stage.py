"""Imports stage: read one configured outside dataset (Who&When, a user's own JSONL or
Parquet logs) into the pipeline's tables, and list what was imported."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from whowhen.errors import WhowhenError
from whowhen.imports.common import ImportResult
from whowhen.imports.generic import import_generic
from whowhen.imports.who_and_when import TOOL_SPEAKERS, import_who_and_when
from whowhen.io import write_json
from whowhen.schema import LABELS, RUNS, read_table

log = logging.getLogger(__name__)


def import_dataset(spec: dict[str, Any], root: str | Path = ".") -> ImportResult:
    """Import one `imports:` entry of the config (with its labels file joined, if any)."""
    result = _read(spec, root)
    if spec.get("labels"):
        # deferred: only an import with a labels file loads the joiner
        from whowhen.imports.labels import attach_labels

        attach_labels(result, Path(root) / spec["labels"])
    return result


def _read(spec: dict[str, Any], root: str | Path) -> ImportResult:
    path = Path(root) / spec["path"]
    if spec["format"] == "who_and_when":
        speakers = spec.get("tool_speakers")
        return import_who_and_when(
            path, spec.get("subset"), TOOL_SPEAKERS if speakers is None else speakers
        )
    if spec["format"] in ("jsonl", "parquet"):
        return import_generic(
            path,
            spec["format"],
            spec.get("layout", "trajectories"),
            spec.get("fields"),
            spec["name"],
        )
    if spec["format"] == "inspect":
        # deferred: only an Inspect import loads the log reader (and inspect_ai)
        from whowhen.imports.inspect_log import import_inspect

        return import_inspect(path)
    if spec["format"] == "otel":
        # deferred: only a trace import loads the trace reader
        from whowhen.imports.otel import OtelOptions, import_otel, load_outcomes

        outcomes = spec.get("outcomes")
        options = OtelOptions(
            spec.get("agent_attribute"),
            spec.get("success_attribute"),
            load_outcomes(Path(root) / outcomes) if outcomes else {},
        )
        return import_otel(path, options)
    raise WhowhenError(f"unknown import format {spec['format']!r}", field="imports.format")


def stage(params: dict, inputs: object, outputs: dict, wildcards: dict) -> None:
    """Snakemake edge: import one configured dataset into `results/imports/<name>/`."""
    spec = params["spec"]
    if spec.get("optional") and not Path(spec["path"]).exists():
        log.warning(
            "import %s: %s is absent (optional): writing an empty dataset",
            spec["name"],
            spec["path"],
        )
        _write(ImportResult(), spec, outputs)
        return
    result = import_dataset(spec)
    for error in result.errors:
        log.warning("skipped: %s", error)
    for warning in result.warnings:
        log.warning("label: %s", warning)
    if result.n_runs == 0:
        raise WhowhenError(
            f"nothing imported ({len(result.errors)} bad records)", path=params["spec"]["path"]
        )
    paths = _write(result, spec, outputs)
    log.info(
        "imported %s: %d runs, %d skipped -> %s",
        params["spec"]["name"],
        result.n_runs,
        len(result.errors),
        paths["runs"].parent,
    )


def _write(result: ImportResult, spec: dict[str, Any], outputs: dict) -> dict[str, Path]:
    """The tables, and `manifest.json` beside them where the rule declares it (a workflow
    parsed before it was declared runs on without one)."""
    paths = result.write(Path(outputs["runs"]).parent)
    if "manifest" in outputs:
        paths["manifest"] = result.write_manifest(outputs["manifest"], spec["format"])
    return paths


def manifest_stage(params: dict, inputs: dict, outputs: dict, wildcards: dict) -> None:
    """Snakemake edge: what was imported, per dataset (also gives DVC a stable output)."""
    summary = {
        name: {"runs": read_table(runs, RUNS).height, "labels": read_table(labels, LABELS).height}
        for name, runs, labels in zip(
            params["names"], inputs["runs"], inputs["labels"], strict=True
        )
    }
    write_json(outputs["manifest"], summary)
