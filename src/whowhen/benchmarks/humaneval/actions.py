"""What the HumanEval policies and operators share: the programs the agents run (the
docstring-example check, a survey of the examples, probes on inputs of the agent's own, a
look at one failing call), the readers of their output, and the phrasings of every step.

Every phrasing is drawn with `phrasing.phrase` from the visible history (the task text and
the step index), so an operator that rebuilds a step with these builders gets the same
family of wording the reference policy would have used at that index.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.benchmarks.humaneval.tasks import EXAMPLES_MARKER, SUMMARY, example_script
from whowhen.runtime import Step

SURVEY_MARKER = "# --- list the docstring examples ---"
PROBE_MARKER = "# --- try inputs of my own ---"
INSPECT_MARKER = "# --- look at one call ---"
MARKERS = (EXAMPLES_MARKER, PROBE_MARKER, INSPECT_MARKER, SURVEY_MARKER)
PROBED = re.compile(r"^(\d+) inputs? tried, (\d+) raised\.$", re.M)

Examples = tuple[tuple[str, str], ...]


# --- programs ------------------------------------------------------------------------------


def split_program(code: str) -> tuple[str, str]:
    """(solution, check) of a program: the check starts at the first marker line."""
    cut = min((i for m in MARKERS if (i := code.find(m)) >= 0), default=len(code))
    return code[:cut], code[cut:]


def solution_of(code: str) -> str:
    """The solution part of a program that ends with a check (the whole program if none)."""
    return split_program(code)[0].rstrip() + "\n"


def kind_of(code: str) -> str:
    """Which program this is: 'examples', 'probe', 'inspect', 'survey' or 'code'."""
    tail = split_program(code)[1]
    for name, marker in (
        ("examples", EXAMPLES_MARKER),
        ("probe", PROBE_MARKER),
        ("inspect", INSPECT_MARKER),
        ("survey", SURVEY_MARKER),
    ):
        if tail.startswith(marker):
            return name
    return "code"


def program_for(solution: str, examples: Examples) -> str:
    """A solution followed by the docstring-example check (what run_tests also runs)."""
    return f"{solution.rstrip()}\n\n\n{example_script(examples)}"


_GUARD = (
    "import signal\n\n\n"
    "def _timeout(signum, frame):\n    raise TimeoutError('took longer than 0.5 s')\n\n\n"
    "signal.signal(signal.SIGALRM, _timeout)\n\n\n"
    "def _show(value):\n"
    "    if isinstance(value, (set, frozenset)):\n"
    "        return '{' + ', '.join(sorted(map(repr, value))) + '}'\n"
    "    return repr(value)[:120]\n"
)


def probe_program(solution: str, calls: Sequence[str]) -> str:
    """The solution, then each call evaluated with its result or exception printed (a
    0.5 s guard per call), and a `k inputs tried, j raised.` summary."""
    listed = "".join(f"    {c!r},\n" for c in calls)
    return (
        f"{solution.rstrip()}\n\n\n{PROBE_MARKER}\n{_GUARD}\n_CALLS = [\n{listed}]\n_raised = 0\n"
        "for _call in _CALLS:\n"
        "    signal.setitimer(signal.ITIMER_REAL, 0.5)\n"
        "    try:\n"
        "        print(f'{_call} -> {_show(eval(_call))}')\n"
        "    except Exception as _exc:\n"
        "        _raised += 1\n"
        "        print(f'{_call} raises {type(_exc).__name__}: {str(_exc)[:80]}')\n"
        "    signal.setitimer(signal.ITIMER_REAL, 0)\n"
        "_s = 's' if len(_CALLS) != 1 else ''\n"
        "print(f'{len(_CALLS)} input{_s} tried, {_raised} raised.')\n"
    )


def inspect_program(solution: str, call: str, want: str) -> str:
    """The solution, then one call's result next to the expected value, with their types
    (and the difference, for numbers): what a programmer prints to see a failure."""
    return (
        f"{solution.rstrip()}\n\n\n{INSPECT_MARKER}\n{_GUARD}\n"
        f"_call, _want = {call!r}, {want}\n"
        "print(f'call:     {_call}')\n"
        "print(f'expected: {_show(_want)} ({type(_want).__name__})')\n"
        "try:\n"
        "    _got = eval(_call)\n"
        "except Exception as _exc:\n"
        "    print(f'got:      {type(_exc).__name__}: {str(_exc)[:80]}')\n"
        "else:\n"
        "    print(f'got:      {_show(_got)} ({type(_got).__name__})')\n"
        "    if isinstance(_got, (int, float)) and isinstance(_want, (int, float)):\n"
        "        print(f'got - expected = {_got - _want}')\n"
        "    elif hasattr(_got, '__len__') and hasattr(_want, '__len__'):\n"
        "        print(f'length: got {len(_got)}, expected {len(_want)}')\n"
    )


def survey_program(examples: Examples) -> str:
    """A program that lists the docstring examples with the type of each expected value
    (no solution yet): how an agent reads what the function must return."""
    cases = "".join(f"    ({c!r}, {w!r}),\n" for c, w in examples)
    return (
        f"{SURVEY_MARKER}\n_CASES = [\n{cases}]\n"
        "_types = []\n"
        "for _i, (_call, _want) in enumerate(_CASES, 1):\n"
        "    _value = eval(_want)\n"
        "    _types.append(type(_value).__name__)\n"
        "    print(f'example {_i}: {_call}')\n"
        "    print(f'  expects {_want} ({type(_value).__name__})')\n"
        "print(f\"{len(_CASES)} examples; expected types: {', '.join(sorted(set(_types)))}.\")\n"
    )


# --- reading outputs -----------------------------------------------------------------------


def read_run(text: str, n_examples: int) -> tuple[bool, int, int, list[str]]:
    """(all passed, passed, n, failure lines) from the output of an example check."""
    found = SUMMARY.findall(text)
    passed, n = (int(found[-1][0]), int(found[-1][1])) if found else (0, n_examples)
    bad = [ln for ln in text.splitlines() if ln.startswith(("FAIL", "ERROR", "[", "Error:"))]
    return bool(found) and passed == n and not bad, passed, n, bad[:5]


_FAIL_LINE = re.compile(r"^FAIL  (.+): expected (.+), got (.+)$")
_ERROR_LINE = re.compile(r"^ERROR (.+?): (\w+): ")


def first_failure(bad: Sequence[str]) -> tuple[str, str, str] | None:
    """(call, expected, got) of the first failing example line (got: 'an <Error>')."""
    for line in bad:
        if m := _FAIL_LINE.match(line):
            return m[1], m[2], m[3]
        if m := _ERROR_LINE.match(line):
            return m[1], "", f"an {m[2]}"
    return None


def read_probe(text: str) -> tuple[int, int, list[str], list[str]]:
    """(tried, raised, result lines, raising lines) of a probe's output."""
    m = PROBED.search(text)
    lines = [ln for ln in text.splitlines() if " -> " in ln or " raises " in ln]
    raised = [ln for ln in lines if " raises " in ln and " -> " not in ln.split(" raises ")[0]]
    ok = [ln for ln in lines if ln not in raised]
    return (int(m[1]), int(m[2]), ok, raised) if m else (len(lines), len(raised), ok, raised)


