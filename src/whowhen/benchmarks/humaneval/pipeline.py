"""The coder -> tester -> reviewer reference pipeline for HumanEval, deciding only from the
visible history (see `policies` for the whole story).

Every step states or acts on the key line (`variants`): plans, hand-offs, reports,
requests, questions and answers quote it, and every program contains it. Whoever writes,
runs or submits a program writes it with the key line as the most recent step stated it
(`steps.believed`): the coder saves what it and the others last said, the tester runs its
own inputs (and, in some tasks, the examples) on the draft as it was last described, and
the reviewer submits the saved draft with the line its reports confirmed. A wrong line
stated by any agent, which the docstring examples do not catch, is what the reviewer
submits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedSystem, addressee, tell
from whowhen.benchmarks.humaneval.actions import (
    ROUND_WORDS,
    contrast,
    edge_rounds,
    inspect_program,
    kind_of,
    n_examples,
    probe_program,
    program_for,
    read_probe,
    read_run,
    say,
    solution_of,
)
from whowhen.benchmarks.humaneval.phrases import (
    ANSWER_CODE,
    ANSWER_RAISED,
    ASK_RECHECK,
    CODER_FIX,
    CODER_INSPECT,
    CODER_PLAN,
    CONFIRM,
    EDGES,
    EDGES_RAISED,
    FAIL_REPORT,
    QUESTION_CODE,
    QUESTION_RAISED,
    REJECT,
    SELF_FIX,
    SELFCHECK,
    TESTER_PLAN,
    TESTER_PLAN_BARE,
    TESTER_PROBE,
    TESTER_RECHECK,
    TESTER_RERUN,
    TESTER_RUN,
    WRITE,
)
from whowhen.benchmarks.humaneval.steps import (
    _calls,
    _code,
    _failing_call,
    _feature,
    _got,
    _inspect_detail,
    _literal_equal,
    _probe_summary,
    _reported_got,
    _run_steps,
    _to_inspect,
    approval,
    believed,
    drafts,
    entry_of,
    fixed_line,
    handoff,
    params_of,
    pass_report,
    report_counts,
    report_passes,
    task_prompt,
    with_line,
)
from whowhen.benchmarks.humaneval.tasks import visible_examples
from whowhen.runtime import Action, Step


def _test_runs(history: Sequence[Step]) -> list[int]:
    """Indices of the tester's runs of the docstring examples: run_tests on the saved
    draft, or a program of its own that checks them (the draft as it believes it is)."""
    return [
        i
        for i, s in enumerate(history)
        if s.actor == "tester"
        and (s.tool == "run_tests" or (s.tool == "run_python" and kind_of(_code(s)) == "examples"))
    ]


def _fix(history: Sequence[Step], versions: tuple[str, ...], saved: list[Step]) -> str:
    """The next version the coder saves after a failure, with the key line a fix keeps."""
    return with_line(versions[min(len(saved), len(versions) - 1)], history, fixed_line(history))


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
        fields = {"entry": entry, "n": n, "count": n_examples(n), "line": believed(history)}
        if not agent:
            text = say(history, "plan", CODER_PLAN, params=params_of(prompt, entry), **fields)
            return tell("coder", "tester", text[len("To tester: ") :])
        last = agent[-1]
        version = with_line(versions[min(len(saved), len(versions) - 1)], history)
        if last.actor == "tester" or not saved:  # the tester's plan: write the first draft
            return Action(
                "coder", say(history, "write", WRITE, **fields), "write_code", {"code": version}
            )
        if last.actor == "coder" and last.tool == "write_code":
            first = len(saved) == 1  # a quick try of its own on the first draft only
            if first and examples and phrasing.task_chance(history, "selfcheck", 0.7):
                call = examples[0][0]
                text = say(history, "selfcheck", SELFCHECK, call=call, **fields)
                code = probe_program(with_line(_code(last), history), [call])
                return Action("coder", text, "run_python", {"code": code})
            return handoff(history, entry, fixed=len(saved) > 1)
        if last.actor == "coder" and last.tool == "run_python":
            out = history[-1].content
            if kind_of(_code(last)) == "inspect":
                todo = _to_inspect(history, examples)
                if todo:  # another failing call of the report: look at it too
                    call, want = todo[0]
                    text = say(history, "inspect", CODER_INSPECT, call=call, want=want, **fields)
                    code = inspect_program(with_line(_code(saved[-1]), history), call, want)
                    return Action("coder", text, "run_python", {"code": code})
                text = say(history, "fix", CODER_FIX, detail=_inspect_detail(out), **fields)
                return Action("coder", text, "write_code", {"code": _fix(history, versions, saved)})
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
            return Action("coder", text, "write_code", {"code": _fix(history, versions, saved)})
        if last.actor == "reviewer" and report_counts(last.content) is not None:  # sent back
            call, want = (_to_inspect(history, examples) or [_failing_call(history, examples)])[0]
            text = say(history, "inspect", CODER_INSPECT, call=call, want=want, **fields)
            code = inspect_program(with_line(_code(saved[-1]), history), call, want)
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
        fields = {"entry": entry, "n": n, "count": n_examples(n), "line": believed(history)}
        rounds = edge_rounds(prompt, entry, examples)
        saved = [s for s in agent if s.tool == "write_code"]
        if last.actor == "coder" and not saved:  # the coder's plan: announce the extra cases
            if rounds:
                calls = _calls([c for _, cs in rounds[:2] for c in cs[:1]])
                text = say(history, "plan", TESTER_PLAN, calls=calls, **fields)
            else:
                text = say(history, "plan", TESTER_PLAN_BARE, **fields)
            return tell("tester", "coder", text[len("To coder: ") :])
        tests = _test_runs(history)
        if last.tool is None:  # a hand-off or the reviewer's request: run the examples
            rerun = TESTER_RERUN if tests else TESTER_RUN
            variants = TESTER_RECHECK if last.actor == "reviewer" else rerun
            text = say(history, "run", variants, **fields)
            if saved and phrasing.task_chance(history, "tester-own-run", 0.3):
                # this tester runs the examples on the draft typed into run_python
                code = program_for(with_line(_code(saved[-1]), history), examples)
                return Action("tester", text, "run_python", {"code": code})
            return Action("tester", text, "run_tests", {})
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
        probes = [r for r in _run_steps(history[at:], "tester") if kind_of(_code(r[0])) == "probe"]
        draft = with_line(_code(saved[-1]), history) if saved else ""
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
        line = believed(history)
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
                line=line,
            )
            return tell("reviewer", "coder", text[len("To coder: ") :].rstrip())
        since = saved[-1].step if saved else 0
        mine = [s for s in agent if s.actor == "reviewer" and s.step > since]
        asked_tester = any(addressee(s) == "tester" for s in mine)
        asked_coder = any(addressee(s) == "coder" for s in mine)
        fresh = not asked_tester and not asked_coder and n
        if fresh and phrasing.task_chance(history, "ask-recheck", 0.5):
            text = say(history, "ask", ASK_RECHECK, entry=entry, line=line)
            return tell("reviewer", "tester", text[len("To tester: ") :])
        if not asked_coder and phrasing.task_chance(history, "question", 0.6):
            bad = re.search(r"(\w+\(.*?\) raises \w+)", report.content)
            code = _code(saved[-1]) if saved else ""
            lines = len(solution_of(code).strip().splitlines())
            if bad:
                text = say(
                    history, "question", QUESTION_RAISED, bad=bad.group(1), entry=entry, line=line
                )
            else:
                feature = _feature(code)
                text = say(
                    history,
                    "question",
                    QUESTION_CODE,
                    entry=entry,
                    lines=lines,
                    feature=feature,
                    line=line,
                )
            return tell("reviewer", "coder", text[len("To coder: ") :])
        return approval(history, entry)
