"""`whowhen import FORMAT PATH -o OUT`: one subcommand per registered import format
(`whowhen.imports.formats.FORMATS`, plug-ins included), its flags turned into the keys of
a config `imports:` entry, so the command and the pipeline's stage make one reader call."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from whowhen.cli.commands import format_table
from whowhen.defaults import schema
from whowhen.errors import WhowhenError
from whowhen.imports.formats import FORMATS, ImportFormat
from whowhen.imports.generic import load_mapping
from whowhen.imports.stage import import_labelled

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
    result.write(args.out)
    result.write_manifest(Path(args.out) / "manifest.json", fmt.name)
    tables = result.tables()
    by = tables["runs"].group_by("benchmark", "subset").len().sort("benchmark", "subset")
    print(format_table(by.rename({"len": "runs"})))
    print(
        f"imported {result.n_runs} runs ({tables['steps'].height} steps), "
        f"skipped {len(result.errors)} -> {args.out}"
        + (f"; {labelled} labelled from {args.labels}" if args.labels else "")
    )
    return 1 if args.strict and result.errors else 0
