"""Scripted reference policies for HumanEval: a code-as-action agent and a coder -> tester ->
reviewer pipeline, deciding only from the visible history.

The coders stand in for a competent programmer: they know the canonical solution of a
visible prompt (`reference_solution`, a lookup from the prompt text shown at step 0), and,
on some tasks (a per-task draw), start from one to five buggy drafts that the docstring
examples catch (`draft_flaws`), so a successful run can hold failing runs, a look at the
failing call and a fix. Around that the agents work as programmers do: plan, list the
examples, run them, try inputs of their own (empty, one-item, reordered), re-run before
finishing; the tester reports to the reviewer, who may ask for a re-run or question the
coder before approving. A logic bug that the examples catch is fixed (a recovery); one
they miss reaches the hidden tests and fails the task.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedReact, ScriptedSystem, addressee, tell
from whowhen.benchmarks.humaneval.actions import (
    ROUND_WORDS,
    Examples,
    contrast,
    edge_rounds,
    first_failure,
    inspect_program,
    kind_of,
    n_examples,
    probe_program,
    program_for,
    read_probe,
    read_run,
    say,
    solution_of,
    survey_program,
)
from whowhen.benchmarks.humaneval.tasks import draft_flaws, reference_solution, visible_examples
from whowhen.runtime import Action, Step

__all__ = ["program_for", "read_run", "solution_of"]

_PROMPT = re.compile(r"```python\n(.*)\n```", re.S)


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


def drafts(history: Sequence[Step]) -> tuple[str, ...]:
    """The versions the coder writes in turn: 0-5 buggy drafts (a per-task draw), then
    the reference. The last one is repeated for any further rewrite."""
    reference, _ = _reference(history)
    u = phrasing.draw(history, "flawed-drafts", at=-1)
    k = sum(u >= p for p in (0.5, 0.78, 0.9, 0.95, 0.975))
    return (*draft_flaws(task_prompt(history))[:k], reference)


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


# --- code as action: phrasings -------------------------------------------------------------

PLAN = (
    "Task: complete {entry}({params}). The docstring gives {count}. My plan: draft the body, "
    "run it on the examples, then try a few inputs of my own before I finish.",
    "{entry} takes {params}. I'll start by reading what the examples expect, write a first "
    "version, and check it on the {count} and on some edge cases.",
    "Let me think about {entry} first: it takes {params}, and the docstring shows {count}. "
    "I will write the function, check it against those, then look at cases the docstring "
    "skips.",
)
SURVEY = (
    "Before writing {entry}, I'll print the docstring examples and the type of each expected "
    "value.",
    "First I want to see the {count} side by side, with the types {entry} must return; "
    "listing them.",
    "Listing the examples and their expected types, so I know what {entry} has to produce.",
)
SURVEY_NOTE = (
    "So {entry} returns {types} values, and the longest example call is {call}. Nothing "
    "unusual in the expected outputs; I can write the body now.",
    "The expected values are all {types}. That fixes the return type; the example {call} "
    "is the one to watch, since it has the largest input.",
    "{count}, all expecting {types}. I'll keep {call} in mind: it is the biggest case "
    "and the most likely to expose a mistake.",
)
DRAFT = (
    "Here is my first version of {entry}; I'll run it on the {count}.",
    "I'll write {entry} now and check it straight away against the {count}.",
    "First draft of {entry}, run together with the {count} so I see at once what breaks.",
)
DRAFT_BARE = (
    "I'll write {entry} and run it once to make sure it loads; the docstring has no examples "
    "to check.",
    "First version of {entry}. There are no docstring examples, so this run only shows that "
    "the code executes.",
    "Writing {entry} and running the program; with no examples given, I'll test it on inputs "
    "of my own afterwards.",
)
PASS_NOTE = (
    "All {n} examples pass. That covers the cases the docstring shows; I still want to see "
    "how {entry} handles {next_round}.",
    "{n}/{n} passed on this run. The examples are fairly typical inputs, though, so next "
    "I'll try {next_round}.",
    "Good: every example gives the expected value. Before I finish I'll try {next_round}, "
    "which the docstring never shows.",
)
PASS_NOTE_LAST = (
    "All {n} examples pass, and I have already tried my own inputs; {entry} looks done.",
    "{n}/{n} passed. That was the last open point, so {entry} is finished.",
    "Every example passes now. Nothing is left to check for {entry}.",
)
BARE_NOTE = (
    "The program runs without errors. With no examples to compare against, the real check "
    "is {next_round}.",
    "It loads and runs cleanly. Next: {next_round}, to see whether {entry} behaves sensibly.",
    "No errors. Since the docstring gives no examples, I'll judge {entry} on {next_round}.",
)
FAIL_NOTE = (
    "Only {passed}/{n} passed. {call} {got} where the docstring expects {want}; {reason}. "
    "I'll look at that call on its own.",
    "{call} is wrong: expected {want}, but it {got_bare} ({passed}/{n} passed). {Reason}. "
    "Let me print that case in detail.",
    "The run fails {failed} of {n} examples; the first is {call}, which {got_bare} instead of "
    "{want}. {Reason}; I'll inspect it before changing anything.",
)
INSPECT = (
    "Printing {call} next to the expected value, with the types of both.",
    "Let me evaluate {call} alone and compare it with {want}.",
    "I'll run just {call} on the current draft to see exactly what comes back.",
)
FIX = (
    "That confirms it: {detail}. I'll rewrite that part of {entry} and rerun the {count}.",
    "So the draft is wrong on {call}: {detail}. Fixing the logic in {entry} and running the "
    "examples again.",
    "Now I see where it goes wrong ({detail}). Here is a corrected {entry}, checked against "
    "the {count} again.",
)
PROBE = (
    "Now {words}: {calls}.",
    "Let me try {words} that the docstring does not cover: {calls}.",
    "Next I'll run {entry} on {words} to see whether anything raises: {calls}.",
)
PROBE_NOTE = (
    "{tried_words} ran cleanly, e.g. {sample}. Those values are what I would expect. {left}",
    "{sample}; that looks right for such an input, and nothing raised. {left}",
    "No errors on {words}; for example {sample}. {left}",
)
PROBE_NOTE_RAISED = (
    "{bad}. The prompt never passes such an input, so I will not special-case it. {left}",
    "One case fails loudly: {bad}. The docstring does not define that input, so I leave "
    "{entry} as it is. {left}",
    "{raised} of {tried} raised ({bad}); that input lies outside what the prompt promises, so "
    "no change is needed. {left}",
)
LEFT = ("That leaves {next_round}.", "Next come {next_round}.", "One more round: {next_round}.")
DONE = (
    "That was my last round of inputs.",
    "I have no more cases to try.",
    "That is enough edge cases.",
)
RECHECK = (
    "One last run of the {count} on the final version of {entry}.",
    "Before finishing, I'll rerun the {count} once more on exactly this code.",
    "To be safe, rerunning the examples on the current {entry}.",
)
SUBMIT_RECHECKED = (
    "Still {n}/{n}. I submit {entry}.",
    "The rerun confirms all {n} examples; submitting {entry}.",
    "Everything passes again, so I submit this version of {entry}.",
)
SUBMIT = (
    "{entry} passes the examples and behaves sensibly on my own inputs; I submit it.",
    "Done: submitting {entry}.",
    "I'm confident in {entry} now; submitting it.",
)
SUBMIT_EARLY = (
    "{entry} is straightforward, so I submit my version without running it.",
    "I'll write {entry} and submit it directly; it is short enough to get right without a run.",
    "Submitting {entry} as written; the logic is simple enough.",
)


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


class CodeActSystem(ScriptedReact):
    """One agent whose actions are programs: plan, list the examples, draft and run them,
    inspect and fix a failure, try inputs of its own, re-run, then submit; a short note
    (a tool-less step) says what each run showed."""

    name = "code_act"

    def act(self, history: Sequence[Step]) -> Action:
        reference, examples = _reference(history)
        prompt = task_prompt(history)
        entry, n = entry_of(reference), len(examples)
        mine = [s for s in history if s.actor == "assistant" and s.is_agent_step]
        rounds = edge_rounds(prompt, entry, examples)
        fields = {"entry": entry, "n": n, "count": n_examples(n)}
        if not mine:
            text = say(history, "plan", PLAN, params=params_of(prompt, entry), **fields)
            return Action("assistant", text)
        runs = _run_steps(history, "assistant")
        probes = [r for r in runs if kind_of(_code(r[0])) == "probe"]
        next_round = ROUND_WORDS[rounds[len(probes)][0]] if len(probes) < len(rounds) else ""
        if probes and len(probes) <= len(rounds):
            fields["words"] = ROUND_WORDS[rounds[len(probes) - 1][0]]
        if mine[-1].tool == "run_python" and runs:
            return self._after_run(history, runs, examples, fields, next_round)
        return self._next_run(history, runs, examples, rounds, fields)

    def _after_run(
        self,
        history: Sequence[Step],
        runs: list[tuple[Step, str]],
        examples: Examples,
        fields: dict,
        next_round: str,
    ) -> Action:
        """What the agent says or does right after a run's output."""
        step, out = runs[-1]
        code, n = _code(step), fields["n"]
        kind = kind_of(code)
        if kind == "survey":
            m = re.search(r"expected types: (.+)\.$", out, re.M)
            call = max((c for c, _ in examples), key=len) if examples else fields["entry"]
            types = m.group(1) if m else "the expected"
            text = say(history, "note", SURVEY_NOTE, types=types, call=call, **fields)
            return Action("assistant", text)
        if kind == "inspect":  # the failure is understood: the next version
            i = sum(kind_of(_code(s)) == "inspect" for s, _ in runs)
            version = drafts(history)[min(i, len(drafts(history)) - 1)]
            call = re.search(r"^call:\s+(.+)$", out, re.M)
            text = say(
                history,
                "fix",
                FIX,
                detail=_inspect_detail(out),
                call=call.group(1) if call else fields["entry"],
                **fields,
            )
            return Action("assistant", text, "run_python", {"code": program_for(version, examples)})
        if kind == "probe":
            raised, sample, bad = _probe_summary(out)
            tried = read_probe(out)[0]
            left = (
                say(history, "left", LEFT, next_round=next_round)
                if next_round
                else say(history, "left", DONE)
            )
            variants = PROBE_NOTE_RAISED if raised else PROBE_NOTE
            text = say(
                history,
                "note",
                variants,
                tried=tried,
                tried_words="The one input" if tried == 1 else f"All {tried} inputs",
                raised=raised,
                sample=sample or "no value",
                bad=bad,
                left=left,
                **{"words": "these inputs", **fields},
            )
            return Action("assistant", text.strip())
        ok, passed, total, bad_lines = read_run(out, n)
        previous = kind_of(_code(runs[-2][0])) if len(runs) > 1 else ""
        if ok and previous == "probe":  # the re-run before finishing
            text = say(history, "submit", SUBMIT_RECHECKED, **fields)
            return Action("assistant", text, "final_answer", {"answer": solution_of(code)})
        if ok:
            if not n:
                variants = BARE_NOTE if next_round else PASS_NOTE_LAST
            else:
                variants = PASS_NOTE if next_round else PASS_NOTE_LAST
            text = say(history, "note", variants, next_round=next_round, **fields)
            return Action("assistant", text)
        fail = first_failure(bad_lines) or (fields["entry"], "?", "an Error")
        call, want, got = fail
        want = want or dict(examples).get(call, "")
        reason = contrast(want, got)
        text = say(
            history,
            "note",
            FAIL_NOTE,
            passed=passed,
            failed=total - passed,
            call=call,
            want=want or "a value",
            got=_got(got),
            got_bare=_got(got),
            reason=reason,
            Reason=reason[0].upper() + reason[1:],
            **{k: v for k, v in fields.items() if k != "n"},
            n=total,
        )
        return Action("assistant", text)

    def _next_run(
        self,
        history: Sequence[Step],
        runs: list[tuple[Step, str]],
        examples: Examples,
        rounds: list[tuple[str, list[str]]],
        fields: dict,
    ) -> Action:
        """The next program to run (or the submission), after the plan or a note."""
        entry, n = fields["entry"], fields["n"]
        kinds = [kind_of(_code(s)) for s, _ in runs]
        ex_runs = [r for r, k in zip(runs, kinds, strict=True) if k == "examples"]
        if examples and "survey" not in kinds and not ex_runs:
            text = say(history, "survey", SURVEY, **fields)
            return Action("assistant", text, "run_python", {"code": survey_program(examples)})
        if not ex_runs:
            text = say(history, "draft", DRAFT if n else DRAFT_BARE, **fields)
            code = program_for(drafts(history)[0], examples)
            return Action("assistant", text, "run_python", {"code": code})
        last_step = runs[-1][0]
        current = solution_of(_code(last_step))
        ok, _, _, bad = read_run(ex_runs[-1][1], n)
        if not ok and kinds[-1] == "examples" and kinds.count("inspect") < 5:
            call, want, _ = first_failure(bad) or (entry, "None", "")
            want = want or dict(examples).get(call, "None")
            text = say(
                history, "inspect", INSPECT, call=call, want=want or "the docstring", **fields
            )
            code = inspect_program(current, call, want or "None")
            return Action("assistant", text, "run_python", {"code": code})
        n_probes = kinds.count("probe")
        if n_probes < len(rounds):
            round_, calls = rounds[n_probes]
            fields["words"] = ROUND_WORDS[round_]
            text = say(history, "probe", PROBE, calls=_calls(calls), **fields)
            return Action("assistant", text, "run_python", {"code": probe_program(current, calls)})
        if kinds[-1] == "probe" and n and phrasing.task_chance(history, "recheck", 0.7):
            text = say(history, "recheck", RECHECK, **fields)
            return Action("assistant", text, "run_python", {"code": program_for(current, examples)})
        text = say(history, "submit", SUBMIT, **fields)
        return Action("assistant", text, "final_answer", {"answer": current})