def contrast(want: str, got: str) -> str:
    """A short reason why a result differs from the expected one."""
    try:
        w, g = ast.literal_eval(want), ast.literal_eval(got)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return "so the logic takes a wrong turn somewhere"
    if isinstance(w, bool) or isinstance(g, bool):
        return "so a condition is decided the wrong way round"
    if isinstance(w, int | float) and isinstance(g, int | float):
        side = "larger" if g > w else "smaller"
        return f"the result is {side} than expected, so a bound or an operator is off"
    if isinstance(w, list | tuple | str) and isinstance(g, list | tuple | str):
        if len(g) != len(w):
            more = "more" if len(g) > len(w) else "fewer"
            return f"it has {more} elements than expected, so an item is kept or dropped wrongly"
        return "the length is right but some elements differ, so a comparison is off"
    return "the value differs from the expected one"


# --- inputs of the agent's own -------------------------------------------------------------

_ANNOTATED = {
    "int": "5",
    "float": "2.5",
    "str": "'abc'",
    "bool": "True",
    "list": "[1, 2, 3]",
    "List[int]": "[1, 2, 3]",
    "List[float]": "[1.0, 2.0, 3.0]",
    "List[str]": "['a', 'b', 'c']",
    "List[Any]": "[1, 'a', 2.0]",
    "tuple": "(1, 2)",
}


