"""Error operators for the web-lookup group chat's steps on the web shop, each under the
taxonomy mode it is an instance of. Each re-says the step with the policy's own forms
(`expert_forms`), so an injected step reads like the policy's:

- the lookup looks for a neighbouring colour or size, said so too
  (reasoning.wrong_operand);
- the lookup's budget test compares the wrong way round, so the look-alikes over the
  budget are marked under it (reasoning.wrong_operator);
- the lookup prints its verdict after the loop, for the last product only
  (reasoning.logic_bug);
- the verifier hands over a look-alike over the budget at the price of the line that fits,
  or, after the terminal reported an error, the Python_Expert reads the empty output as
  "nothing found" (both perception.misread_value);
- the verifier hands over a look-alike over the budget, at its own price, as the line that
  fits (perception.misidentified_object);
- the WebNavigation_Expert checks out before the options are selected and the item is in
  the cart (planning.premature_finish);
- the lookup is for the product's accessory (the lamp shade for a lamp), which offers no
  size or is bought instead (planning.wrong_subgoal);
- the WebNavigation_Expert selects the value the page lists next to the one handed over
  (action.wrong_tool_argument);
- the verifier passes a lookup without a budget test, a cart it was about to send back or
  an item its own check failed (verification.false_approval);
- after a send-back the Python_Expert hands over the first line of its old lookup, as if
  the verifier had not written (coordination.ignored_message);
- the verifier's hand-off names an option value the item lists next to the one found
  (coordination.distorted_handoff).

A careful verifier's check of the item against the catalogue catches a look-alike over the
budget; a wrong option stated and bought it checks against the same statement, and passes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.web_shop.expert_code import (
    Line,
    has_budget,
    lookup_code,
    printed,
    program_kind,
    skip_of,
)
from whowhen.benchmarks.web_shop.expert_forms import (
    APPROVE,
    CART_WRONG,
    CHECK_FAILED,
    CHECKER,
    CODER,
    EARLY_CHECKOUT,
    FIX,
    HANDOFF,
    LOOKUP,
    NO_BUDGET,
    NOTHING,
    PICK,
    REDO,
    REDO_SKIP,
    SELECT_OPTION,
    SHOPPER,
    Target,
    believed,
    target_of,
)
from whowhen.benchmarks.web_shop.experts import first_under, handed
from whowhen.benchmarks.web_shop.pages import cart, current_page, product
from whowhen.benchmarks.web_shop.policies import line_text
from whowhen.benchmarks.web_shop.tasks import COLOURS, NOUNS, SIZES
from whowhen.runtime import Action, Step
from whowhen.tools import code_of, failed, last_agent, output_after, program, programs, said

LOOKUPS = (LOOKUP, FIX, REDO, REDO_SKIP)


def _lookup(action: Action, history: Sequence[Step]) -> tuple[Form, int, Target, str] | None:
    """(form, wording, the target it states, its code) of a Python_Expert's lookup."""
    code = code_of(action)
    if action.actor != CODER or program_kind(code) != "lookup" or not history:
        return None
    for form in LOOKUPS:
        found = form.read(said(action))
        if found is not None:
            return form, found[0], target_of(found[1], believed(history)), code
    return None


def _resay(
    action: Action,
    history: Sequence[Step],
    t: Target | None = None,
    compare: str = "<",
    last_only: bool = False,
) -> Action | None:
    """The lookup re-said for target `t` (default: its own), with the given mistakes."""
    found = _lookup(action, history)
    if found is None:
        return None
    form, index, own, code = found
    t = t or own
    skip = skip_of(code)
    text = form.at(index, **t.fields(), items=", ".join(skip))
    nested = "p[name]" not in code
    budget = has_budget(code)
    new = lookup_code(t, budget, skip, nested, compare, last_only)
    return program(CODER, text, new)


def _near(values: Sequence[str], value: str, rng: random.Random) -> str | None:
    """A value listed next to `value` (None if it is not listed or alone)."""
    if value not in values:
        return None
    i = list(values).index(value)
    near = [values[j] for j in (i - 1, i + 1) if 0 <= j < len(values)]
    return rng.choice(near) if near else None