# --- pipeline: coder -> tester -> reviewer: phrasings --------------------------------------

CODER_PLAN = (
    "To tester: I'm taking {entry}({params}). I'll write it from the docstring and hand you a "
    "draft; the docstring has {count}.",
    "To tester: Starting on {entry}. It takes {params}; I'll save a draft shortly and ask you "
    "to run the {count}.",
    "To tester: Plan for {entry}: implement it from the docstring, try one call myself, then "
    "hand the draft to you for the {count}.",
)
TESTER_PLAN = (
    "To coder: Noted. Besides the {count}, I will try {calls} once the draft is in.",
    "To coder: OK. I'll run the {count} first and then a few inputs of my own, e.g. {calls}.",
    "To coder: Ready when you are. My extra cases for {entry}: {calls}.",
)
TESTER_PLAN_BARE = (
    "To coder: Noted; I'll run the {count} as soon as the draft is saved.",
    "To coder: OK, send the draft of {entry} over when it is saved and I'll run the {count}.",
    "To coder: Ready. I'll check the draft of {entry} against the {count}.",
)
WRITE = (
    "Writing {entry} from its docstring and saving the draft.",
    "Here is my draft of {entry}; saving it with write_code.",
    "I'll save a first version of {entry}.",
)
SELFCHECK = (
    "Quick check before the hand-off: I'll run {call} myself.",
    "Let me try {call} on the draft before the tester sees it.",
    "Running {call} once to make sure the draft loads and gives the right value.",
)
SELF_FIX = (
    "My own run of {call} gives {got}, not {want}: {reason}. Fixing {entry} and saving the "
    "draft again before the hand-off.",
    "{call} should be {want} but the draft gives {got}; {reason}. I'll correct {entry} and "
    "save it.",
    "Not right yet: {call} gives {got} instead of {want}. Saving a corrected draft of {entry}.",
)
HANDOFF = (
    "To tester: The draft of {entry} is saved ({lines} lines). {seen}Please run the docstring "
    "examples.",
    "To tester: {entry} is ready for testing. {seen}Over to you for the examples.",
    "To tester: Draft saved. {seen}Can you run the {count} against the draft of {entry}?",
)
HANDOFF_FIXED = (
    "To tester: I fixed {entry} and saved a new draft ({lines} lines). {seen}Please run the "
    "examples again.",
    "To tester: New draft of {entry} saved; it should now get {call} right. {seen}Please "
    "rerun the examples.",
    "To tester: The revised {entry} is in. {seen}Rerun the {count}, please.",
)
SEEN = ("I tried {call} myself: {out}. ", "On my side {call} gives {out}. ", "{call} -> {out}. ")
TESTER_RUN = (
    "Running the docstring examples against the draft of {entry}.",
    "I'll run the {count} on the saved draft of {entry}.",
    "Let me see how the draft of {entry} does on the docstring examples.",
)
TESTER_RERUN = (
    "Rerunning the docstring examples on the new draft of {entry}.",
    "The coder saved a new draft of {entry}; running the examples again.",
    "Second look at {entry}: running the {count} on the new draft.",
)
TESTER_RECHECK = (
    "As the reviewer asked, running the docstring examples once more on the saved draft of "
    "{entry}.",
    "Rerunning the {count} on the saved draft of {entry} for the reviewer.",
    "Running the examples again on the draft of {entry}, to confirm the count.",
)
TESTER_PROBE = (
    "The examples pass; now {words} for {entry}: {calls}.",
    "Next, inputs the docstring does not cover ({words}): {calls}.",
    "Trying {words} on the draft of {entry}: {calls}.",
)
PASS_REPORT = (
    "To reviewer: The draft of {entry} passes the visible examples ({n}/{n} passed).{edges}",
    "To reviewer: All {n} docstring examples pass on the draft of {entry} ({n}/{n} passed).{edges}",
    "To reviewer: {entry} looks good on the examples: {n}/{n} passed.{edges}",
)
CLEAN_REPORT = (
    "To reviewer: The draft of {entry} runs cleanly; the prompt has no docstring examples to "
    "check.{edges}",
    "To reviewer: No docstring examples for {entry}, and the draft loads and runs without "
    "errors.{edges}",
    "To reviewer: The draft of {entry} runs without errors (there are no examples to "
    "compare with).{edges}",
)
EDGES = (
    " I also tried {k} inputs of my own; none raised, e.g. {sample}.",
    " My own {k} inputs ran cleanly too ({sample}).",
    " Extra cases: {k} tried, all fine, e.g. {sample}.",
)
EDGES_RAISED = (
    " I also tried {k} inputs of my own: {bad}, an input the prompt never asks for; the rest "
    "look fine.",
    " Of my {k} extra inputs, one raises ({bad}); the docstring does not cover that input.",
    " Extra cases: {k} tried; {bad}, outside what the prompt specifies.",
)
CONFIRM = (
    "To reviewer: Rerun done: still {n}/{n} passed on the draft of {entry}.",
    "To reviewer: Confirmed, the saved draft of {entry} passes all {n} examples again "
    "({n}/{n} passed).",
    "To reviewer: Same result on the rerun: {n}/{n} passed for {entry}.",
)
FAIL_REPORT = (
    "To reviewer: The draft of {entry} fails the visible examples ({passed}/{n} passed):"
    "\n{details}",
    "To reviewer: {entry} fails {failed} of {n} examples ({passed}/{n} passed):\n{details}",
    "To reviewer: Not passing yet: the draft of {entry} fails ({passed}/{n} passed):\n{details}",
)
ASK_RECHECK = (
    "To tester: Thanks. Before I approve, please rerun the examples on the saved draft of "
    "{entry} once more; I want the count from the exact code I'll approve.",
    "To tester: Can you run the examples against the saved draft of {entry} one more time? "
    "I'd like to be sure the report matches the final draft.",
    "To tester: Please confirm with a fresh run of the examples on the saved draft of {entry} "
    "before I sign off.",
)
QUESTION_RAISED = (
    "To coder: The tester saw that {bad}. Is that acceptable for {entry}?",
    "To coder: One question: {bad} in the tester's extra cases. Do we need to handle that?",
    "To coder: Before I approve: {bad}. Intended?",
)
QUESTION_CODE = (
    "To coder: The draft of {entry} is {lines} lines and {feature}. Is that deliberate?",
    "To coder: Reading {entry}: it {feature}. Any reason for that choice?",
    "To coder: Quick question on {entry}: I see it {feature}. Is that what the docstring needs?",
)
ANSWER_RAISED = (
    "To reviewer: Yes. The prompt never passes such an input, and guarding it would change "
    "nothing the docstring asks for.",
    "To reviewer: That input is outside the specification in the docstring, so I left it "
    "unguarded on purpose.",
    "To reviewer: It's acceptable: the docstring only promises results for the inputs it "
    "describes.",
)
ANSWER_CODE = (
    "To reviewer: Yes, deliberate: it follows the docstring directly, and the tester's runs "
    "cover it.",
    "To reviewer: It keeps {entry} short and matches what the examples ask for; I'd keep it.",
    "To reviewer: That is intended. It is the simplest form that fits the docstring, and all "
    "examples pass with it.",
)
APPROVE = (
    "The tester reports that the draft of {entry} passes; I approve and submit it.",
    "{entry} passes the tester's checks and the code reads cleanly; approved, I submit the draft.",
    "Looks good to me: the tests pass. I submit the draft of {entry}.",
)
REJECT = (
    "To coder: The tester reports that the draft of {entry} fails the visible examples "
    "({passed}/{n} passed). Please fix it and save a new draft.\n{details}",
    "To coder: Not yet: {passed}/{n} passed. {call} {got} but should give {want}; {reason}. "
    "Please fix {entry}.",
    "To coder: The draft of {entry} fails {failed} of {n} examples ({passed}/{n} passed). "
    "The first one is {call}: expected {want}, it {got}. Please take another look.",
)
CODER_INSPECT = (
    "Let me reproduce {call} on my draft and compare with {want}.",
    "Running {call} on my draft to see what goes wrong.",
    "I'll print {call} next to the expected value before changing {entry}.",
)
CODER_FIX = (
    "I see it: {detail}. Saving a fixed draft of {entry}.",
    "The value confirms the reviewer's note ({detail}); rewriting {entry} and saving the draft.",
    "Fixing {entry}: {detail}, so the logic was off there. Saving the new draft.",
)

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
    text = say(history, "report", variants, entry=entry, n=n, edges=edges)
    return tell("tester", "reviewer", text[len("To reviewer: ") :])