def base_calls(prompt: str, entry: str, examples: Examples) -> list[ast.Call]:
    """Calls to start the edge cases from: the docstring examples, or, when there are
    none, one call built from the parameter annotations."""
    calls = []
    for call, _ in examples:
        node = ast.parse(call, mode="eval").body
        if isinstance(node, ast.Call) and not node.keywords:
            calls.append(node)
    if calls:
        return calls
    try:
        tree = ast.parse(prompt + "    pass\n")
    except SyntaxError:
        return []
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry]
    if not defs:
        return []
    args = []
    for a in defs[-1].args.args:
        note = ast.unparse(a.annotation) if a.annotation else ""
        if note not in _ANNOTATED:
            return []
        args.append(_ANNOTATED[note])
    node = ast.parse(f"{entry}({', '.join(args)})", mode="eval").body
    return [node] if isinstance(node, ast.Call) else []


def _variant(value: object, round_: str) -> object | None:
    """An argument changed for an edge case: emptied, cut to one item, or reversed/bumped."""
    if isinstance(value, bool):
        return None
    if isinstance(value, list | tuple | str):
        if round_ == "empty":
            return value[:0]
        if round_ == "single":
            return value[:1] if len(value) > 1 else None
        return value[::-1] if len(value) > 1 and value[::-1] != value else None
    if isinstance(value, int):
        return {"empty": 0, "single": 1, "other": value + 1 if 0 <= value < 50 else None}[round_]
    if isinstance(value, float):
        return {"empty": 0.0, "single": 1.0, "other": None}[round_]
    return None


ROUNDS = ("empty", "single", "other")
"""Edge-case rounds: empty or zero inputs, one-item inputs, reordered or next-larger ones."""


def edge_rounds(prompt: str, entry: str, examples: Examples) -> list[tuple[str, list[str]]]:
    """(round, calls) for each round with a new call: each argument of the largest base
    call changed in turn, the others kept (at most 3 calls a round)."""
    bases = base_calls(prompt, entry, examples)
    if not bases:
        return []
    base = max(bases, key=lambda c: (len(ast.unparse(c)), -bases.index(c)))
    seen = {ast.unparse(b) for b in bases}
    rounds = []
    for round_ in ROUNDS:
        calls = []
        for i, arg in enumerate(base.args):
            try:
                value = ast.literal_eval(arg)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            new = _variant(value, round_)
            if new is None:
                continue
            args = [ast.unparse(a) for a in base.args]
            args[i] = repr(new)
            call = f"{entry}({', '.join(args)})"
            if call not in seen:
                seen.add(call)
                calls.append(call)
        if calls:
            rounds.append((round_, calls[:3]))
    return rounds


# --- phrasings -----------------------------------------------------------------------------

ROUND_WORDS = {
    "empty": "empty or zero inputs",
    "single": "one-item inputs",
    "other": "reordered or slightly larger inputs",
}


def say(history: Sequence[Step], key: str, variants: Sequence[str], **fields: object) -> str:
    """One phrasing of a step kind, drawn for the step being decided."""
    return phrasing.phrase(history, key, variants, **fields)


def _count(n: int) -> str:
    return f"{n} docstring example{'s' if n != 1 else ''}"


def n_examples(n: int) -> str:
    """'3 docstring examples', or 'no docstring examples'."""
    return _count(n) if n else "no docstring examples"
