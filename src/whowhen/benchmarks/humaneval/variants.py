"""The key line of each HumanEval task: the one line of the reference solution that every
agent step of the scripted policies states or acts on, and its subtle variants.

Why: an error is decisive only where later steps take their belief from it.
The agents' working belief here is the solution, and the part of it that every step
carries is one line: a plan names it, a note says the examples pass with it, a hand-off,
report, question or answer quotes it, and every program contains it. Each later step
writes, runs or submits the program with that line as the most recent step stated it
(`steps.believed`), so a wrong line stated at any step reaches the submission.

The variants are the wrong lines that can do so: single-line edits of the reference (a
flipped or shifted comparison, an off-by-one number, a swapped operator, `and`/`or`,
`min`/`max`, a dropped `not`, a short name or two digits miscopied) that keep every
visible docstring example passing but fail the hidden tests, found in one sandbox run
per task. An edit the examples catch is fixed at the next run (a recovery,
never a labelled failure), so only subtle ones are offered to the operators, and every
kind of step has the same chance to hold a decisive error.

A task's key line is its line with the most such variants (the first on a tie); a task
without any keeps a line to talk about (the one with the most candidate edits) and has no
variants, so no key-line operator applies there.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from whowhen.benchmarks.humaneval import mutate
from whowhen.benchmarks.humaneval.actions import program_for, read_run
from whowhen.benchmarks.humaneval.env import run_code
from whowhen.benchmarks.humaneval.tasks import (
    _SAME,
    Problem,
    _by_prompt,
    _valid_examples,
    problems,
)
from whowhen.sandbox import Limits
from whowhen.sandbox import run_python as sandboxed

Variant = tuple[str, str]
"""(the wrong line, stripped; the kind of edit that made it)."""


@dataclass(frozen=True)
class KeyLine:
    """The line every step states: its index in the reference program, its text
    (stripped), the program's line count, and its subtle variants."""

    index: int
    text: str
    n_lines: int
    variants: tuple[Variant, ...]


_COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_OTHER_COMPARE = {
    "<": ("<=", ">"),
    "<=": ("<", ">="),
    ">": (">=", "<"),
    ">=": (">", "<="),
    "==": ("!=",),
    "!=": ("==",),
}
_PATTERN = {"<": r"<(?!=)", ">": r">(?!=)", "*": r"(?<!\*)\*(?!\*)", "+": r"\+", "%": "%"}
_SWAP_NAMES = {
    "min": "max",
    "max": "min",
    "any": "all",
    "all": "any",
    "lower": "upper",
    "upper": "lower",
    "isupper": "islower",
    "islower": "isupper",
    "startswith": "endswith",
    "endswith": "startswith",
}
_ARITH = {ast.Mult: ("*", "+"), ast.Mod: ("%", "//"), ast.Add: ("+", "*")}


def _compare_edits(node: ast.Compare) -> list[mutate.Edit]:
    """Each comparison of a chain written as a neighbouring one (`<` as `<=` or `>`)."""
    edits: list[mutate.Edit] = []
    pairs = zip([node.left, *node.comparators[:-1]], node.ops, node.comparators, strict=True)
    for left, op, right in pairs:
        old = _COMPARE.get(type(op))
        for new in _OTHER_COMPARE.get(old or "", ()):
            edits.append((left, right, f"{_PATTERN.get(old or '', re.escape(old or ''))}\0{new}"))
    return edits


def _extra_edits(tree: ast.Module, source: str) -> dict[str, list[mutate.Edit]]:
    """Single edits beyond `mutate`'s: neighbouring comparisons, `and`/`or`, a dropped
    `not`, `min`/`max`-like name swaps, `*`/`+` and `%`/`//`, any integer one off."""
    kinds: dict[str, list[mutate.Edit]] = {}
    for node in mutate._function_scope(tree, loops=True):
        found: tuple[str, list[mutate.Edit]] | None = None
        if isinstance(node, ast.Compare):
            found = "compare", _compare_edits(node)
        elif isinstance(node, ast.BoolOp):
            old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            pairs = zip(node.values, node.values[1:], strict=False)
            found = "boolop", [(a, b, rf"\b{old}\b\0{new}") for a, b in pairs]
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = ast.get_source_segment(source, node.operand)
            found = "negation", [(node, node, inner)] if inner else []
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            new = _SWAP_NAMES.get(node.id)
            found = "swap", [(node, node, new)] if new else []
        elif isinstance(node, ast.Attribute) and node.attr in _SWAP_NAMES:
            value = ast.get_source_segment(source, node.value)
            found = "swap", [(node, node, f"{value}.{_SWAP_NAMES[node.attr]}")] if value else []
        elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            old, new = _ARITH[type(node.op)]
            found = "arith", [(node.left, node.right, f"{_PATTERN[old]}\0{new}")]
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            shifted = [node.value + d for d in (-1, 1) if node.value + d >= 0]
            found = "constant", [(node, node, str(v)) for v in shifted]
        if found:
            kinds.setdefault(found[0], []).extend(found[1])
    for kind, found_edits in _swapped_parts(tree, source).items():
        kinds.setdefault(kind, []).extend(found_edits)
    return kinds


