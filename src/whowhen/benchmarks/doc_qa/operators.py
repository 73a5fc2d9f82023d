"""Error operators for the document QA steps, one function per taxonomy mode (the
orchestrator's messages have theirs in `messages`), and the mode table.

Every replacement is coherent: it is built with the policies' own `Form`s, in
the wording the original step used (or, for a step of another kind, the wording the
policy's draw gives at that index), from a wrong belief, so the relation and entity its
text names are the ones its tool call or message carries, and the step is wrong only given
the history and the task. Every kind of search, read, message and answer has a mode whose
error the later steps build on (they read their belief from the steps, see `state`), so
any agent step can be the decisive one.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.doc_qa import messages
from whowhen.benchmarks.doc_qa.actions import (
    ANSWER,
    BACK,
    BROAD,
    BROAD_SEARCH,
    CHECK,
    CHECK_SEARCH,
    DETOUR,
    FINAL,
    HANDOFF,
    NEXT_REQUEST,
    PHRASE,
    READ,
    REFINE,
    RETRY,
    SEARCH,
    SEARCH_NEXT,
    VERIFY_READ,
    hits,
    last_index,
    parse_facts,
)
from whowhen.benchmarks.doc_qa.edits import (
    ENTITY,
    entity_kind,
    known_chain,
    named_in,
    other_fact,
    redo,
    say,
    swap_entity,
)
from whowhen.benchmarks.doc_qa.state import (
    docs_read,
    is_main_read,
    phrase_query,
    stated_target,
)
from whowhen.benchmarks.doc_qa.tasks import CITIES, COMPANIES, FIRST
from whowhen.runtime import Action, Step

_SEARCHES = (SEARCH, SEARCH_NEXT, BROAD_SEARCH, REFINE, PHRASE, RETRY)


def _form(action: Action, forms: Sequence[Form]) -> Form | None:
    return next((f for f in forms if f.read(action.content)), None)


def _search(form: Form, action: Action, rel: str, subject: str) -> Action | None:
    """A hop's search re-said in its wording for (`rel`, `subject`), with the query the
    policy sends for that form."""
    if form is BROAD_SEARCH:
        if rel not in BROAD:
            return None
        made, query = redo(form, action, rel=rel, subject=subject, query=BROAD[rel]), BROAD[rel]
    elif form is PHRASE:
        query = phrase_query(rel, subject)
        made = redo(form, action, query=query)
    else:
        # a search for the next hop restates the previous fact with the subject as its value
        made, query = redo(form, action, rel=rel, subject=subject), subject
    return Action(action.actor, made.content, "search", {"query": query}) if made else None


def _search_subgoal(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """A hop's search after another entity the documents read name (the hop's subject
    mixed up), or after the company's other relation (the parent companies skipped, or one
    too many)."""
    form = _form(action, _SEARCHES)
    target = stated_target(action.content) if form else None
    if form is None or target is None:
        return None
    rel, subject = target
    options = []
    if form is not BROAD_SEARCH and (other := swap_entity(subject, history, rng)):
        options.append((rel, other))
    if rel == "parent company":  # the remaining parent companies skipped
        options.append(("founder", subject))
    if not options:
        return None
    return _search(form, action, *rng.choice(options))


def _check_subgoal(action: Action, history: Sequence[Step]) -> Action | None:
    """The last check before answering is about the entity the last document was read for
    (the answer taken one hop short), so that is what the agent answers."""
    if not CHECK_SEARCH.read(action.content):
        return None
    reads = [
        t
        for s in history
        if s.actor == action.actor and is_main_read(s) and (t := stated_target(s.content))
    ]
    if not reads:
        return None
    short = reads[-1][1]
    made = redo(CHECK_SEARCH, action, answer=short)
    return Action(action.actor, made.content, "search", {"query": short}) if made else None


def _read_as(form: Form, action: Action, history: Sequence[Step], rel: str, title: str) -> Action:
    """A hop's read of `title`, said as the document of `title` for `rel` (in the
    original's wording, or READ's drawn wording for a detour)."""
    if form is DETOUR:
        text = say(READ, history, action, rel=rel, subject=title)
    else:
        text = redo(form, action, rel=rel, subject=title).content  # type: ignore[union-attr]
    return Action(action.actor, text, "read", {"title": title})


@covers("react", "orchestrator")
def wrong_subgoal(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """planning.wrong_subgoal: a search or read after a sub-goal the question does not
    need next (another entity the documents name, the company's other relation, a city's
    document for a company's link, the answer checked one hop short); messages: see
    `messages.subgoal_message`."""
    if action.tool is None:
        return messages.subgoal_message(action, rng, history)
    if action.tool == "search":
        return _check_subgoal(action, history) or _search_subgoal(action, rng, history)
    if action.tool != "read":
        return None
    form = _form(action, (READ, BACK, DETOUR))
    target = stated_target(action.content) if form else None
    if form is None or target is None:
        return None
    rel, subject = target
    if rel == "parent company":  # the remaining parent companies skipped
        made = redo(form, action, rel="founder")
        return Action(action.actor, made.content, "read", action.tool_args) if made else None
    if form is DETOUR or subject in CITIES:
        return None
    city = rng.choice(sorted(CITIES))
    made = redo(form, action, subject=city)
    return Action(action.actor, made.content, "read", {"title": city}) if made else None


@covers("react", "orchestrator")
def premature_finish(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """Instead of the next search or read, answer with the entity the research has reached
    so far (the hop's subject, named by the last document read). The ReAct agent answers
    with it; the researcher finishes with the value of the last fact it was handed."""
    if action.tool not in ("read", "search") or not history:
        return None
    if action.actor == "researcher":
        f = NEXT_REQUEST.fields(history[last_index(history, "researcher")].content)
        if f is None:
            return None
        subject, value = f["subject"], f["value"]
        text = say(FINAL, history, action, subject=subject, answer=value)
        return Action(action.actor, text, "final_answer", {"answer": value})
    if action.actor != "assistant" or CHECK_SEARCH.read(action.content):
        return None
    main = [str((s.tool_args or {}).get("title", "")) for s in history if is_main_read(s)]
    if not main:
        return None
    # the hop reached: the subject the agent now works on, named by its last main read
    last_title = main[-1]
    body = next((b for t, b in reversed(docs_read(history)) if t == last_title), "")
    names = [e for e in ENTITY.findall(body) if e != last_title]
    reached = next((e for e in names if e in (action.tool_args or {}).values()), None)
    if reached is None:
        return None
    text = say(ANSWER, history, action, subject=last_title, answer=reached)
    return Action(action.actor, text, "final_answer", {"answer": reached})


def _verify_other(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """The verifier re-reads another document than the one it was asked about, taking it
    for that one, and checks what it gives: for the hand-off, the previous hop's fact (the
    candidate taken one hop short); for a check, a detour's fact of the same relation."""
    if not VERIFY_READ.read(action.content) or not history:
        return None
    msg = history[last_index(history, "verifier")].content
    if (f := HANDOFF.fields(msg)) and (facts := parse_facts(f["facts"])) and len(facts) > 1:
        _, subject, value = facts[-2]
    elif f := CHECK.fields(msg):
        fact = other_fact(history, f["rel"], {f["subject"]}, rng)
        if fact is None:
            return None
        _, subject, value = fact
    else:
        return None
    made = redo(VERIFY_READ, action, subject=subject, answer=value)
    return Action(action.actor, made.content, "read", {"title": subject}) if made else None


def _answer_other(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """The ReAct answer (the city for the country, the founder for the city, or another of
    the kind, named with the document that gives it) or the verifier's answer naming
    another entity of the kind the documents read name."""
    answer = str((action.tool_args or {}).get("answer", ""))
    form = ANSWER if action.actor == "assistant" else FINAL
    if not form.read(action.content) or entity_kind(answer) is None:
        return None
    kinds = [entity_kind(answer)]
    if action.actor == "assistant":
        kinds.append({"country": "city", "city": "person"}.get(kinds[0] or ""))
    for kind in kinds:
        pool = named_in(history, kind, {answer}) if kind else []
        if pool:
            other = rng.choice(pool)
            title = next(t for t, text in reversed(docs_read(history)) if other in text)
            made = redo(form, action, answer=other, subject=title)
            return Action(action.actor, made.content, "final_answer", {"answer": other})
    return None


@covers("react", "orchestrator")
def misidentified_object(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """perception.misidentified_object: another document or entity taken for the one
    asked about: a hop's read of another hit of its search (or of the detour it meant to
    glance at) as the subject's own document, the verifier's re-read of another document,
    an answer naming another entity the documents name; messages: see
    `messages.misidentified_message`."""
    if action.tool is None:
        return messages.misidentified_message(action, rng, history)
    if action.tool == "final_answer":
        return _answer_other(action, rng, history)
    if action.tool != "read":
        return None
    if VERIFY_READ.read(action.content):
        return _verify_other(action, rng, history)
    form = _form(action, (READ, BACK, DETOUR))
    target = stated_target(action.content) if form else None
    if form is None or target is None:
        return None
    rel, subject = target
    if form is DETOUR:
        return _read_as(form, action, history, rel, str((action.tool_args or {}).get("title")))
    searches = [s for s in history if s.actor == action.actor and s.tool == "search"]
    at = searches[-1].step + 1 if searches else None
    listed = hits(history[at].content) if at is not None and at < len(history) else []
    skip = known_chain(history) | {subject}
    pool = [t for t in listed if t not in skip]
    same = [t for t in pool if entity_kind(t) == entity_kind(subject)]
    if not (same or pool):
        return None
    return _read_as(form, action, history, rel, rng.choice(same or pool))


@covers("react")
def wrong_title(action: Action, rng: random.Random, history: Sequence[Step] = ()) -> Action | None:
    """action.wrong_tool_argument on a hop's `read`: a neighbouring title mistaken for the
    right one (one of the same kind the run has seen, else another company, city, or a
    person with another first name), named as such in the same wording ("Opening the
    document titled Kofi Weiss to find the birth city.")."""
    if action.tool != "read":
        return None
    form = _form(action, (READ, BACK))
    title = str((action.tool_args or {}).get("title", ""))
    kind = entity_kind(title)
    if form is None or kind is None:
        return None
    seen = [
        e
        for s in history
        if s.kind == "observation"
        for e in ENTITY.findall(s.content)
        if entity_kind(e) == kind and e not in known_chain(history) | {title}
    ]
    if kind == "person":  # a name one word off: the same surname
        seen = [e for e in seen if e.split(" ", 1)[1] == title.split(" ", 1)[1]]
    if seen:
        other = rng.choice(sorted(set(seen)))
    elif kind == "company":
        other = rng.choice([c for c in COMPANIES if c != title])
    elif kind == "city":
        other = rng.choice([c for c in CITIES if c != title])
    elif kind == "person":
        first, last = title.split(" ", 1)
        other = f"{rng.choice([f for f in FIRST if f != first])} {last}"
    else:
        return None
    made = redo(form, action, subject=other)
    return Action(action.actor, made.content, "read", {"title": other}) if made else None


OPERATORS = {
    "action.wrong_tool_argument": wrong_title,
    "coordination.distorted_handoff": covers("orchestrator")(messages.distorted_handoff),
    # these two need a check sent back in a successful run, which the coverage test's slip
    # rollouts rarely hold now that errors propagate: registered, not marked as required
    "coordination.ignored_message": messages.ignored_message,
    "perception.misread_value": covers("orchestrator")(messages.misread_value),
    "planning.wrong_subgoal": wrong_subgoal,
    "planning.premature_finish": premature_finish,
    "perception.misidentified_object": misidentified_object,
    "verification.false_approval": messages.false_approval,
}
"""Taxonomy mode -> operator for this benchmark's messages, reads, searches and answers."""
