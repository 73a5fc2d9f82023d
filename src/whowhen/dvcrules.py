"""What each rule file of the Snakemake workflow reads, from the rules' own source.

Snakemake reruns a job when its params change and schedules jobs from the inputs its rules
ask for; `dvc.yaml` must track the same config keys, or `dvc repro` skips a stage that
Snakemake would rerun. So the keys are read here from the rules themselves: each rule file
is translated to Python by Snakemake's own parser, and every `config[...]` (or
`config.get(...)`) chain in a rule's `input`, `output` and `params` is collected, through
the module-level names and helper functions of the workflow (`bench_config`, `SHARDS`,
`IMPORTS`, ...) and through `rules.<name>.<input|output>` references. Inputs and outputs
count because they decide which jobs exist (`benchmarks`, `systems`, the import names).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from snakemake import parser as smk_parser
from snakemake.sourcecache import LocalSourceFile

SNAKEFILE = "Snakefile"
READ_BY_JOBS = ("input", "output", "params")
"""The rule directives whose values decide what a job computes or whether it exists (log
paths, priorities, environments and scripts do not; the script's code is a code dep)."""
Key = tuple[str, ...]


@dataclass
class _Symbol:
    """A module-level name, helper function or rule directive: the config keys it reads
    itself and the other symbols it refers to."""

    keys: set[Key] = field(default_factory=set)
    refs: set[str] = field(default_factory=set)


@dataclass
class RuleFile:
    """One included rule file: its rules and the directive nodes of each."""

    path: Path
    rules: dict[str, dict[str, list[ast.expr]]]


class _Workflow:
    """The least of a Snakemake workflow object that its parser uses: the source opener."""

    class sourcecache:  # the attribute name Snakemake's parser reads
        @staticmethod
        def open(source: LocalSourceFile):  # type: ignore[no-untyped-def]
            return open(source.get_path_or_uri(secret_free=True), encoding="utf-8")


def translate(path: Path) -> ast.Module:
    """A Snakemake file as the Python module Snakemake itself makes of it."""
    code, _ = smk_parser.parse(LocalSourceFile(str(path)), _Workflow(), {})  # type: ignore[arg-type]
    return ast.parse(code, filename=str(path))


def _call_name(node: ast.expr) -> str | None:
    """`workflow.<name>` for a decorator `@workflow.<name>(...)`, else None."""
    func = node.func if isinstance(node, ast.Call) else node
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "workflow"
    ):
        return func.attr
    return None


def _rule(node: ast.stmt) -> tuple[str, dict[str, list[ast.expr]]] | None:
    """(name, directive -> argument nodes) when `node` is a translated rule, else None."""
    if not isinstance(node, ast.FunctionDef):
        return None
    name, directives = None, {}
    for deco in node.decorator_list:
        kind = _call_name(deco)
        if kind == "rule" and isinstance(deco, ast.Call):
            name = next(k.value.value for k in deco.keywords if k.arg == "name")  # type: ignore[attr-defined]
        elif kind and isinstance(deco, ast.Call):
            directives[kind] = [*deco.args, *(k.value for k in deco.keywords)]
    return (name, directives) if name else None


def _included(tree: ast.Module) -> list[str]:
    """The files `include:` names, in order."""
    return [
        node.value.args[0].value
        for node in tree.body
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and _call_name(node.value) == "include"
        and isinstance(node.value.args[0], ast.Constant)
    ]


def _config_chain(node: ast.AST) -> tuple[Key, list[ast.AST]] | None:
    """The constant key path of a `config[...]` / `.get(...)` chain ending at `node`, and
    the chain's other expressions (variable keys, defaults); None if `node` is no chain."""
    keys: list[ast.AST] = []
    side: list[ast.AST] = []
    while not (isinstance(node, ast.Name) and node.id == "config"):
        if isinstance(node, ast.Subscript):
            keys.append(node.slice)
            node = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            keys.append(node.args[0])
            side.extend([*node.args[1:], *(k.value for k in node.keywords)])
            node = node.func.value
        else:
            return None
    path: list[str] = []
    for i, key in enumerate(reversed(keys)):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            side.extend(list(reversed(keys))[i:])  # a variable key: the path ends here
            break
        path.append(key.value)
    return tuple(path), side