def approval(history: Sequence[Step], entry: str) -> Action:
    """The reviewer's approval: it submits the last saved draft (an empty answer, which
    submits the saved draft too, when no draft is in the history)."""
    saved = [s for s in history if s.tool == "write_code"]
    code = _code(saved[-1]) if saved else ""
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
    call = examples[0][0] if examples else entry
    text = say(history, "handoff", HANDOFF_FIXED if fixed else HANDOFF, call=call, **fields)
    return tell("coder", "tester", text[len("To tester: ") :])


class PipelineSystem(ScriptedSystem):
    """Coder plans and writes the draft (trying one example itself), and hands it to the
    tester; the tester, who announced its extra cases up front, runs the examples and its
    own inputs and reports to the reviewer; the reviewer may ask for a re-run or question
    the coder, then submits the last draft if everything passes, else sends the coder
    back with the failing call (the coder reproduces it and saves a fix)."""

    name, topology = "pipeline", "multi"
    agents = ("coder", "tester", "reviewer")

    def speaker(self, history: Sequence[Step]) -> str:
        steps = [s for s in history if s.is_agent_step]
        if not steps:
            return "coder"
        if steps[-1].kind == "action":  # a tool call: the same agent goes on
            return steps[-1].actor
        to = addressee(steps[-1])
        return to if to in self.agents else "coder"

    def decide(self, history: Sequence[Step]) -> Action:
        who = self.speaker(history)
        turn = {"coder": self.code, "tester": self.test, "reviewer": self.review}[who]
        return turn(history)

    # --- coder ---

    def code(self, history: Sequence[Step]) -> Action:
        prompt = task_prompt(history)
        examples = visible_examples(prompt)
        entry, n = entry_of(prompt), len(examples)
        agent = [s for s in history if s.is_agent_step]
        versions = drafts(history)
        saved = [s for s in agent if s.actor == "coder" and s.tool == "write_code"]
        fields = {"entry": entry, "n": n, "count": n_examples(n)}
        if not agent:
            text = say(history, "plan", CODER_PLAN, params=params_of(prompt, entry), **fields)
            return tell("coder", "tester", text[len("To tester: ") :])
        last = agent[-1]
        version = versions[min(len(saved), len(versions) - 1)]
        if last.actor == "tester" or not saved:  # the tester's plan: write the first draft
            return Action(
                "coder", say(history, "write", WRITE, **fields), "write_code", {"code": version}
            )
        if last.actor == "coder" and last.tool == "write_code":
            first = len(saved) == 1  # a quick try of its own on the first draft only
            if first and examples and phrasing.task_chance(history, "selfcheck", 0.7):
                call = examples[0][0]
                text = say(history, "selfcheck", SELFCHECK, call=call, **fields)
                code = probe_program(_code(last), [call])
                return Action("coder", text, "run_python", {"code": code})
            return handoff(history, entry, fixed=len(saved) > 1)
        if last.actor == "coder" and last.tool == "run_python":
            out = history[-1].content
            if kind_of(_code(last)) == "inspect":
                todo = _to_inspect(history, examples)
                if todo:  # another failing call of the report: look at it too
                    call, want = todo[0]
                    text = say(history, "inspect", CODER_INSPECT, call=call, want=want, **fields)
                    code = inspect_program(_code(saved[-1]), call, want)
                    return Action("coder", text, "run_python", {"code": code})
                text = say(history, "fix", CODER_FIX, detail=_inspect_detail(out), **fields)
                return Action("coder", text, "write_code", {"code": version})
            _, _, ok, bad = read_probe(out)
            call, want = examples[0]
            shown = ok[0].partition(" -> ")[2] if ok else ""
            if ok and _literal_equal(shown, want):
                return handoff(history, entry, fixed=len(saved) > 1)
            got = shown or (bad[0].partition(" raises ")[2].split(":")[0] if bad else "?")
            text = say(
                history,
                "fix",
                SELF_FIX,
                call=call,
                want=want,
                got=got,
                reason=contrast(want, shown or "None"),
                **fields,
            )
            return Action("coder", text, "write_code", {"code": version})
        if last.actor == "reviewer" and report_counts(last.content) is not None:  # sent back
            call, want = (_to_inspect(history, examples) or [_failing_call(history, examples)])[0]
            text = say(history, "inspect", CODER_INSPECT, call=call, want=want, **fields)
            code = inspect_program(_code(saved[-1]), call, want)
            return Action("coder", text, "run_python", {"code": code})
        if last.actor == "reviewer":  # a question
            raised = "raise" in last.content
            text = say(history, "answer", ANSWER_RAISED if raised else ANSWER_CODE, **fields)
            return tell("coder", "reviewer", text[len("To reviewer: ") :])
        return Action(
            "coder", say(history, "write", WRITE, **fields), "write_code", {"code": version}
        )

    # --- tester ---

    def test(self, history: Sequence[Step]) -> Action:
        prompt = task_prompt(history)
        examples = visible_examples(prompt)
        entry, n = entry_of(prompt), len(examples)
        agent = [s for s in history if s.is_agent_step]
        last = agent[-1]
        fields = {"entry": entry, "n": n, "count": n_examples(n)}
        rounds = edge_rounds(prompt, entry, examples)
        saved = [s for s in agent if s.tool == "write_code"]
        if last.actor == "coder" and not saved:  # the coder's plan: announce the extra cases
            if rounds:
                calls = _calls([c for _, cs in rounds[:2] for c in cs[:1]])
                text = say(history, "plan", TESTER_PLAN, calls=calls, **fields)
            else:
                text = say(history, "plan", TESTER_PLAN_BARE, **fields)
            return tell("tester", "coder", text[len("To coder: ") :])
        if last.tool is None:  # a hand-off or the reviewer's request: run the examples
            mine = [s for s in agent if s.actor == "tester" and s.tool == "run_tests"]
            variants = (
                TESTER_RECHECK if last.actor == "reviewer" else TESTER_RERUN if mine else TESTER_RUN
            )
            return Action("tester", say(history, "run", variants, **fields), "run_tests", {})
        tests = [i for i, s in enumerate(history) if s.actor == "tester" and s.tool == "run_tests"]
        at = tests[-1]
        output = history[at + 1].content if at + 1 < len(history) else ""
        ok, passed, total, bad = read_run(output, n)
        if not ok:
            details = "\n".join(bad) or output.strip()[-300:]
            text = say(
                history,
                "report",
                FAIL_REPORT,
                passed=passed,
                failed=total - passed,
                details=details,
                **{k: v for k, v in fields.items() if k != "n"},
                n=total,
            )
            return tell("tester", "reviewer", text[len("To reviewer: ") :])
        asked = [s for s in agent if s.step < at and s.is_agent_step][-1:]
        if asked and asked[0].actor == "reviewer":  # the re-run the reviewer asked for
            text = say(history, "report", CONFIRM, **fields) if n else None
            if text is not None:
                return tell("tester", "reviewer", text[len("To reviewer: ") :])
        probes = _run_steps(history[at:], "tester")
        draft = _code(saved[-1]) if saved else ""
        probing = rounds and phrasing.task_chance(history, "tester-probes", 0.85)
        if probing and len(probes) < len(rounds):
            round_, calls = rounds[len(probes)]
            text = say(
                history,
                "probe",
                TESTER_PROBE,
                words=ROUND_WORDS[round_],
                calls=_calls(calls),
                **fields,
            )
            return Action("tester", text, "run_python", {"code": probe_program(draft, calls)})
        edges = ""
        if probes:
            tried = sum(read_probe(o)[0] for _, o in probes)
            summaries = [_probe_summary(o) for _, o in probes]
            bad_call = next((b for r, _, b in summaries if r), "")
            sample = next((s for _, s, _ in summaries if s), "no value")
            if bad_call:
                edges = say(history, "edges", EDGES_RAISED, k=tried, bad=bad_call)
            else:
                edges = say(history, "edges", EDGES, k=tried, sample=sample)
        return pass_report(history, entry, n, edges)

    # --- reviewer ---

    def review(self, history: Sequence[Step]) -> Action:
        prompt = task_prompt(history)
        examples = visible_examples(prompt)
        entry, n = entry_of(prompt), len(examples)
        agent = [s for s in history if s.is_agent_step]
        reports = [s for s in agent if s.actor == "tester" and addressee(s) == "reviewer"]
        saved = [s for s in agent if s.tool == "write_code"]
        if not reports:
            return approval(history, entry)
        report = reports[-1]
        if not report_passes(report.content):
            counts = report_counts(report.content) or (0, n)
            call, want = _failing_call(history, examples)
            got = _reported_got(report.content, call)
            details = report.content.split("\n", 1)[1] if "\n" in report.content else ""
            text = say(
                history,
                "reject",
                REJECT,
                entry=entry,
                passed=counts[0],
                n=counts[1],
                failed=counts[1] - counts[0],
                details=details,
                call=call,
                want=want,
                got=_got(got) if got else "returns something else",
                reason=contrast(want, got),
            )
            return tell("reviewer", "coder", text[len("To coder: ") :].rstrip())
        since = saved[-1].step if saved else 0
        mine = [s for s in agent if s.actor == "reviewer" and s.step > since]
        asked_tester = any(addressee(s) == "tester" for s in mine)
        asked_coder = any(addressee(s) == "coder" for s in mine)
        fresh = not asked_tester and not asked_coder and n
        if fresh and phrasing.task_chance(history, "ask-recheck", 0.5):
            text = say(history, "ask", ASK_RECHECK, entry=entry)
            return tell("reviewer", "tester", text[len("To tester: ") :])
        if not asked_coder and phrasing.task_chance(history, "question", 0.6):
            bad = re.search(r"(\w+\(.*?\) raises \w+)", report.content)
            code = _code(saved[-1]) if saved else ""
            lines = len(solution_of(code).strip().splitlines())
            if bad:
                text = say(history, "question", QUESTION_RAISED, bad=bad.group(1), entry=entry)
            else:
                feature = _feature(code)
                text = say(
                    history, "question", QUESTION_CODE, entry=entry, lines=lines, feature=feature
                )
            return tell("reviewer", "coder", text[len("To coder: ") :])
        return approval(history, entry)


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


POLICIES: dict[str, type] = {"code_act": CodeActSystem, "pipeline": PipelineSystem}
"""System name -> this benchmark's scripted reference policy."""
