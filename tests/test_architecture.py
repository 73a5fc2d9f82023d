"""The layering holds: the import graph of src/whowhen, read from the AST, has no cycle;
an import inside a function says what heavy dependency it defers; lower layers never
import higher ones; a benchmark package imports no other benchmark package; no test module
imports another test module (shared test code lives in helper modules)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from .conftest import ROOT

SRC = ROOT / "src"


def _module_name(path: Path) -> str:
    name = ".".join(path.relative_to(SRC).with_suffix("").parts)
    return name.removesuffix(".__init__")


MODULES = {_module_name(p): p for p in sorted((SRC / "whowhen").rglob("*.py"))}


def _resolve(name: str) -> str | None:
    """The most specific whowhen module `name` (module or module.attribute) refers to."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> list[tuple[ast.stmt, str, bool]]:
    """(node, imported module, inside a function?) for every whowhen import of `module`."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    in_function = {
        id(sub)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for sub in ast.walk(node)
    }
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names = [f"{base}.{a.name}" for a in node.names]
        for name in names:
            target = _resolve(name) if name.startswith("whowhen") else None
            if target and target != module:
                found.append((node, target, id(node) in in_function))
    return found


@functools.cache
def _graph() -> dict[str, set[str]]:
    """module -> the whowhen modules it imports (read when a test first asks: the xdist
    workers that run no test of this file never parse the package)."""
    return {m: {t for _, t, _ in _imports(m)} for m in MODULES}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as a path (first node repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the DFS stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_import_graph_has_no_cycle() -> None:
    assert len(_graph()) > 100  # the whole package was read
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def _package(module: str) -> str | None:
    """The top-level unit of `module`: `whowhen.X` for whatever X (module or package) is
    directly under src/whowhen; None for `whowhen` itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """`graph` folded onto top-level units, imports within one unit left out."""
    folded: dict[str, set[str]] = {}
    for module, targets in graph.items():
        if (source := _package(module)) is None:
            continue
        folded.setdefault(source, set())
        for target in targets:
            if (dest := _package(target)) is not None and dest != source:
                folded[source].add(dest)
                folded.setdefault(dest, set())
    return folded


def test_the_package_graph_has_no_cycle() -> None:
    """Layers hold between whole units too: a package whose modules straddle two layers
    (a loader below, a stage above) would let the layers import each other through it."""
    packages = _package_graph(_graph())
    assert {"benchmarks", "injection", "registry", "attribution", "taxonomy"} <= set(packages)
    cycle = _cycle(packages)
    assert cycle is None, "package import cycle: " + " -> ".join(cycle or [])


def test_the_package_graph_folds_modules_onto_units() -> None:
    graph = {"whowhen.a.x": {"whowhen.b", "whowhen.a.y"}, "whowhen.a.y": set(), "whowhen.b": set()}
    assert _package_graph(graph) == {"a": {"b"}, "b": set()}
    assert _cycle(_package_graph({**graph, "whowhen.b": {"whowhen.a.y"}})) == ["a", "b", "a"]


def _deferred_blocks(path: Path) -> list[tuple[int, int, list[str]]]:
    """(first line, last line, whowhen modules) of each run of consecutive imports in a
    function body that imports whowhen code."""
    tree = ast.parse(path.read_text(), filename=str(path))
    blocks = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        run: list[ast.stmt] = []
        for stmt in [*fn.body, None]:
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                run.append(stmt)
                continue
            names = [
                n.module if isinstance(n, ast.ImportFrom) else a.name for n in run for a in n.names
            ]
            ours = [n for n in names if n and n.split(".")[0] == "whowhen"]
            if ours:
                blocks.append((run[0].lineno, run[-1].end_lineno or run[-1].lineno, ours))
            run = []
    return blocks


def test_imports_inside_functions_name_what_they_defer() -> None:
    """An import inside a function is only there to defer a heavy dependency, and says so
    (a `# deferred: ...` comment above or among the imports); never to dodge a cycle."""
    unexplained = []
    for module, path in MODULES.items():
        lines = path.read_text().splitlines()
        for first, last, names in _deferred_blocks(path):
            if not any("deferred:" in line for line in lines[first - 2 : last]):
                unexplained.append(f"{module}:{first} imports {', '.join(sorted(set(names)))}")
    assert not unexplained, "\n".join(unexplained)


