"""Re-saying a step with another target: the building block of the web shop's operators.

Why one rewrite for every kind of step: each step states what the agent is after (`belief`),
and the agents act on the latest statement, so the decisive error a step can carry is a
wrong target stated in it: another colour (or size) than the instruction's, in the same
wording, with every field that depends on it changed together (the description, the
options, a cart line, a search query, the options a product page lacks), so the step
reads as the decision of an agent that believes it."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.web_shop import actions as A
from whowhen.benchmarks.web_shop import messages as M
from whowhen.benchmarks.web_shop.pages import current_page, product
from whowhen.benchmarks.web_shop.tasks import COLOURS, SIZES
from whowhen.runtime import Action, Step

FINISHING = (A.CHECKOUT, A.NONE_FITS, M.APPROVE, M.CLOSE)
"""Checkouts: a target stated there changes nothing that follows."""
SELF_CHECKED = (M.ITEM_BAD, M.BUYER_FAIL)
"""Forms whose reason restates the target in free text (left alone: it would disagree)."""
SWAPPABLE: tuple[Form, ...] = tuple(
    f for f in (*A.TOOL_FORMS, *M.TARGET_FORMS) if f not in FINISHING + SELF_CHECKED
)
REPORTS = (M.FOUND, M.ITEM_OK, M.ADDED)
"""Reports of what a page showed (a misread there is `perception.misread_value`)."""
HANDOFFS = (
    M.SEARCH_REQUEST,
    M.SEARCH_AGAIN,
    M.FOUND,
    M.CHECK_ITEM,
    M.ITEM_OK,
    M.BUY,
    M.ADDED,
    M.VERIFY_REQUEST,
    M.CLEAR_REQUEST,
    M.CLEARED,
    M.GIVE_UP,
)
"""Messages that pass the target on to another agent."""
Target = tuple[str, str | None]


def read_form(action: Action, forms: Sequence[Form]) -> tuple[Form, int, dict[str, str]] | None:
    """The first of `forms` the step's text is in: (form, wording, fields)."""
    for form in forms:
        found = form.read(action.content)
        if found is not None:
            return form, found[0], found[1]
    return None


def stated_target(fields: dict[str, str]) -> Target | None:
    """(colour, size) a form's fields state: its description, options or cart line."""
    if m := A.DESC_RE.match(fields.get("desc") or ""):
        return m.group(1), m.group(3)
    if "options" in fields:
        opts = dict(A.OPTION_RE.findall(fields["options"]))
        return opts.get("colour", ""), opts.get("size")
    if "line" in fields:
        opts = dict(A.LINE_OPTION_RE.findall(fields["line"]))
        return opts.get("colour", ""), opts.get("size")
    return None


def other_target(
    now: Target, rng: random.Random, text: str, avoid: Sequence[str] = ()
) -> Target | None:
    """Another colour (any the text does not mention, nor `avoid`), or for a sized good
    now and then a neighbouring size."""
    colour, size = now
    if size in SIZES and not avoid and rng.random() < 0.3:
        i = SIZES.index(size)
        near = [SIZES[j] for j in (i - 1, i + 1) if 0 <= j < len(SIZES)]
        return colour, rng.choice(near)
    words = set(re.findall(r"[a-z]+", text))
    pool = [c for c in COLOURS if c not in words and c not in avoid and c != colour]
    return (rng.choice(pool), size) if pool else None


def _restate(fields: dict[str, str], old: Target, new: Target) -> dict[str, str]:
    """The fields with the target `old` replaced by `new` wherever they state it."""
    out = dict(fields)
    (colour, size), (to_colour, to_size) = old, new
    if m := A.DESC_RE.match(fields.get("desc") or ""):
        out["desc"] = A.describe(to_colour, m.group(2), to_size)
        if "article" in fields:
            out["article"] = A.article(to_colour)
    for key, sep in (("options", " "), ("line", "=")):
        if key in fields:
            text = fields[key].replace(f"colour{sep}{colour}", f"colour{sep}{to_colour}")
            out[key] = text.replace(f"size{sep}{size}", f"size{sep}{to_size}") if size else text
    if "query" in fields:
        out["query"] = fields["query"].replace(colour, to_colour, 1)
    return out


def swap_target(
    action: Action,
    rng: random.Random,
    history: Sequence[Step],
    forms: Sequence[Form] = SWAPPABLE,
) -> Action | None:
    """The step re-said, in its wording, by an agent after another colour or size (None
    if it states no target). Going back from a product is said of a colour the page does
    not offer, with the options it lacks for that target."""
    found = read_form(action, forms)
    if found is None:
        return None
    form, i, fields = found
    now = stated_target(fields)
    if now is None or not now[0]:
        return None
    avoid: tuple[str, ...] = ()
    item = None
    if form is A.BACK:
        page = current_page(history)
        item = product(page.text) if page is not None and page.kind == "product" else None
        if item is None:
            return None
        avoid = dict(item.options).get("colour", ())
    new = other_target(now, rng, action.content, avoid)
    if new is None:
        return None
    changed = _restate(fields, now, new)
    if item is not None:
        want = A.want_of(*new)
        missing = [f"{k} {v}" for k, v in want if not item.offers([(k, v)])]
        changed["missing"] = " and ".join(missing)
    args = action.tool_args
    if form is A.COLOUR_SEARCH:
        args = {"query": changed["query"]}
    return Action(action.actor, form.at(i, **changed), action.tool, args)
