"""`whowhen list [KIND]`: what a config or a command can name, read from the registries
(plug-ins installed beside whowhen included), so a user never has to read the source to
learn which benchmarks, systems, attributors, protocols, import formats or providers exist.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

KINDS = ("benchmarks", "systems", "frameworks", "attributors", "protocols", "formats", "providers")


def add_list_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "list",
        help="what a config can name: benchmarks, systems, frameworks, attributors, "
        "protocols, import formats, model providers (plug-ins included)",
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


def _frameworks() -> list[str]:
    """Each framework system: its framework and version, where it runs (the core install
    with an extra, or an environment of its own) and whether that is ready."""
    # deferred: a subcommand loads only the code it runs
    from whowhen.frameworks import envs
    from whowhen.frameworks.systems import FRAMEWORK_SYSTEMS, framework_version, missing_extra

    def line(name: str) -> str:
        spec = FRAMEWORK_SYSTEMS[name]
        if spec.env:
            where = f"own environment {spec.env}: {envs.state(spec.env)}"
        else:
            where = f"extra {spec.extra}: " + ("missing" if missing_extra(name) else "installed")
        return f"{name}  ({framework_version(name)}, playing {spec.plays}; {where})"

    return [line(n) for n in FRAMEWORK_SYSTEMS]


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
    "frameworks": _frameworks,
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