def _layer_of(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize(
    ("lower", "forbidden"),
    [
        # the model layer knows no benchmark, agent, stage or stand-in
        (
            "whowhen.models",
            (
                "whowhen.benchmarks",
                "whowhen.agents",
                "whowhen.registry",
                "whowhen.injection",
                "whowhen.operators",
                "whowhen.attribution",
                "whowhen.analysis",
            ),
        ),
        # the runtime knows nothing above it
        ("whowhen.runtime", ("whowhen.benchmarks", "whowhen.agents", "whowhen.models")),
        # benchmark packages sit below the registry and the stages
        (
            "whowhen.benchmarks",
            (
                "whowhen.registry",
                "whowhen.operators",
                "whowhen.injection.plan",
                "whowhen.rollouts",
                "whowhen.continuation",
                "whowhen.attribution",
                "whowhen.analysis",
            ),
        ),
        ("whowhen.tools", ("whowhen.benchmarks", "whowhen.agents", "whowhen.registry")),
        # the model gateway is framework- and benchmark-neutral: adapters sit above it
        (
            "whowhen.gateway",
            (
                "whowhen.benchmarks",
                "whowhen.agents",
                "whowhen.registry",
                "whowhen.standin",
                "whowhen.frameworks",
                "whowhen.rollouts",
                "whowhen.continuation",
            ),
        ),
    ],
)
def test_lower_layers_do_not_import_higher_ones(lower: str, forbidden: tuple[str, ...]) -> None:
    bad = [
        f"{m} -> {t}"
        for m, targets in _graph().items()
        if _layer_of(m, (lower,))
        for t in targets
        if _layer_of(t, forbidden)
    ]
    assert not bad, "\n".join(bad)


def test_a_benchmark_package_imports_no_other_benchmark_package() -> None:
    packages = {
        m.split(".")[2]
        for m in MODULES
        if m.startswith("whowhen.benchmarks.") and MODULES[m].name == "__init__.py"
    }
    assert len(packages) >= 8
    bad = [
        f"{m} -> {t}"
        for m, targets in _graph().items()
        if m.startswith("whowhen.benchmarks.") and m.split(".")[2] in packages
        for t in targets
        if t.startswith("whowhen.benchmarks.")
        and t.split(".")[2] in packages
        and t.split(".")[2] != m.split(".")[2]
    ]
    assert not bad, "\n".join(bad)


TESTS = ROOT / "tests"


def _test_module_imports(source: str) -> list[str]:
    """The test modules (`test_*` in the tests package) that `source` imports, anywhere in
    the file: `from .test_x import`, `from tests.test_x import`, `import tests.test_x`,
    `from . import test_x`, `from tests import test_x`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("tests.test_")]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            package = (node.level == 1 and not module) or (node.level == 0 and module == "tests")
            if package:
                found += [a.name for a in node.names if a.name.startswith("test_")]
            elif (node.level == 1 and module.startswith("test_")) or (
                node.level == 0 and module.startswith("tests.test_")
            ):
                found.append(module)
    return found


def test_the_test_import_finder_finds_every_form() -> None:
    source = """
from .test_a import x
from tests.test_b import y
import tests.test_c
from . import test_d, helpers
from tests import test_e


def f():
    from .test_f import z
from .helpers import pipeline
from .conftest import ROOT
import tests.helpers
"""
    found = _test_module_imports(source)
    assert found == ["test_a", "tests.test_b", "tests.test_c", "test_d", "test_e", "test_f"]


def test_no_test_module_imports_another() -> None:
    """A test module that imports another runs or skips with it, and a renamed test breaks
    an unrelated file: code shared by tests lives in helper modules, not in test modules."""
    files = sorted(TESTS.glob("test_*.py"))
    assert len(files) > 50  # the whole suite was read
    bad = [
        f"{path.name} imports {name}"
        for path in files
        for name in _test_module_imports(path.read_text())
    ]
    assert not bad, "\n".join(bad)
