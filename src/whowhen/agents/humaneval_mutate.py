"""Seeded logic bugs in Python source, for the `reasoning.logic_bug` operator: a flipped
comparison, an off-by-one (range bounds, indices, integer operands), a swapped arithmetic
operator or a wrong return value.

Edits are spliced into the source at the offsets `ast` reports, so the rest of the program
keeps its formatting and the bug reads like a slip, not a rewrite.
"""

from __future__ import annotations

import ast
import random
import re

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


def _offsets(source: bytes) -> list[int]:
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


def _function_scope(tree: ast.Module) -> list[ast.AST]:
    """The nodes a coder writes: the entry function's body (the last top-level def) and
    anything after it. Code with a `while` loop is left alone: a bug there, or in a helper
    the loop calls, can make the run hang until the time limit instead of failing."""
    defs = [i for i, n in enumerate(tree.body) if isinstance(n, ast.FunctionDef)]
    scope = tree.body[defs[-1] :] if defs else []
    if any(isinstance(n, ast.While) for top in scope for n in ast.walk(top)):
        return []
    return [
        node
        for top in scope
        for child in (top.body if isinstance(top, ast.FunctionDef) else [top])
        for node in ast.walk(child)
    ]


def _edits(tree: ast.Module, source: str) -> dict[str, list[Edit]]:
    """Candidate logic bugs by kind: flipped comparison, off-by-one, wrong return value."""
    kinds: dict[str, list[Edit]] = {"compare": [], "off_by_one": [], "return": [], "arith": []}
    nodes = _function_scope(tree)
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
            try:
                if new is not None and ast.dump(ast.parse(new)) != ast.dump(tree):
                    return new
            except SyntaxError:
                continue
    return None
