"""Scripted reference policies for document QA, deciding only from the visible history.

Every hop of the chain (company -> parent company ... -> founder -> birth city -> country)
is a small piece of research: a search for the hop's subject (sometimes a broad search
first and then a narrower one, or an exact-phrase search that finds nothing and a plain
one after it), sometimes a look at another hit that turns out not to be the subject's
document, then the subject's own document. Wordings and detours are drawn with
`whowhen.agents.phrasing` from the task text and the step index, so a warm start replays
them exactly.

ReAct: one agent walks the chain and answers (a careful agent searches its answer once
more first). A wrong document read propagates: the next hop starts from what it says.
Orchestrator: the orchestrator asks a researcher for one hop at a time, sometimes asks the
verifier to confirm an intermediate fact (the verifier re-reads that document and confirms
or sends the research back), and hands the candidate to the verifier, who re-reads the
last hop's document: a wrong fact it checks is sent back (the research restarts), a wrong
fact it does not check propagates.
"""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents.phrasing import chance, choose, task_chance
from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact
from whowhen.benchmarks.doc_qa.actions import (
    ANSWER,
    BACK,
    BROAD,
    BROAD_SEARCH,
    CHECK,
    CHECK_SEARCH,
    CONFIRM,
    DETOUR,
    FINAL,
    FIRST_REQUEST,
    GIVE_UP,
    HANDOFF,
    MAIN_READS,
    NEXT_REQUEST,
    NOT_FOUND,
    PHRASE,
    READ,
    REFINE,
    REJECT,
    REPORT,
    RETRY,
    SEARCH,
    SEARCH_NEXT,
    VERIFY_READ,
    Fact,
    handoff,
    hits,
    last_index,
    parse_facts,
    read_value,
    request,
    tell,
)
from whowhen.benchmarks.doc_qa.tasks import chain_of
from whowhen.runtime import Action, Step

DETOUR_P, BROAD_P, PHRASE_P, CHECK_P, CAREFUL_P = 0.4, 0.5, 0.25, 0.45, 0.5


def _own(history: Sequence[Step], actor: str, since: int) -> list[tuple[Step, str]]:
    """The actor's tool calls after `since`, each with the observation it got."""
    out = []
    for i in range(since + 1, len(history)):
        s = history[i]
        if s.actor == actor and s.kind == "action":
            nxt = history[i + 1] if i + 1 < len(history) else None
            out.append((s, nxt.content if nxt is not None and nxt.kind == "observation" else ""))
    return out


def main_reads(history: Sequence[Step], actor: str, since: int) -> list[tuple[int, str]]:
    """(index of the observation, its text) of the actor's reads of a hop's document."""
    return [
        (s.step + 1, obs)
        for s, obs in _own(history, actor, since)
        if s.tool == "read" and any(f.read(s.content) for f in MAIN_READS)
    ]


def hop_step(
    actor: str,
    history: Sequence[Step],
    since: int,
    rel: str,
    subject: str,
    prev: Fact | None,
    left: int,
) -> Action | tuple[str | None]:
    """The next search or read for the hop (`rel` of `subject`) begun after `since`, or
    (the value its document states,) once the subject's document has been read."""
    mine = _own(history, actor, since)
    done = [
        obs for s, obs in mine if s.tool == "read" and any(f.read(s.content) for f in MAIN_READS)
    ]
    if done:
        return (read_value(done[-1], rel),)
    searches = [(s, obs) for s, obs in mine if s.tool == "search"]
    fields = {"rel": rel, "subject": subject}
    if not searches:
        if prev is None and rel in BROAD and chance(history, "doc.broad?", BROAD_P):
            text = BROAD_SEARCH.say(history, query=BROAD[rel], **fields)
            return Action(actor, text, "search", {"query": BROAD[rel]})
        if prev is not None and chance(history, "doc.phrase?", PHRASE_P):
            query = f"{rel} of {subject}"
            return Action(
                actor, PHRASE.say(history, query=query, **fields), "search", {"query": query}
            )
        if prev is None:
            return Action(actor, SEARCH.say(history, **fields), "search", {"query": subject})
        text = SEARCH_NEXT.say(
            history, prev=prev[0], prev_subject=prev[1], left=str(left), **fields
        )
        return Action(actor, text, "search", {"query": subject})
    last, obs = searches[-1]
    if BROAD_SEARCH.read(last.content):
        n = obs.split(": ", 1)[-1].split(" ", 1)[0] if obs.startswith("Search for") else "0"
        return Action(actor, REFINE.say(history, n=n, **fields), "search", {"query": subject})
    if PHRASE.read(last.content):
        return Action(actor, RETRY.say(history, **fields), "search", {"query": subject})
    reads = [s for s, _ in mine if s.tool == "read"]
    if reads:  # a detour was read: say why it is not the one, and read the subject's own
        other = str((reads[-1].tool_args or {}).get("title", ""))
        text = BACK.say(history, other=other, **fields)
        return Action(actor, text, "read", {"title": subject})
    others = [t for t in hits(obs) if t != subject]
    if others and chance(history, "doc.detour?", DETOUR_P):
        title = choose(history, "doc.detour_title", others[:3])
        return Action(actor, DETOUR.say(history, title=title, **fields), "read", {"title": title})
    return Action(actor, READ.say(history, **fields), "read", {"title": subject})


