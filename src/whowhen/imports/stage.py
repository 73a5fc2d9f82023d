"""Imports stage: read one configured outside dataset (any registered import format:
`formats.FORMATS`) into the pipeline's tables, and list what was imported."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from whowhen.defaults import filled
from whowhen.errors import WhowhenError
from whowhen.imports.common import ImportResult
from whowhen.imports.formats import FORMATS
from whowhen.io import write_json
from whowhen.schema import LABELS, RUNS, read_table

log = logging.getLogger(__name__)


def entry(spec: dict[str, Any]) -> dict[str, Any]:
    """An `imports:` entry as the schema fills it (the config arrives filled; a caller may
    pass a raw one), the schema being the one place its defaults are written."""
    [filled_spec] = filled("imports", [spec])  # type: ignore[arg-type]  # a list section
    return filled_spec


def import_dataset(spec: dict[str, Any], root: str | Path = ".") -> ImportResult:
    """Import one `imports:` entry of the config (with its labels file joined, if any)."""
    return import_labelled(spec, Path(root))[0]


def import_labelled(spec: dict[str, Any], root: Path | None) -> tuple[ImportResult, int]:
    """Read one entry with its format's reader and join its labels file; also how many runs
    that file labelled. `root` is the folder its paths are relative to, None for paths
    taken as given (the command line's)."""
    spec = entry(spec)
    fmt = FORMATS.get(spec["format"])
    path = Path(spec["path"]) if root is None else root / spec["path"]
    result = fmt.read(path, spec, root)
    labelled = 0
    if spec.get("labels"):
        # deferred: only an import with a labels file loads the joiner
        from whowhen.imports.labels import attach_labels

        labels = spec["labels"] if root is None else root / spec["labels"]
        labelled = attach_labels(result, labels)
    return result, labelled


def stage(params: dict, inputs: object, outputs: dict, wildcards: dict) -> None:
    """Snakemake edge: import one configured dataset into `results/imports/<name>/`."""
    spec = entry(params["spec"])
    if spec["optional"] and not Path(spec["path"]).exists():
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
