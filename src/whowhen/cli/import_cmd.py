"""`whowhen import FORMAT PATH -o OUT`: one subcommand per registered import format
(`whowhen.imports.formats.FORMATS`, plug-ins included), its flags turned into the keys of
a config `imports:` entry, so the command and the pipeline's stage make one reader call."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import polars as pl

from whowhen.cli.commands import format_table, plural
from whowhen.defaults import schema
from whowhen.errors import WhowhenError, preview
from whowhen.imports.formats import FORMATS, ImportFormat
from whowhen.imports.generic import load_mapping
from whowhen.imports.stage import import_labelled
from whowhen.schema import PREDICTIONS, RUNS, STEPS, read_table, write_table

DATASET_NAME = "imported"
"""The dataset name of a command-line import that takes one (a config entry names its own)."""


def _entry_schema() -> dict[str, Any]:
    """The schema of one `imports:` entry's keys: choices and defaults come from there."""
    return schema()["properties"]["imports"]["items"]["properties"]


def _flags(keys: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Entry key -> its flag and argparse settings. A key not listed here (a plug-in
    format's) gets `--key-with-dashes VALUE`."""
    return {
        "subset": (
            "--subset",
            {
                "choices": keys["subset"]["enum"],
                "help": "treat every file as this subset (default: detected per file from its "
                "entries)",
            },
        ),
        "tool_speakers": (
            "--tool-speakers",
            {
                "metavar": "NAME[,NAME...]",
                "type": _names,
                "help": "speakers whose steps are tool output, imported as observations "
                "(default: Computer_terminal,ComputerTerminal; '' for none)",
            },
        ),
        "fields": (
            "--mapping",
            {
                "metavar": "YAML",
                "help": "column -> source field mapping (the `fields` of a config import); "
                "defaults follow Who&When names",
            },
        ),
        "layout": (
            "--layout",
            {
                "choices": keys["layout"]["enum"],
                "help": "one record per run (default) or one record per step",
            },
        ),
        "name": ("--name", {"help": f"dataset name (default: {DATASET_NAME})"}),
        "agent_attribute": (
            "--agent-attribute",
            {
                "metavar": "KEY",
                "help": "span attribute naming the agent, where neither agent spans nor "
                "gen_ai.agent.name do (e.g. graph.node.name)",
            },
        ),
        "success_attribute": (
            "--success-attribute",
            {
                "metavar": "KEY",
                "help": "span attribute saying whether the run succeeded (true/false, ok, 1, ...)",
            },
        ),
        "outcomes": (
            "--outcomes",
            {
                "metavar": "FILE",
                "help": "trace id -> success: a JSON object, or JSONL/CSV with trace_id and "
                "success",
            },
        ),
    }


def _names(text: str) -> list[str]:
    """`A, B` -> [A, B]; '' -> none."""
    return [name.strip() for name in text.split(",") if name.strip()]


def _flag(key: str, flags: dict[str, tuple[str, dict[str, Any]]]) -> tuple[str, dict[str, Any]]:
    return flags.get(key, ("--" + key.replace("_", "-"), {"metavar": "VALUE"}))


def add_import_parser(sub: argparse._SubParsersAction) -> None:
    """`import`, with a subcommand per format. Every format's subcommand accepts every
    option flag (hidden where it does not apply), so a misplaced one is one line naming
    the formats it applies to, not argparse's `unrecognized arguments`."""
    imp = sub.add_parser("import", help="import trajectories into runs/steps/labels tables")
    try:
        formats = list(FORMATS.items())
    except WhowhenError as exc:  # a broken plug-in: `import` says so, other commands work
        imp.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        imp.set_defaults(func=_broken(exc))
        return
    isub = imp.add_subparsers(dest="format", required=True, metavar="FORMAT")
    taken = {name for name, _ in formats}
    flags = _flags(_entry_schema())
    every = list(dict.fromkeys([*flags, *(o for _, fmt in formats for o in fmt.options)]))
    for name, fmt in formats:
        alias = name.replace("_", "-")  # who-and-when, as the docs spell it
        aliases = [alias] if alias not in taken else []
        taken.update(aliases)
        p = isub.add_parser(name, aliases=aliases, help=fmt.description)
        p.add_argument("path", metavar=fmt.metavar, help=fmt.path_help)
        for key in every:
            flag, settings = _flag(key, flags)
            if key in fmt.options:
                p.add_argument(flag, dest=key, **settings)
            else:  # accepted, so that `import_cmd` can say where it applies
                p.add_argument(flag, dest=key, help=argparse.SUPPRESS)
        _common_options(p)
        p.set_defaults(func=import_cmd, import_format=name, option_keys=every)


def _common_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--out", required=True, metavar="OUT", help="output folder")
    p.add_argument(
        "--labels",
        metavar="FILE",
        help="join labels to runs that came without: CSV, JSONL or JSON rows of run_id (or "
        "trace_id), agent, step, optional mode",
    )
    p.add_argument(
        "--strict", action="store_true", help="exit 1 if any record could not be imported"
    )


def _broken(exc: WhowhenError) -> Any:
    def fail(args: argparse.Namespace) -> int:
        raise exc

    return fail


def options(args: argparse.Namespace, fmt: ImportFormat) -> dict[str, Any]:
    """The command line as a config `imports:` entry: the keys the given flags set, the rest
    left to the schema's defaults (as the config validator fills an entry)."""
    flags = _flags(_entry_schema())
    entry: dict[str, Any] = {"name": DATASET_NAME, "format": fmt.name, "path": args.path}
    for key in args.option_keys:
        value = getattr(args, key)
        if value is None:
            continue
        if key not in fmt.options:
            takers = [n for n, f in FORMATS.items() if key in f.options]
            raise WhowhenError(
                f"{_flag(key, flags)[0]} applies to {', '.join(takers)} only, not {fmt.name}"
            )
        entry[key] = load_mapping(value) if key == "fields" else value
    if args.labels:
        entry["labels"] = args.labels
    return entry


def import_cmd(args: argparse.Namespace) -> int:
    fmt = FORMATS.get(args.import_format)
    result, labelled = import_labelled(options(args, fmt), None)
    for error in result.errors:
        print(f"skipped: {error}", file=sys.stderr)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if result.n_runs == 0:
        raise WhowhenError(f"nothing imported ({len(result.errors)} bad records)", path=args.path)
    before = attributor_inputs_of(Path(args.out))
    result.write(args.out)
    result.write_manifest(Path(args.out) / "manifest.json", fmt.name)
    tables = result.tables()
    dropped = drop_stale_predictions(Path(args.out), before, attributor_inputs(tables))
    by = tables["runs"].group_by("benchmark", "subset").len().sort("benchmark", "subset")
    print(format_table(by.rename({"len": "runs"})))
    print(
        f"imported {result.n_runs} runs ({tables['steps'].height} steps), "
        f"skipped {len(result.errors)} -> {args.out}"
        + (f"; {labelled} labelled from {args.labels}" if args.labels else "")
    )
    if dropped:
        print(dropped)
    return 1 if args.strict and result.errors else 0


RUN_INPUTS = ("question", "gold_answer", "final_answer")
STEP_INPUTS = ("step", "actor", "role", "kind", "content", "tool", "tool_args", "media")
"""What an attributor reads of a run: its task and answers, and each step as shown."""


def attributor_inputs(tables: dict[str, pl.DataFrame]) -> dict[str, str]:
    """Run id -> a digest of what an attributor reads of that run (`RUN_INPUTS`,
    `STEP_INPUTS`): equal digests, equal predictions."""
    digests = {
        row[0]: hashlib.sha256(json.dumps(row[1:], default=str).encode())
        for row in tables["runs"].select("run_id", *RUN_INPUTS).iter_rows()
    }
    for row in tables["steps"].sort("run_id", "step").select("run_id", *STEP_INPUTS).iter_rows():
        if row[0] in digests:
            digests[row[0]].update(json.dumps(row[1:], default=str).encode())
    return {run_id: digest.hexdigest() for run_id, digest in digests.items()}


def attributor_inputs_of(folder: Path) -> dict[str, str] | None:
    """`attributor_inputs` of the dataset already in `folder` ({} where there is none);
    None where its tables cannot be read, so no prediction there can be checked."""
    if not (folder / "runs.parquet").exists():
        return {}
    try:
        tables = {
            "runs": read_table(folder / "runs.parquet", RUNS),
            "steps": read_table(folder / "steps.parquet", STEPS),
        }
    except WhowhenError:
        return None
    return attributor_inputs(tables)


def drop_stale_predictions(
    folder: Path, before: dict[str, str] | None, after: dict[str, str]
) -> str | None:
    """Delete from `folder/predictions/` the rows of every run whose steps (or task) this
    import changed, or that it no longer has; the line saying so, or None.

    Deleted rather than refused: importing again is how changed traces come in, and
    refusing would leave the user deleting files by hand. Predictions of unchanged runs
    stay valid and are kept; the runs dropped count as `missing` in `score`, whose
    warning names the attributors to run again (an LLM's answers to unchanged prompts
    come back from the response cache). Kept, they would be scored against steps they
    were never made on. A file left empty is removed; one that cannot be read is named
    and left as it is."""
    files = sorted((folder / "predictions").glob("*.parquet"))
    stale: set[str] = set()
    rows = touched = 0
    for path in files:
        try:
            predictions = read_table(path, PREDICTIONS)
        except WhowhenError as exc:
            print(f"warning: not checked against the new steps: {exc}", file=sys.stderr)
            continue
        old = [
            r
            for r in predictions["run_id"].unique().to_list()
            if before is None or r not in before or before[r] != after.get(r)
        ]
        if not old:
            continue
        stale.update(old)
        rows += predictions.filter(pl.col("run_id").is_in(old)).height
        touched += 1
        kept = predictions.filter(~pl.col("run_id").is_in(old))
        if kept.is_empty():
            path.unlink()
        else:
            write_table(kept, PREDICTIONS, path)
    if not stale:
        return None
    changed = sorted(r for r in stale if r in after)
    gone = sorted(r for r in stale if r not in after)
    why = []
    if changed:
        why.append(f"{plural(len(changed), 'run')} whose steps changed ({_some(changed)})")
    if gone:
        why.append(f"{plural(len(gone), 'run')} no longer imported ({_some(gone)})")
    if before is None:
        why = [f"{plural(len(stale), 'run')} (the previous tables could not be read)"]
    return (
        f"dropped {plural(rows, 'prediction')} of {' and '.join(why)} from "
        f"{plural(touched, 'file')} in "
        f"{folder / 'predictions'}: run `whowhen attribute` again for them"
    )


def _some(ids: list[str], shown: int = 3) -> str:
    """The first `shown` ids, and how many more."""
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(preview(i, 40, quote=not i.isprintable()) for i in ids[:shown]) + more