@covers("expert_chat")
def other_option(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """reasoning.wrong_operand: the lookup filters a neighbouring colour (or size)."""
    found = _lookup(action, history)
    if found is None:
        return None
    t = found[2]
    if t.size is not None and rng.random() < 0.4:
        size = _near(SIZES, t.size, rng)
        return _resay(action, history, t.with_(size=size)) if size else None
    colour = _near(COLOURS, t.colour, rng)
    return _resay(action, history, t.with_(colour=colour)) if colour else None


@covers("expert_chat")
def flipped_comparison(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> Action | None:
    """reasoning.wrong_operator: the budget test is `price > budget`."""
    found = _lookup(action, history)
    if found is None or not has_budget(found[3]):
        return None
    return _resay(action, history, compare=">")


@covers("expert_chat")
def verdict_after_loop(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> Action | None:
    """reasoning.logic_bug: the print is dedented out of the loop, so only the last
    product found is printed with its verdict."""
    found = _lookup(action, history)
    if found is None or not has_budget(found[3]):
        return None
    return _resay(action, history, last_only=True)


@covers("expert_chat")
def accessory_lookup(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """planning.wrong_subgoal: the lookup is for the product's accessory (lamp shades)."""
    found = _lookup(action, history)
    if found is None or found[2].noun not in NOUNS:
        return None
    t = found[2]
    return _resay(action, history, t.with_(noun=f"{t.noun} {NOUNS[t.noun][2]}"))


def _pick(action: Action, history: Sequence[Step]) -> tuple[int, list[Line], Target] | None:
    """(wording, the lines of the lookup it reads, target) of the verifier's hand-off."""
    found = PICK.read(action.content) if action.actor == CHECKER and not action.tool else None
    lookups = [s for s in programs(history, CODER) if program_kind(code_of(s)) == "lookup"]
    if found is None or not lookups:
        return None
    lines = printed(output_after(history, lookups[-1]))
    return found[0], lines, target_of(found[1], believed(history))


def _over_budget(
    action: Action, history: Sequence[Step], rng: random.Random, misread: bool
) -> Action | None:
    found = _pick(action, history)
    if found is None:
        return None
    index, lines, t = found
    fits = first_under(lines)
    over = [line for line in lines if line.verdict == "over"]
    if fits is None or not over:
        return None
    taken = rng.choice(over)
    fields = handed(t, taken)
    if misread:
        fields["price"] = fits.price
    return Action(CHECKER, PICK.at(index, **fields))


@covers("expert_chat")
def misread_price(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """perception.misread_value: the verifier reads the fitting line's price beside a
    look-alike over the budget and hands the look-alike over at that price."""
    return _over_budget(action, history, rng, misread=True)


@covers("expert_chat")
def error_read_as_empty(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> Action | None:
    """perception.misread_value: the lookup failed (the terminal printed an error), and
    instead of fixing it the Python_Expert takes the empty output for nothing found."""
    if action.actor != CODER or FIX.read(said(action)) is None:
        return None
    last = last_agent(history)
    if last is None or last.actor != CODER or not failed(output_after(history, last)):
        return None
    return Action(CODER, NOTHING.say(history, **believed(history).fields()))


@covers("expert_chat")
def other_line(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """perception.misidentified_object: the verifier takes a look-alike's line, over the
    budget, for the one that fits."""
    return _over_budget(action, history, rng, misread=False)


@covers("expert_chat")
def early_checkout(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """planning.premature_finish: instead of selecting an option, the WebNavigation_Expert
    checks out (the item is not in the cart yet)."""
    if action.actor != SHOPPER or action.tool != "select_option" or not history:
        return None
    if SELECT_OPTION.read(action.content) is None:
        return None
    text = EARLY_CHECKOUT.say(history, **believed(history).fields())
    return Action(SHOPPER, text, "checkout", {})


@covers("expert_chat")
def neighbour_value(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """action.wrong_tool_argument: the value the page lists next to the one to select."""
    found = SELECT_OPTION.read(action.content) if action.actor == SHOPPER else None
    page = current_page(history)
    shown = product(page.text) if page is not None and page.kind == "product" else None
    if found is None or action.tool != "select_option" or shown is None:
        return None
    index, f = found
    other = _near(dict(shown.options).get(f["name"], ()), f["value"], rng)
    if other is None:
        return None
    text = SELECT_OPTION.at(index, **{**f, "value": other})
    return Action(SHOPPER, text, "select_option", {"name": f["name"], "value": other})


@covers("expert_chat")
def approved_anyway(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """verification.false_approval: the verifier hands over the first product of a lookup
    with no budget test instead of sending it back, or checks out the cart it was about
    to send back."""
    if action.actor != CHECKER or action.tool is not None or not history:
        return None
    if NO_BUDGET.read(action.content) is not None:
        last = last_agent(history)
        lines = printed(output_after(history, last)) if last is not None else []
        if not lines:
            return None
        return Action(CHECKER, PICK.say(history, **handed(believed(history), lines[0])))
    if CART_WRONG.read(action.content) is None and CHECK_FAILED.read(action.content) is None:
        return None
    lines = cart(history)
    if len(lines) != 1:
        return None
    t = believed(history)
    text = APPROVE.say(history, **t.fields(), line=line_text(lines[0]))
    return Action(CHECKER, text, "checkout", {})


@covers("expert_chat")
def handed_off_anyway(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """coordination.ignored_message: sent back for a missing budget test, the
    Python_Expert hands over the first product its old lookup printed."""
    last = last_agent(history) if history else None
    if action.actor != CODER or last is None or NO_BUDGET.read(last.content) is None:
        return None
    lookups = [s for s in programs(history, CODER) if program_kind(code_of(s)) == "lookup"]
    lines = printed(output_after(history, lookups[-1])) if lookups else []
    if not lines:
        return None
    return Action(CODER, HANDOFF.say(history, **handed(believed(history), lines[0])))


@covers("expert_chat")
def other_option_handed(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> Action | None:
    """coordination.distorted_handoff: the hand-off names an option value the item lists
    next to the one found (the size, or the colour)."""
    found = _pick(action, history)
    if found is None:
        return None
    index, lines, t = found
    line = next((ln for ln in lines if ln.item == t.item), None)
    if line is None:
        return None
    changes = [
        (name, near)
        for name, value in t.want
        if (near := _near(line.options.get(name, []), value, rng)) is not None
    ]
    if not changes:
        return None
    name, value = rng.choice(changes)
    fields = {**handed(t.with_(**{name: value}), line)}
    return Action(CHECKER, PICK.at(index, **fields))


OPERATORS = {
    "reasoning.wrong_operand": other_option,
    "reasoning.wrong_operator": flipped_comparison,
    "reasoning.logic_bug": verdict_after_loop,
    "perception.misread_value": (misread_price, error_read_as_empty),
    "perception.misidentified_object": other_line,
    "planning.premature_finish": early_checkout,
    "planning.wrong_subgoal": accessory_lookup,
    "action.wrong_tool_argument": neighbour_value,
    "verification.false_approval": approved_anyway,
    "coordination.ignored_message": handed_off_anyway,
    "coordination.distorted_handoff": other_option_handed,
}
"""Taxonomy mode -> the web-lookup chat's operator for it."""
