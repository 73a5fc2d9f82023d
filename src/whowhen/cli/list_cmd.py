"""`whowhen list [KIND]`: what a config or a command can name, read from the registries
(plug-ins installed beside whowhen included), so a user never has to read the source to
learn which benchmarks, systems, attributors, protocols, import formats or providers exist.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

KINDS = ("benchmarks", "systems", "attributors", "protocols", "formats", "providers")


def add_list_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "list",
        help="what a config can name: benchmarks, systems, attributors, protocols, "
        "import formats, model providers (plug-ins included)",
    )
    p.add_argument("kind", nargs="?", choices=KINDS, help="one kind (default: all)")
    p.set_defaults(func=list_cmd)


def _benchmarks() -> list[str]:
    # deferred: a subcommand loads only the code it runs
    from whowhen.registry import BENCHMARKS

    return [f"{n}  ({s.modality}, {s.category})" for n, s in BENCHMARKS.items()]


def _systems() -> list[str]:
    # deferred: a subcommand loads only the code it runs
    from whowhen.registry import SYSTEM_KINDS

    def line(name: str) -> str:
        kind = SYSTEM_KINDS.get(name)
        plays = "" if kind.plays == name else f" playing {kind.plays}"
        code = ", runs code" if kind.runs_code else ""
        return f"{name}  ({kind.played_by}{plays}{code})"

    return [line(n) for n in SYSTEM_KINDS.names()]


def _attributors() -> list[str]:
    # deferred: a subcommand loads only the code it runs
    from whowhen.attribution.kinds import ATTRIBUTORS

    return [f"{n}  ({k.protocol}, {k.family})" for n, k in ATTRIBUTORS.items()]


def _protocols() -> list[str]:
    # deferred: a subcommand loads only the code it runs
    from whowhen.attribution.kinds import PROTOCOLS

    return list(PROTOCOLS.names())


def _formats() -> list[str]:
    # deferred: a subcommand loads only the code it runs
    from whowhen.imports.formats import FORMATS

    return [f"{n}  ({f.description})" for n, f in FORMATS.items()]


def _providers() -> list[str]:
    # deferred: a subcommand loads only the code it runs
    from whowhen.models.provider import known

    return list(known())


LISTS: dict[str, Callable[[], list[str]]] = {
    "benchmarks": _benchmarks,
    "systems": _systems,
    "attributors": _attributors,
    "protocols": _protocols,
    "formats": _formats,
    "providers": _providers,
}


def list_cmd(args: argparse.Namespace) -> int:
    kinds = [args.kind] if args.kind else list(KINDS)
    for i, kind in enumerate(kinds):
        if len(kinds) > 1:
            print(("\n" if i else "") + f"{kind}:")
        for line in LISTS[kind]():
            print(f"  {line}" if len(kinds) > 1 else line)
    return 0