_ORDERED = {ast.Sub: "-", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}


def _swapped_parts(tree: ast.Module, source: str) -> dict[str, list[mutate.Edit]]:
    """Edits that use the right parts the wrong way: another local variable read in
    place of one (`name`), `True`/`False` swapped (`bool`), a clause of `and`/`or` left
    out (`clause`), the operands of `-`, `/`, `//`, `%`, `**` swapped (`operands`)."""
    nodes = mutate._function_scope(tree, loops=True)
    entry = mutate._entry(tree)
    local = (
        sorted(
            {a.arg for a in ast.walk(entry) if isinstance(a, ast.arg)}
            | {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        )
        if entry
        else []
    )
    kinds: dict[str, list[mutate.Edit]] = {"name": [], "bool": [], "clause": [], "operands": []}
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in local:
            kinds["name"] += [(node, node, other) for other in local if other != node.id]
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            kinds["bool"].append((node, node, str(not node.value)))
        elif isinstance(node, ast.BoolOp) and node.lineno == node.end_lineno:
            parts = [ast.get_source_segment(source, v) or "" for v in node.values]
            word = " and " if isinstance(node.op, ast.And) else " or "
            for i in range(len(parts)):
                rest = parts[:i] + parts[i + 1 :]
                text = word.join(f"({p})" if len(rest) > 1 else p for p in rest)
                kinds["clause"].append((node, node, text))
        elif isinstance(node, ast.BinOp) and type(node.op) in _ORDERED:
            left = ast.get_source_segment(source, node.left)
            right = ast.get_source_segment(source, node.right)
            if left and right and node.lineno == node.end_lineno:
                op = _ORDERED[type(node.op)]
                kinds["operands"].append((node, node, f"({right}) {op} ({left})"))
    return kinds


def _start(problem: Problem) -> int:
    """Index of the first line of the canonical solution in the reference program."""
    return problem.prompt.count("\n")


@cache
def candidates(problem: Problem) -> tuple[tuple[int, str, str], ...]:
    """(line index, the whole wrong line, kind) of every single-line edit of the written
    solution that parses, differs and reads no name the reference does not define."""
    code = problem.reference
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ()
    entry = mutate._entry(tree)
    if entry is None:
        return ()
    kinds = mutate._edits(tree, code, loops=True)
    kinds["typo"] = mutate._short_name_typos(entry) + mutate._digit_swaps(entry)
    for kind, found in _extra_edits(tree, code).items():
        kinds.setdefault(kind, []).extend(found)
    lines, undefined = code.rstrip().splitlines(), mutate.undefined_names(tree)
    start = _start(problem)
    out: dict[tuple[int, str], str] = {}
    for kind in sorted(kinds):
        for edit in kinds[kind]:
            try:
                new = mutate._splice(code, edit)
            except (ValueError, IndexError, re.error):
                continue
            new_lines = (new or "").rstrip().splitlines()
            if len(new_lines) != len(lines):
                continue
            changed = [i for i, (a, b) in enumerate(zip(lines, new_lines, strict=True)) if a != b]
            if len(changed) != 1 or changed[0] < start:
                continue
            line = new_lines[changed[0]]
            if (changed[0], line) in out or "`" in line or not line.strip():
                continue
            try:
                new_tree = ast.parse(new or "")
            except SyntaxError:
                continue
            if mutate.undefined_names(new_tree) <= undefined:  # an unchanged program: 'same'
                out[(changed[0], line)] = kind
    return tuple((i, line, kind) for (i, line), kind in sorted(out.items()))


def _program(problem: Problem, index: int, line: str) -> str:
    lines = problem.reference.rstrip().splitlines()
    lines[index] = line
    return "\n".join(lines) + "\n"


_CHECK = f"""import json, signal
{_SAME}
def _alarm(signum, frame):
    raise TimeoutError


signal.signal(signal.SIGVTALRM, _alarm)
results = {{}}
for sid, codes, cases, test, entry in json.loads(DATA):
    found, slow = [], 0
    for code in codes:
        ns, verdict = {{}}, None
        if slow:  # an edit that hangs: leave the task's other edits out too
            found.append(None)
            continue
        signal.setitimer(signal.ITIMER_VIRTUAL, 1.0)
        try:
            exec(code, ns)
            try:
                seen = all(_same(eval(c, ns), eval(w, ns)) for c, w in cases)
            except TimeoutError:
                raise
            except Exception:
                seen = False
            verdict = "caught"
            if seen:
                exec(test, ns)
                try:
                    ns["check"](ns[entry])
                    verdict = "same"
                except TimeoutError:
                    raise
                except Exception:
                    verdict = "subtle"
        except TimeoutError:
            slow += 1
        except BaseException:
            pass
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        found.append(verdict)
    results[sid] = found
print(json.dumps(results))
"""


VERDICTS = Path(__file__).with_name("verdicts.json")
"""The verdicts of every problem's candidate edits, computed once (`python -c "from
whowhen.benchmarks.humaneval.variants import write_verdicts; write_verdicts()"`, 30 s) and
shipped: each process that plays HumanEval would otherwise spend a sandbox run per problem
on them (16 s for 60 problems). A problem whose edits, examples or tests changed since is
computed again (its fingerprint no longer matches)."""


def fingerprint(problem: Problem) -> str:
    """What the verdicts depend on: the candidate edits, the examples and the tests."""
    parts = [candidates(problem), _valid_examples()[problem.source_id], problem.test]
    return hashlib.sha256(json.dumps(parts, default=list).encode()).hexdigest()[:16]


@cache
def _shipped() -> dict[str, dict]:
    try:
        return json.loads(VERDICTS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


@cache
def _verdicts(problem: Problem) -> tuple[str | None, ...]:
    """Per candidate edit of a problem: 'subtle' (the visible examples pass, the hidden
    tests fail), 'caught' (an example fails), 'same' (the hidden tests pass too) or None
    (an error, or over 1 s of CPU time). The shipped verdicts where their fingerprint
    matches the problem's edits, else one sandbox run (`run_verdicts`)."""
    if not candidates(problem):
        return ()
    stored = _shipped().get(problem.source_id)
    if stored and stored["fingerprint"] == fingerprint(problem):
        return tuple(stored["verdicts"])
    return run_verdicts(problem)


def run_verdicts(problem: Problem) -> tuple[str | None, ...]:
    """The verdicts computed in one sandbox run, on a timer of CPU time, not wall time, so
    they do not depend on the load of the machine."""
    found = candidates(problem)
    if not found:
        return ()
    data = [
        [
            problem.source_id,
            [_program(problem, i, line) for i, line, _ in found],
            [list(c) for c in _valid_examples()[problem.source_id]],
            problem.test,
            problem.entry_point,
        ]
    ]
    program = _CHECK.replace("DATA", repr(json.dumps(data)))
    result = sandboxed(program, Limits(wall_s=120.0, cpu_s=60, memory_mb=1024))
    if not result.ok:  # over the sandbox's limits: no verdicts, so no variants
        return (None,) * len(found)
    return tuple(json.loads(result.stdout)[problem.source_id])


def write_verdicts(path: Path = VERDICTS) -> int:
    """Compute and write every problem's verdicts; the number of problems written."""
    out = {}
    for problem in problems():
        if candidates(problem):
            verdicts = run_verdicts(problem)
            out[problem.source_id] = {"fingerprint": fingerprint(problem), "verdicts": verdicts}
    lines = [f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in sorted(out.items())]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    return len(out)


def _fallback(problem: Problem) -> int:
    """A line to talk about when no edit is subtle: the line with the most candidate
    edits, else the first written line without a backtick."""
    lines = problem.reference.rstrip().splitlines()
    counts = Counter(i for i, _, _ in candidates(problem))
    if counts:
        return min(counts, key=lambda i: (-counts[i], i))
    written = [i for i in range(_start(problem), len(lines)) if lines[i].strip()]
    return next((i for i in written if "`" not in lines[i]), written[0] if written else 0)


@cache
def key_line(prompt: str) -> KeyLine | None:
    """The key line of a visible prompt's task (None for an unknown prompt)."""
    problem = _by_prompt().get(prompt.strip())
    if problem is None:
        return None
    found = candidates(problem)
    verdicts = _verdicts(problem)
    subtle = [c for c, v in zip(found, verdicts, strict=True) if v == "subtle"]
    per_line = Counter(i for i, _, _ in subtle)
    index = min(per_line, key=lambda i: (-per_line[i], i)) if per_line else _fallback(problem)
    lines = problem.reference.rstrip().splitlines()
    variants = tuple((line.strip(), kind) for i, line, kind in subtle if i == index)
    return KeyLine(index, lines[index].strip(), len(lines), variants)


def passes_examples(prompt: str, line: str) -> bool:
    """Whether the reference with its key line written as `line` passes the visible
    docstring examples. A fix after a failing run keeps the believed line only then: a
    line the examples show wrong is what the programmer rewrites (a recovery), one they
    cannot show wrong stays (and reaches the submission)."""
    key, problem = key_line(prompt), _by_prompt().get(prompt.strip())
    if key is None or problem is None or line == key.text:
        return True
    for (i, text, _), verdict in zip(candidates(problem), _verdicts(problem), strict=True):
        if i == key.index and text.strip() == line:
            return verdict in ("subtle", "same")
    old = problem.reference.rstrip().splitlines()[key.index]
    program = _program(problem, key.index, old[: len(old) - len(old.lstrip())] + line)
    examples = _valid_examples()[problem.source_id]
    return read_run(run_code(program_for(program, examples)), len(examples))[0]
