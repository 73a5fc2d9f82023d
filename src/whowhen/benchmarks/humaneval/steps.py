"""What the HumanEval policies read from the visible history (the task prompt, the
drafts to write, the runs so far, the tester's reports) and the steps that the policies
and the operators both build (an early submission, a pass report, an approval, a
hand-off), so that an operator's replacement is the step the policy would have written
with a wrong belief.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import tell
from whowhen.benchmarks.humaneval.actions import (
    Examples,
    first_failure,
    n_examples,
    read_probe,
    say,
    solution_of,
)
from whowhen.benchmarks.humaneval.phrases import (
    APPROVE,
    CLEAN_REPORT,
    HANDOFF,
    HANDOFF_FIXED,
    PASS_REPORT,
    SEEN,
    SUBMIT_EARLY,
)
from whowhen.benchmarks.humaneval.tasks import draft_flaws, reference_solution, visible_examples
from whowhen.benchmarks.humaneval.variants import KeyLine, key_line, passes_examples
from whowhen.runtime import Action, Step
from whowhen.tools import TERMINAL

_PROMPT = re.compile(r"```python\n(.*)\n```", re.S)
_QUOTE = re.compile(r"`([^`\n]+)`")
CODE_TOOLS = ("write_code", "run_python", "final_answer", TERMINAL)
"""Tools whose call carries a program (the group chat's programs run on the terminal): such
a step states the key line in its code, not in its text."""


def task_prompt(history: Sequence[Step]) -> str:
    """The prompt shown in the task text (step 0)."""
    m = _PROMPT.search(history[0].content)
    return m.group(1) + "\n" if m else history[0].content


def entry_of(code: str) -> str:
    """The function a program is about: its last top-level `def`."""
    names = re.findall(r"^def (\w+)\s*\(", code, re.M)
    return names[-1] if names else "the function"


def params_of(prompt: str, entry: str) -> str:
    """The entry function's parameter names, for a plan ('numbers, threshold')."""
    m = re.search(rf"^def {re.escape(entry)}\((.*?)\)", prompt, re.M | re.S)
    names = re.findall(r"(?:^|,)\s*(\w+)", m.group(1)) if m else []
    return ", ".join(names) or "no arguments"


def _reference(history: Sequence[Step]) -> tuple[str, Examples]:
    prompt = task_prompt(history)
    solution = reference_solution(prompt)
    if solution is None:
        raise ValueError("the prompt is not a known HumanEval problem")
    return solution, visible_examples(prompt)


def drafts(history: Sequence[Step], at_least: int = 0) -> tuple[str, ...]:
    """The versions the coder writes in turn: 0-5 buggy drafts (a per-task draw, at least
    `at_least` where the task has them), then the reference. The last one is repeated for
    any further rewrite. A buggy draft never changes the key line (its bug is elsewhere),
    so writing a version with the believed key line (`with_line`) keeps its bug, and the
    fix keeps the believed line."""
    reference, _ = _reference(history)
    key = key_of(history)
    u = phrasing.draw(history, "flawed-drafts", at=-1)
    k = max(sum(u >= p for p in (0.5, 0.78, 0.9, 0.95, 0.975)), at_least)
    flaws = [f for f in draft_flaws(task_prompt(history)) if _line_at(f, key) == key.text]
    return (*flaws[:k], reference)


# --- the key line: what every step states, and what later steps take from it ------------


def key_of(history: Sequence[Step]) -> KeyLine:
    """The task's key line (see `variants`): the line of the solution every step states."""
    key = key_line(task_prompt(history))
    if key is None:
        raise ValueError("the prompt is not a known HumanEval problem")
    return key


def _line_at(code: str, key: KeyLine) -> str | None:
    """The key line as a program has it (stripped); None when the program's lines do not
    line up with the reference's (a cut or a different program)."""
    lines = code.rstrip().splitlines()
    return lines[key.index].strip() if len(lines) == key.n_lines else None


def quoted(text: str) -> str | None:
    """The code line a text quotes (`...`), if any: how a message or note states it."""
    m = _QUOTE.search(text)
    return m.group(1) if m else None


def stated(step: Step, key: KeyLine) -> str | None:
    """The key line as one agent step states it: the line in the program it writes, runs
    or submits, else the line its text quotes; None if it states none."""
    if step.tool in CODE_TOOLS and "def " in _code(step):
        return _line_at(solution_of(_code(step)), key)
    return quoted(step.content)


def believed(history: Sequence[Step]) -> str:
    """The key line as the most recent agent step that states it has it (any agent: what
    was said or written last is what the team works with); the reference's line before
    any step states one."""
    key = key_of(history)
    for step in reversed(history):
        if step.is_agent_step and (line := stated(step, key)) is not None:
            return line
    return key.text


def fixed_line(history: Sequence[Step]) -> str:
    """The key line a fix writes after a failing run: the believed one if the docstring
    examples cannot show it wrong, else the reference's (the programmer repairs what the
    failing examples point at, whatever step got it wrong)."""
    line = believed(history)
    return line if passes_examples(task_prompt(history), line) else key_of(history).text


def with_line(solution: str, history: Sequence[Step], line: str | None = None) -> str:
    """A solution with its key line as believed (or `line`), at the indentation it has;
    unchanged when its lines do not line up with the reference's."""
    key = key_of(history)
    lines = solution.rstrip().splitlines()
    if len(lines) != key.n_lines:
        return solution
    old = lines[key.index]
    lines[key.index] = old[: len(old) - len(old.lstrip())] + (line or believed(history))
    return "\n".join(lines) + "\n"


def _calls(calls: Sequence[str]) -> str:
    return ", ".join(calls[:-1]) + f" and {calls[-1]}" if len(calls) > 1 else calls[0]


def _got(got: str) -> str:
    return f"raises {got[3:]}" if got.startswith("an ") else f"returns {got}"


def _literal_equal(shown: str, want: str) -> bool:
    try:
        return ast.literal_eval(shown) == ast.literal_eval(want)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return shown.strip() == want.strip()


def _inspect_detail(text: str) -> str:
    """What a look at one failing call showed, in a few words."""
    for line in text.splitlines():
        if line.startswith("got - expected = "):
            return f"it is off by {line.split('= ', 1)[1]}"
        if line.startswith("length: "):
            return f"the {line}"
        if line.startswith("got:"):
            got = line[4:].strip()
            if re.match(r"^[A-Z]\w*(Error|Exception):", got):
                return f"it raises {got.split(':')[0]}"
            return f"it returns {got}"
    return "the value is not the expected one"


def _probe_summary(text: str) -> tuple[int, str, str]:
    """(raised, a result sample, the first raising call and error) of a probe's output."""
    _, raised, ok, bad = read_probe(text)
    sample = ok[0] if ok else ""
    first_bad = ""
    if bad:
        call, _, err = bad[0].partition(" raises ")
        first_bad = f"{call} raises {err.split(':')[0]}"
    return raised, sample, first_bad


def early_submission(history: Sequence[Step], entry: str, answer: str) -> Action:
    """A code-as-action submission before any run (the agent believes it is done)."""
    text = say(history, "submit", SUBMIT_EARLY, entry=entry)
    return Action("assistant", text, "final_answer", {"answer": answer})


def _run_steps(history: Sequence[Step], actor: str) -> list[tuple[Step, str]]:
    """(run_python step, its output) of an agent, in order."""
    out = []
    for i, s in enumerate(history):
        if s.actor == actor and s.tool == "run_python":
            nxt = history[i + 1] if i + 1 < len(history) else None
            obs = nxt.content if nxt is not None and nxt.kind == "observation" else ""
            out.append((s, obs))
    return out


def _code(step: Step) -> str:
    args = step.tool_args or {}
    return str(args.get("code", args.get("answer", "")))


_REPORT_COUNT = re.compile(r"\b(\d+)/(\d+) passed\b")
_FEATURES = (
    (ast.For, "loops over its input"),
    (ast.ListComp, "builds the result with a list comprehension"),
    (ast.If, "branches on a condition"),
    (ast.Return, "returns directly"),
)


def report_counts(text: str) -> tuple[int, int] | None:
    """(passed, n) stated in a tester's report or a reviewer's message."""
    m = _REPORT_COUNT.search(text)
    if m is None:
        return None
    return int(m[1]), int(m[2])


def report_passes(text: str) -> bool:
    """Whether a tester report says the draft passes (all examples, or runs cleanly)."""
    counts = report_counts(text)
    if counts is not None:
        return counts[0] == counts[1]
    return "runs cleanly" in text or "without errors" in text


def _feature(code: str) -> str:
    try:
        tree = ast.parse(solution_of(code))
    except SyntaxError:
        return "is compact"
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    nodes = list(ast.walk(defs[-1])) if defs else []
    for kind, words in _FEATURES:
        if any(isinstance(n, kind) for n in nodes):
            return words
    return "is compact"


def pass_report(history: Sequence[Step], entry: str, n: int, edges: str = "") -> Action:
    """The tester's report that the draft passes (with what its own inputs showed)."""
    variants = PASS_REPORT if n else CLEAN_REPORT
    text = say(history, "report", variants, entry=entry, n=n, edges=edges, line=believed(history))
    return tell("tester", "reviewer", text[len("To reviewer: ") :])


def approval(history: Sequence[Step], entry: str) -> Action:
    """The reviewer's approval: it submits the last saved draft, written out with the key
    line as the team last stated it (an empty answer, which submits the saved draft too,
    when no draft is in the history)."""
    saved = [s for s in history if s.tool == "write_code"]
    code = with_line(_code(saved[-1]), history) if saved else ""
    text = say(history, "approve", APPROVE, entry=entry)
    return Action("reviewer", text, "final_answer", {"answer": code})


def handoff(history: Sequence[Step], entry: str, fixed: bool = False) -> Action:
    """The coder's hand-off to the tester (after a fix: the fixed-draft wording), with
    what its own try of an example gave, if it made one since the last save."""
    prompt = task_prompt(history)
    examples = visible_examples(prompt)
    saved = [s for s in history if s.actor == "coder" and s.tool == "write_code"]
    lines = len(_code(saved[-1]).strip().splitlines()) if saved else 0
    seen = ""
    runs = _run_steps(history, "coder")
    if runs and saved and runs[-1][0].step > saved[-1].step:
        _, _, ok, _ = read_probe(runs[-1][1])
        if ok:
            call, _, out = ok[0].partition(" -> ")
            seen = say(history, "seen", SEEN, call=call, out=out)
    fields = {"entry": entry, "lines": lines, "seen": seen, "count": n_examples(len(examples))}
    fields["line"] = believed(history)
    call = examples[0][0] if examples else entry
    text = say(history, "handoff", HANDOFF_FIXED if fixed else HANDOFF, call=call, **fields)
    return tell("coder", "tester", text[len("To tester: ") :])


def _failing_call(history: Sequence[Step], examples: Examples) -> tuple[str, str]:
    """(call, expected) of the first failing example in the tester's last failure report
    (the first example when the report names none)."""
    reports = [
        s for s in history if s.actor == "tester" and s.kind == "message" and "\n" in s.content
    ]
    if reports:
        fail = first_failure(reports[-1].content.split("\n")[1:])
        if fail is not None:
            want = fail[1] or dict(examples).get(fail[0], "None")
            return fail[0], want
    return examples[0] if examples else ("None", "None")


def _to_inspect(history: Sequence[Step], examples: Examples) -> list[tuple[str, str]]:
    """The failing calls of the tester's last failure report (at most 3) that the coder
    has not yet looked at since that report."""
    at = max(
        (i for i, s in enumerate(history) if s.actor == "tester" and s.kind == "message"),
        default=0,
    )
    report = history[at].content if at else ""
    calls = []
    for line in report.split("\n")[1:]:
        fail = first_failure([line])
        if fail is not None:
            calls.append((fail[0], fail[1] or dict(examples).get(fail[0], "None")))
    looked = {
        m.group(1)
        for s, out in _run_steps(history[at:], "coder")
        if (m := re.search(r"^call:\s+(.+)$", out, re.M))
    }
    return [c for c in calls[:3] if c[0] not in looked]


def _reported_got(report: str, call: str) -> str:
    fail = first_failure(report.split("\n")[1:])
    return fail[2] if fail and fail[0] == call else ""
