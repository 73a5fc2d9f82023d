"""Seeded logic bugs in Python source, for the `reasoning.logic_bug` operator: a flipped
comparison, an off-by-one (range bounds, indices, integer operands), a swapped arithmetic
operator or a wrong return value.

Edits are spliced into the source at the offsets `ast` reports, so the rest of the program
keeps its formatting and the bug reads like a slip, not a rewrite.
"""

from __future__ import annotations

import ast
import builtins
import random
import re
from functools import lru_cache
from typing import Any

_FLIP = {
    ast.Lt: (r"<(?!=)", "<="),
    ast.LtE: (r"<=", "<"),
    ast.Gt: (r">(?!=)", ">="),
    ast.GtE: (r">=", ">"),
    ast.Eq: (r"==", "!="),
    ast.NotEq: (r"!=", "=="),
    ast.In: (r"\bin\b", "not in"),
    ast.NotIn: (r"\bnot\s+in\b", "in"),
    ast.Is: (r"\bis\b(?!\s+not)", "is not"),
    ast.IsNot: (r"\bis\s+not\b", "is"),
}
_SWAP = {
    ast.Add: (r"\+", "-"),
    ast.Sub: (r"-", "+"),
    ast.Div: (r"(?<!/)/(?!/)", "//"),
    ast.FloorDiv: (r"//", "/"),
}
Edit = tuple[ast.AST, ast.AST, str]
"""A source edit: replace the text from the end of one node to the start of the other
(an operator between them), or, with the same node twice, the node's own text."""


@lru_cache(maxsize=4)
def _offsets(source: bytes) -> list[int]:
    """Byte offset of each line's start (cached: one source gets many candidate edits)."""
    starts = [0]
    for i, byte in enumerate(source):
        if byte == 10:
            starts.append(i + 1)
    return starts


def _splice(source: str, edit: Edit) -> str | None:
    """Apply one edit at the byte offsets ast reports (so the rest keeps its formatting)."""
    first, second, new = edit
    raw, starts = source.encode(), _offsets(source.encode())
    if first is second:
        a = starts[first.lineno - 1] + first.col_offset
        b = starts[first.end_lineno - 1] + first.end_col_offset  # type: ignore[operator]
        return (raw[:a] + new.encode() + raw[b:]).decode()
    a = starts[first.end_lineno - 1] + first.end_col_offset  # type: ignore[operator]
    b = starts[second.lineno - 1] + second.col_offset
    pattern, replacement = new.split("\0")
    region, count = re.subn(pattern, replacement, raw[a:b].decode(), count=1)
    return (raw[:a] + region.encode() + raw[b:]).decode() if count else None


def _shift(node: ast.expr, source: str, delta: int) -> str:
    """An expression's text moved by one: `n` -> `n + 1`, `n - 1` -> `n`, `2` -> `3`."""
    text = ast.get_source_segment(source, node) or ast.unparse(node)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return str(node.value + delta)
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add | ast.Sub)
        and isinstance(node.right, ast.Constant)
        and type(node.right.value) is int
    ):
        k = node.right.value * (1 if isinstance(node.op, ast.Add) else -1) + delta
        left = ast.get_source_segment(source, node.left) or ast.unparse(node.left)
        return left if k == 0 else f"{left} {'+' if k > 0 else '-'} {abs(k)}"
    if isinstance(node, ast.Name | ast.Call | ast.Attribute | ast.Subscript):
        return f"{text} {'+' if delta > 0 else '-'} 1"
    return f"({text}) {'+' if delta > 0 else '-'} 1"


def _function_scope(tree: ast.Module, loops: bool = False) -> list[ast.AST]:
    """The nodes a coder writes: the entry function's body (the last top-level def) and
    anything after it. Code with a `while` loop is left alone (unless `loops`, for a
    caller that runs every edit under a time limit): a bug there, or in a helper the loop
    calls, can make the run hang until the time limit instead of failing."""
    defs = [i for i, n in enumerate(tree.body) if isinstance(n, ast.FunctionDef)]
    scope = tree.body[defs[-1] :] if defs else []
    if not loops and any(isinstance(n, ast.While) for top in scope for n in ast.walk(top)):
        return []
    return [
        node
        for top in scope
        for child in (top.body if isinstance(top, ast.FunctionDef) else [top])
        for node in ast.walk(child)
    ]


