"""`whowhen` command line. The foundation ships the config check and the dvc.yaml generator;
the one-off import/attribute/score/show commands come with the data-import work."""

from __future__ import annotations

import argparse
import sys

from whowhen import __version__
from whowhen.errors import WhowhenError


def _check_config(args: argparse.Namespace) -> int:
    from whowhen.config import load_config

    config = load_config(args.path)
    print(
        f"{args.path}: valid ({', '.join(config['benchmarks'])} x {', '.join(config['systems'])})"
    )
    return 0


def _dvc_yaml(args: argparse.Namespace) -> int:
    from whowhen import dvcgen

    return dvcgen.main(["--check"] if args.check else [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="whowhen",
        description="Failure attribution for "
        "LLM agent systems: build exact-label benchmarks, "
        "evaluate attributors.",
    )
    parser.add_argument("--version", action="version", version=f"whowhen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check-config", help="validate a pipeline config file")
    p.add_argument("path", nargs="?", default="config/config.yaml")
    p.set_defaults(func=_check_config)
    p = sub.add_parser("dvc-yaml", help="regenerate dvc.yaml from the Snakemake workflow")
    p.add_argument("--check", action="store_true", help="only check it is up to date")
    p.set_defaults(func=_dvc_yaml)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except WhowhenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
