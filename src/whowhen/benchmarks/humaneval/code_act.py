"""The code-as-action reference policy for HumanEval: one agent whose actions are
programs, deciding only from the visible history (see `policies` for the whole story).

Every step states or acts on the key line (`variants`): the plan and every note quote it,
every program contains it, and each program the agent runs or submits has the key line as
its most recent step stated it (`steps.believed`), so a wrong line stated anywhere, which
the docstring examples do not catch, is what the agent submits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedReact
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
from whowhen.benchmarks.humaneval.phrases import (
    BARE_NOTE,
    DONE,
    DRAFT,
    DRAFT_BARE,
    FAIL_NOTE,
    FIX,
    INSPECT,
    LEFT,
    PASS_NOTE,
    PASS_NOTE_LAST,
    PLAN,
    PROBE,
    PROBE_NOTE,
    PROBE_NOTE_RAISED,
    RECHECK,
    SUBMIT,
    SUBMIT_RECHECKED,
    SURVEY,
    SURVEY_NOTE,
)
from whowhen.benchmarks.humaneval.steps import (
    _calls,
    _code,
    _got,
    _inspect_detail,
    _probe_summary,
    _reference,
    _run_steps,
    believed,
    drafts,
    entry_of,
    fixed_line,
    params_of,
    task_prompt,
    with_line,
)
from whowhen.runtime import Action, Step


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
        fields = {"entry": entry, "n": n, "count": n_examples(n), "line": believed(history)}
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
            versions = drafts(history)
            version = with_line(versions[min(i, len(versions) - 1)], history, fixed_line(history))
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
            answer = with_line(solution_of(code), history)
            return Action("assistant", text, "final_answer", {"answer": answer})
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
            code = program_for(with_line(drafts(history)[0], history), examples)
            return Action("assistant", text, "run_python", {"code": code})
        last_step = runs[-1][0]
        current = with_line(solution_of(_code(last_step)), history)
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
