"""Scripted reference policies for document QA, deciding only from the visible history.

Every hop of the chain (company -> parent company ... -> founder -> birth city -> country)
is a small piece of research: a search for the hop's subject (sometimes a broad search
first and then a narrower one, or an exact-phrase search that finds nothing and a plain
one after it), sometimes a look at another hit that turns out not to be the subject's
document, then the subject's own document. Wordings and detours are drawn with
`whowhen.agents.phrasing` from the task text and the step index, so a warm start replays
them exactly.

Beliefs come from what the agents said (`state`): each search or read names the relation
and subject it is after and the next step goes on from there; each message restates the
fact it passes on, and the chain the orchestrator hands off is the one its messages
stated. So an error at any step is what the following steps build on.

ReAct: one agent walks the chain and answers (a careful agent searches its answer once
more first, and answers what it checked). Orchestrator: the orchestrator asks a researcher
for one hop at a time, sometimes asks the verifier to confirm an intermediate fact (the
verifier re-reads the document it names and confirms, or sends the research back: it
restarts), and hands the chain and its candidate to the verifier, who re-reads the
document the candidate comes from. A researcher who finds nothing makes the orchestrator
hand off the chain it has.
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
from whowhen.benchmarks.doc_qa.state import (
    Target,
    chain,
    hop_result,
    hop_target,
    hops_left,
    is_main_read,
    next_rel,
    own_steps,
    phrase_query,
    source_of,
    stated_target,
)
from whowhen.benchmarks.doc_qa.tasks import RELATIONS, chain_of
from whowhen.runtime import Action, Step

CHECK_P, CAREFUL_P = 0.25, 0.7
EXPLORE = {"assistant": (0.6, 0.5, 0.5), "researcher": (0.2, 0.3, 0.15)}
"""Per agent: the chance of a detour read, a broad first search, an exact-phrase search.
The lone agent explores more than the researcher, whose hops also cost a request and a
report: runs of both systems come out about as long (an injection per run is planned
the same way in both, so a long run's steps would be under-sampled)."""


def hop_step(
    actor: str, history: Sequence[Step], since: int, start: Target, prev: Fact | None, left: int
) -> Action:
    """The next search or read of the hop begun after `since`: after `start` (relation,
    subject), or what the actor's latest search or read in the hop said it is after."""
    detour_p, broad_p, phrase_p = EXPLORE.get(actor, EXPLORE["assistant"])
    mine = own_steps(history, actor, since)
    rel, subject = hop_target(history, actor, since, start)
    searches = [(s, obs) for s, obs in mine if s.tool == "search"]
    fields = {"rel": rel, "subject": subject}
    if not searches:
        if prev is None and rel in BROAD and chance(history, "doc.broad?", broad_p):
            text = BROAD_SEARCH.say(history, query=BROAD[rel], **fields)
            return Action(actor, text, "search", {"query": BROAD[rel]})
        if prev is not None and chance(history, "doc.phrase?", phrase_p):
            query = phrase_query(rel, subject)
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
    if others and chance(history, "doc.detour?", detour_p):
        title = choose(history, "doc.detour_title", others[:3])
        return Action(actor, DETOUR.say(history, title=title, **fields), "read", {"title": title})
    return Action(actor, READ.say(history, **fields), "read", {"title": subject})


class DocReactSystem(ScriptedReact):
    actor = "assistant"
    """Who walks the chain (a ledger's FileSurfer takes these moves too)."""

    def act(self, history: Sequence[Step]) -> Action:
        me = self.actor
        company, rels = chain_of(history[0].content)
        facts: list[Fact] = []
        since, target = 0, (rels[0], company)
        said: str | None = None  # an answer the agent's last check search named
        for step, obs in own_steps(history, me, 0):
            if facts and (f := SEARCH_NEXT.fields(step.content)):
                facts[-1] = (f["prev"], f["prev_subject"], f["subject"])  # as restated
            if f := CHECK_SEARCH.fields(step.content):
                said = f["answer"]
            target = stated_target(step.content) or target
            if not is_main_read(step):
                continue
            value = read_value(obs, target[0])
            if value is None:
                answer = facts[-1][2] if facts else company
                text = GIVE_UP.say(history, subject=target[1], rel=target[0], answer=answer)
                return Action(me, text, "final_answer", {"answer": answer})
            facts.append((*target, value))
            since, said = step.step + 1, None
            nxt = next_rel(rels, facts)
            target = (nxt, value) if nxt else target
        if next_rel(rels, facts) is None:
            answer = said or facts[-1][2]
            checked = any(s.tool == "search" for s, _ in own_steps(history, me, since))
            if not checked and task_chance(history, "doc.careful", CAREFUL_P):
                text = CHECK_SEARCH.say(history, answer=answer)
                return Action(me, text, "search", {"query": answer})
            text = ANSWER.say(history, subject=source_of(history, facts, answer), answer=answer)
            return Action(me, text, "final_answer", {"answer": answer})
        prev = facts[-1] if facts else None
        return hop_step(me, history, since, target, prev, hops_left(rels, facts))


# orchestrator ------------------------------------------------------------------------


class DocOrchestratorSystem(ScriptedOrchestrator):
    """The orchestrator asks the researcher for one hop at a time, sometimes has the
    verifier confirm an intermediate fact, and hands the chain its messages stated to the
    verifier, who re-reads the document the candidate comes from: a wrong fact the verifier
    checks is sent back (the research restarts), a wrong fact it does not check
    propagates."""

    agents = ("orchestrator", "researcher", "verifier")

    def orchestrate(self, history: Sequence[Step]) -> Action:
        company, rels = chain_of(history[0].content)
        restart = max(
            (
                i
                for i, s in enumerate(history)
                if s.kind == "message" and s.actor == "verifier" and REJECT.read(s.content)
            ),
            default=0,
        )
        facts = chain(history, restart)
        last = history[-1] if history else None
        gone = NOT_FOUND.fields(last.content) if last and last.actor == "researcher" else None
        if gone is not None:
            if gone["rel"] == "parent company" and facts:  # the parents end here: revise
                return request(history, facts, "founder", gone["subject"], len(rels))
            if facts:  # a dead end: the chain as far as it goes is the best candidate
                return handoff(history, facts)
            return request(history, [], rels[0], company, len(rels))
        nxt = next_rel(rels, facts)
        if nxt is None:
            return handoff(history, facts)
        last_report = max(
            (i for i, s in enumerate(history) if s.actor == "researcher" and s.kind == "message"),
            default=restart,
        )
        checked = any(
            s.actor == "orchestrator" and CHECK.read(s.content) for s in history[last_report:]
        )
        if facts and not checked and chance(history, "doc.check?", CHECK_P):
            rel, subject, value = facts[-1]
            return tell(history, "orchestrator", CHECK, rel=rel, subject=subject, value=value)
        subject = facts[-1][2] if facts else company
        return request(history, facts, nxt, subject, hops_left(rels, facts))

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        since = last_index(history, "researcher")
        asked = history[since].content
        prev: Fact | None = None
        if f := FIRST_REQUEST.fields(asked):
            start = (f["rel"], f["subject"])
        elif f := NEXT_REQUEST.fields(asked):
            start = (f["rel2"], f["asked"])
            prev = (f["rel"], f["subject"], f["value"])
        else:
            return tell(history, "researcher", NOT_FOUND, rel="founder", subject="the request")
        left = int(f.get("left") or 1)
        done = hop_result(history, "researcher", since, start)
        if done is None:
            return hop_step("researcher", history, since, start, prev, left)
        (rel, subject), value, _ = done
        if value is None:
            return tell(history, "researcher", NOT_FOUND, rel=rel, subject=subject)
        return tell(history, "researcher", REPORT, rel=rel, subject=subject, value=value)

    def verify(self, history: Sequence[Step]) -> Action:
        since = last_index(history, "verifier")
        msg = history[since].content
        if f := CHECK.fields(msg):
            rels, subject, answer = [f["rel"]], f["subject"], f["value"]
        elif (f := HANDOFF.fields(msg)) and (facts := parse_facts(f["facts"])):
            subject, answer = f["subject"], f["answer"]
            rels = [r for r, s, _ in facts if s == subject] or list(RELATIONS)
        else:
            return tell(
                history, "verifier", REJECT, subject="the request", found="nothing", answer="it"
            )
        reads = [(s, obs) for s, obs in own_steps(history, "verifier", since) if s.tool == "read"]
        if not reads:
            text = VERIFY_READ.say(history, subject=subject, answer=answer)
            return Action("verifier", text, "read", {"title": subject})
        step, obs = reads[-1]
        if g := VERIFY_READ.fields(step.content):  # what the verifier said it checks
            subject, answer = g["subject"], g["answer"]
            if HANDOFF.read(msg):
                rels = [r for r, s, _ in facts if s == subject] or list(RELATIONS)
        found = next((v for r in rels if (v := read_value(obs, r))), None) or "nothing"
        if found != answer:
            return tell(history, "verifier", REJECT, subject=subject, found=found, answer=answer)
        if CHECK.read(msg):
            rel = next(r for r in rels if read_value(obs, r) == answer)
            return tell(history, "verifier", CONFIRM, rel=rel, subject=subject, value=answer)
        text = FINAL.say(history, subject=subject, answer=answer)
        return Action("verifier", text, "final_answer", {"answer": answer})


READERS: dict[str, type] = {"react": DocReactSystem, "orchestrator": DocOrchestratorSystem}
"""The reading systems written here (the ledger orchestrator is `doc_qa.ledger`)."""