class DocReactSystem(ScriptedReact):
    def act(self, history: Sequence[Step]) -> Action:
        company, rels = chain_of(history[0].content)
        facts: list[Fact] = []
        since, subject = 0, company
        for index, obs in main_reads(history, "assistant", 0):
            rel = rels[len(facts)]
            value = read_value(obs, rel)
            if value is None:
                answer = facts[-1][2] if facts else company
                text = GIVE_UP.say(history, subject=subject, rel=rel, answer=answer)
                return Action("assistant", text, "final_answer", {"answer": answer})
            facts.append((rel, subject, value))
            since, subject = index, value
            if len(facts) == len(rels):
                break
        if len(facts) == len(rels):
            _, last_subject, answer = facts[-1]
            checked = any(s.tool == "search" for s, _ in _own(history, "assistant", since))
            if not checked and task_chance(history, "doc.careful", CAREFUL_P):
                text = CHECK_SEARCH.say(history, answer=answer)
                return Action("assistant", text, "search", {"query": answer})
            text = ANSWER.say(history, subject=last_subject, answer=answer)
            return Action("assistant", text, "final_answer", {"answer": answer})
        rel = rels[len(facts)]
        prev = facts[-1] if facts else None
        made = hop_step("assistant", history, since, rel, subject, prev, len(rels) - len(facts))
        if isinstance(made, Action):
            return made
        raise AssertionError("unreachable: the hop's read was counted above")


# orchestrator ------------------------------------------------------------------------


class DocOrchestratorSystem(ScriptedOrchestrator):
    """The orchestrator asks the researcher for one hop at a time, sometimes has the
    verifier confirm an intermediate fact, and hands the last hop's answer to the
    verifier, who re-reads that hop's document: a wrong fact the verifier checks is sent
    back (the research restarts), a wrong earlier hop it does not check propagates."""

    agents = ("orchestrator", "researcher", "verifier")

    def orchestrate(self, history: Sequence[Step]) -> Action:
        company, rels = chain_of(history[0].content)
        restart = max(
            (
                i
                for i, s in enumerate(history)
                if s.kind == "message"
                and (
                    (s.actor == "verifier" and REJECT.read(s.content))
                    or (s.actor == "researcher" and NOT_FOUND.read(s.content))
                )
            ),
            default=0,
        )
        facts: list[Fact] = []
        last_report = restart
        for i in range(restart + 1, len(history)):
            s = history[i]
            if s.actor == "researcher" and s.kind == "message" and (f := REPORT.fields(s.content)):
                facts.append((f["rel"], f["subject"], f["value"]))
                last_report = i
        if len(facts) >= len(rels):
            return handoff(history, facts)
        checked = any(
            s.actor == "orchestrator" and CHECK.read(s.content) for s in history[last_report:]
        )
        if facts and not checked and chance(history, "doc.check?", CHECK_P):
            rel, subject, value = facts[-1]
            return tell(history, "orchestrator", CHECK, rel=rel, subject=subject, value=value)
        subject = facts[-1][2] if facts else company
        return request(history, facts, rels[len(facts)], subject, len(rels) - len(facts))

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        since = last_index(history, "researcher")
        asked = history[since].content
        prev: Fact | None = None
        if f := FIRST_REQUEST.fields(asked):
            rel, subject = f["rel"], f["subject"]
        elif f := NEXT_REQUEST.fields(asked):
            rel, subject = f["rel2"], f["asked"]
            prev = (f["rel"], f["subject"], f["value"])
        else:
            return tell(history, "researcher", NOT_FOUND, rel="founder", subject="the request")
        left = int(f.get("left") or 1)
        made = hop_step("researcher", history, since, rel, subject, prev, left)
        if isinstance(made, Action):
            return made
        (value,) = made
        if value is None:
            return tell(history, "researcher", NOT_FOUND, rel=rel, subject=subject)
        return tell(history, "researcher", REPORT, rel=rel, subject=subject, value=value)

    def verify(self, history: Sequence[Step]) -> Action:
        since = last_index(history, "verifier")
        msg = history[since].content
        reads = [obs for s, obs in _own(history, "verifier", since) if s.tool == "read"]
        if f := CHECK.fields(msg):
            rel, subject, value = f["rel"], f["subject"], f["value"]
            if not reads:
                text = VERIFY_READ.say(history, subject=subject, answer=value)
                return Action("verifier", text, "read", {"title": subject})
            found = read_value(reads[-1], rel) or "nothing"
            if found == value:
                return tell(history, "verifier", CONFIRM, rel=rel, subject=subject, value=value)
            return tell(history, "verifier", REJECT, subject=subject, found=found, answer=value)
        f = HANDOFF.fields(msg)
        if f is None:
            return tell(
                history, "verifier", REJECT, subject="the request", found="nothing", answer="it"
            )
        answer, subject = f["answer"], f["subject"]
        if not reads:
            text = VERIFY_READ.say(history, subject=subject, answer=answer)
            return Action("verifier", text, "read", {"title": subject})
        facts = parse_facts(f["facts"]) or []
        rels = [r for r, s, _ in facts if s == subject] or ["founder", "birth city", "country"]
        found = next((v for r in rels if (v := read_value(reads[-1], r))), "nothing")
        if found == answer:
            text = FINAL.say(history, subject=subject, answer=answer)
            return Action("verifier", text, "final_answer", {"answer": answer})
        return tell(history, "verifier", REJECT, subject=subject, found=found, answer=answer)


POLICIES: dict[str, type] = {"react": DocReactSystem, "orchestrator": DocOrchestratorSystem}
"""System name -> this benchmark's scripted reference policy."""