def _rule_ref(node: ast.AST) -> str | None:
    """`rule NAME.DIRECTIVE` for `rules.NAME.DIRECTIVE[...]`, else None."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "rules"
    ):
        return f"rule {node.value.attr}.{node.attr}"
    return None


def _scan(nodes: list[ast.AST]) -> _Symbol:
    """The config keys `nodes` read and the names and rule directives they refer to."""
    found = _Symbol()
    todo = list(nodes)
    while todo:
        node = todo.pop()
        chain = _config_chain(node)
        if chain is not None:
            found.keys.add(chain[0])
            todo.extend(chain[1])
            continue
        ref = _rule_ref(node)
        if ref is not None:
            found.refs.add(ref)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.refs.add(node.id)
        todo.extend(ast.iter_child_nodes(node))
    return found


def _definitions(tree: ast.Module) -> Iterator[tuple[str, list[ast.AST]]]:
    """(name, defining nodes) for each module-level assignment and helper function, also
    inside module-level `if` / `try` blocks."""
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.If | ast.Try):
            todo.extend(ast.iter_child_nodes(node))  # type: ignore[arg-type]
        elif isinstance(node, ast.FunctionDef) and _rule(node) is None:
            yield node.name, [node]
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        yield name.id, [node.value]


class Rules:
    """The workflow's rule files and what their rules read from the config."""

    def __init__(self, root: Path) -> None:
        self.root = root
        snakefile = translate(root / SNAKEFILE)
        self.files: dict[str, RuleFile] = {}
        self.symbols: dict[str, _Symbol] = {}
        trees = [snakefile]
        for include in _included(snakefile):
            path = root / include
            tree = translate(path)
            trees.append(tree)
            rules = dict(r for node in tree.body if (r := _rule(node)) is not None)
            if rules:
                self.files[path.stem] = RuleFile(path, rules)
        for tree in trees:
            for name, nodes in _definitions(tree):
                symbol = self.symbols.setdefault(name, _Symbol())
                scanned = _scan(nodes)
                symbol.keys |= scanned.keys
                symbol.refs |= scanned.refs
        for rule_file in self.files.values():
            for rule, directives in rule_file.rules.items():
                for kind, nodes in directives.items():
                    self.symbols[f"rule {rule}.{kind}"] = _scan(nodes)  # type: ignore[arg-type]

    @property
    def stages(self) -> list[str]:
        """The rule files in the order the Snakefile includes them (those with rules)."""
        return list(self.files)

    def owner(self) -> dict[str, str]:
        """rule name -> the rule file (stage) that defines it."""
        return {rule: stage for stage, f in self.files.items() for rule in f.rules}

    def _keys(self, name: str, seen: set[str]) -> set[Key]:
        if name in seen or name not in self.symbols:
            return set()
        seen.add(name)
        symbol = self.symbols[name]
        return symbol.keys.union(*(self._keys(ref, seen) for ref in symbol.refs))

    def config_keys(self, stage: str) -> set[Key]:
        """Every config key path the rules of `stage` read in their inputs, outputs and
        params, directly or through the workflow's names, helpers and other rules."""
        seen: set[str] = set()
        return set().union(
            *(
                self._keys(f"rule {rule}.{kind}", seen)
                for rule in self.files[stage].rules
                for kind in READ_BY_JOBS
            )
        )

    def source_paths(self, stage: str) -> set[str]:
        """Files and folders the rules of `stage` take from the project itself, not from
        another rule: constant input paths (a pattern's folder) and report captions."""
        rule_file = self.files[stage]
        found: set[str] = set()
        for directives in rule_file.rules.values():
            for node in (n for arg in directives.get("input", []) for n in ast.walk(arg)):
                text = _constant_prefix(node)
                if text is not None and "/" in text:
                    found.add(_existing(self.root, self.root / text))
            for node in (n for arg in directives.get("output", []) for n in ast.walk(arg)):
                if isinstance(node, ast.keyword) and node.arg == "caption":
                    text = _constant_prefix(node.value)
                    if text is not None:  # relative to the rule file, as Snakemake reads it
                        found.add(_existing(self.root, rule_file.path.parent / text))
        found.discard("")
        return found


def _constant_prefix(node: ast.AST) -> str | None:
    """A string constant, or an f-string's text before its first placeholder."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split("{", 1)[0]
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def _existing(root: Path, path: Path) -> str:
    """`path` relative to `root` when it is a project file, its folder when `path` is a
    pattern's prefix; "" for paths outside the project or not there (other rules' outputs
    are edges, not sources)."""
    path = path if path.exists() else path.parent
    try:
        rel = path.resolve().relative_to(root.resolve())
    except ValueError:
        return ""
    if not path.exists() or rel == Path(".") or rel.parts[0] in {"results", "reports", "logs"}:
        return ""
    return rel.as_posix()