def _edits(tree: ast.Module, source: str, loops: bool = False) -> dict[str, list[Edit]]:
    """Candidate logic bugs by kind: flipped comparison, off-by-one, wrong return value."""
    kinds: dict[str, list[Edit]] = {"compare": [], "off_by_one": [], "return": [], "arith": []}
    nodes = _function_scope(tree, loops)
    names = sorted(
        {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    )
    for node in nodes:
        if isinstance(node, ast.Compare):
            for left, op, right in zip(
                [node.left, *node.comparators[:-1]], node.ops, node.comparators, strict=True
            ):
                pattern, new = _FLIP[type(op)]
                kinds["compare"].append((left, right, f"{pattern}\0{new}"))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "range":
            for arg in node.args[:2]:
                for delta in (-1, 1):
                    kinds["off_by_one"].append((arg, arg, _shift(arg, source, delta)))
        elif isinstance(node, ast.BinOp):
            if type(node.op) in _SWAP:
                pattern, new = _SWAP[type(node.op)]
                kinds["arith"].append((node.left, node.right, f"{pattern}\0{new}"))
            for operand in (node.left, node.right):
                if isinstance(operand, ast.Constant) and type(operand.value) is int:
                    kinds["off_by_one"].append((operand, operand, _shift(operand, source, 1)))
        elif isinstance(node, ast.Subscript):
            bounds = (
                [node.slice.lower, node.slice.upper]
                if isinstance(node.slice, ast.Slice)
                else [node.slice]
            )
            for bound in bounds:
                if isinstance(bound, ast.Constant) and type(bound.value) is int:
                    kinds["off_by_one"].append((bound, bound, _shift(bound, source, 1)))
        elif isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if isinstance(value, ast.Constant) and type(value.value) is bool:
                kinds["return"].append((value, value, str(not value.value)))
            elif isinstance(value, ast.Constant) and type(value.value) is int:
                kinds["return"].append((value, value, str(value.value + 1)))
            elif isinstance(value, ast.Name):
                kinds["return"] += [(value, value, n) for n in names if n != value.id]
            elif isinstance(value, ast.Compare | ast.BoolOp):
                text = ast.get_source_segment(source, value) or ast.unparse(value)
                kinds["return"].append((value, value, f"not ({text})"))
    return {k: v for k, v in kinds.items() if v}


def mutate_code(code: str, rng: random.Random) -> str | None:
    """A plausible logic bug in the function (seeded): the program still parses and its
    AST differs; None when the code has nothing to mutate."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    kinds = _edits(tree, code)
    for kind in rng.sample(sorted(kinds), len(kinds)):
        for edit in rng.sample(kinds[kind], len(kinds[kind])):
            new = _splice(code, edit)
            if _changes_program(new, tree):
                return new
    return None


def _changes_program(new: str | None, tree: ast.Module) -> bool:
    """An edit is usable when the edited source still parses and means something else."""
    if new is None:
        return False
    try:
        return ast.dump(ast.parse(new)) != ast.dump(tree)
    except SyntaxError:
        return False


def _entry(tree: ast.Module) -> ast.FunctionDef | None:
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    return defs[-1] if defs else None


def _parsed_entry(code: str) -> tuple[ast.Module, ast.FunctionDef] | None:
    """The program's syntax tree and its entry (last top-level) function, if both exist."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    entry = _entry(tree)
    return (tree, entry) if entry is not None else None


def truncate_body(code: str, rng: random.Random) -> str | None:
    """The program with the entry function's body cut short after one of its top-level
    statements (never after the last one): what a coder submits before finishing it. The
    program still parses; None when there is nothing to cut."""
    parsed = _parsed_entry(code)
    if parsed is None:
        return None
    tree, entry = parsed
    body = entry.body
    doc = bool(body) and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    stmts = body[1:] if doc else body
    # keep k statements (0 only when a docstring keeps the function valid), drop the rest
    keep = [
        k
        for k in range(0 if doc else 1, len(stmts))
        if not any(isinstance(s, ast.Return) for s in stmts[:k])
    ]
    if not keep:
        return None
    cut = stmts[rng.choice(keep)]
    lines = code.splitlines(keepends=True)
    end = entry.end_lineno or len(lines)
    new = "".join(lines[: cut.lineno - 1] + lines[end:])
    try:
        return new if ast.dump(ast.parse(new)) != ast.dump(tree) else None
    except SyntaxError:
        return None


_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_NEAR = {
    c: "".join(row[j] for j in (i - 1, i + 1) if 0 <= j < len(row))
    for row in _ROWS
    for i, c in enumerate(row)
}


def undefined_names(tree: ast.AST) -> set[str]:
    """Names a program reads but binds nowhere (and that are not builtins). A copy slip
    must not add one: a name the program never defines is a NameError anyone sees in the
    step alone, without reading the task or the run."""
    bound, read = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
    return read - bound


def _short_name_typos(entry: ast.FunctionDef) -> list[Edit]:
    """A one- or two-letter local name read as another short local name of the function
    that a slip of the hand gives (letters swapped, a neighbouring key) or that is the
    partner of the same pair (`i`/`j`, `x`/`y`, `a`/`b`): the copy still defines every
    name it reads, so only the task tells that the wrong variable is used. Longer names
    are left alone (a misspelt word would be a token no policy writes)."""
    local = {a.arg for a in ast.walk(entry) if isinstance(a, ast.arg)} | {
        n.id for n in ast.walk(entry) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    short = {n for n in local if len(n) <= 2}
    edits: list[Edit] = []
    for node in ast.walk(entry):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
            continue
        name = node.id
        if name not in short:
            continue
        near = {name[::-1]} | {
            name[:i] + k + name[i + 1 :] for i, c in enumerate(name) for k in _NEAR.get(c, "")
        }
        pair = {o for o in short if len(o) == len(name) and o[:-1] == name[:-1]}
        edits += [(node, node, t) for t in sorted((near | pair) & short - {name})]
    return edits


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _dropped_lines(entry: ast.FunctionDef, lines: list[str]) -> list[int]:
    """Line numbers of one-line simple statements that have a sibling statement in their
    block (a line lost from the middle of the code, not the whole body) and share their
    line with nothing else."""
    found = []
    for node in ast.walk(entry):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):  # a lambda's or an if-expression's body
                continue
            block = [s for s in block if not _is_docstring(s)]
            if len(block) < 2:
                continue
            for stmt in block:
                line = lines[stmt.lineno - 1]
                alone = line.strip() == line[stmt.col_offset : stmt.end_col_offset].strip()
                if not hasattr(stmt, "body") and stmt.lineno == stmt.end_lineno and alone:
                    found.append(stmt.lineno)
    return sorted(set(found))


def _digit_swaps(entry: ast.FunctionDef) -> list[Edit]:
    """An integer written with two adjacent digits swapped (never a leading zero)."""
    edits: list[Edit] = []
    for node in ast.walk(entry):
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 10:
            d = str(node.value)
            for i in range(len(d) - 1):
                new = d[:i] + d[i + 1] + d[i] + d[i + 2 :]
                if d[i] != d[i + 1] and new[0] != "0":
                    edits.append((node, node, new))
    return edits


def transcription_typo(code: str, rng: random.Random) -> str | None:
    """The program copied with one transcription error in the entry function: a line left
    out, two digits of a number swapped, or a short name written as another short local
    name. Every word of the copy is a word of the original, and the copy reads no name it
    does not define (the slip shows only against the task). None when nothing applies."""
    parsed = _parsed_entry(code)
    if parsed is None:
        return None
    tree, entry = parsed
    lines = code.splitlines(keepends=True)
    kinds: dict[str, list[Any]] = {
        "name": _short_name_typos(entry),
        "line": _dropped_lines(entry, lines),
        "digits": _digit_swaps(entry),
    }
    undefined = undefined_names(tree)
    usable = sorted(k for k, v in kinds.items() if v)
    for kind in rng.sample(usable, len(usable)):
        picks = kinds[kind]
        for pick in rng.sample(picks, len(picks)):
            new = (
                "".join(lines[: pick - 1] + lines[pick:]) if kind == "line" else _splice(code, pick)
            )
            if _changes_program(new, tree) and undefined_names(ast.parse(new or "")) <= undefined:
                return new
    return None
