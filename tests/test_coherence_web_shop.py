"""Coherent errors for web_shop: an injected step must not contradict itself.

`contradiction` reads ONE step (its text, tool and arguments) and says why it contradicts
itself, or None: the text announces another tool than the one called, the option value or
item the text says it chooses is not the argument, the chosen item is not listed as the
text lists it, its price does not fit the budget the text states, or a report names two
items. It must flag no step of the slip-free reference rollouts and no replacement made by
the package's operators (else an attributor could find the error without reading the run),
and it must flag the contradictions the audit found (so it is a real check)."""

from __future__ import annotations

import re
from collections.abc import Callable

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.web_shop import actions as A
from whowhen.benchmarks.web_shop import messages as M
from whowhen.benchmarks.web_shop.actions import DESC_RE, LINE_OPTION_RE, LISTED, OPTION_RE
from whowhen.benchmarks.web_shop.operators import OPERATORS
from whowhen.runtime import Action

from .coherence_checks import (
    direct_replacements,
    planned_replacements,
    reference_test,
    replacement_test,
    table,
)

BENCHMARK = "web_shop"
SYSTEMS = ("react", "orchestrator")
# what a sentence says the agent will do -> the tool that does it, tried in order
_ANNOUNCES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bI will check out\b"), "checkout"),
    (re.compile(r"\bI will add (?:it|the \w+) to the cart\b"), "add_to_cart"),
    (re.compile(r"\bI will select\b"), "select_option"),
    (re.compile(r"\bI will search\b|\bSearching\b"), "search"),
    (re.compile(r"\bI will (?:open|go back|remove)\b"), "click"),
)
# form -> (tool, the argument it sets, what the text says it is)
_TOOL_FORMS: tuple[tuple[Form, str, str | None, Callable[[dict], str] | None], ...] = (
    (A.SEARCH, "search", "query", lambda f: f["noun"]),
    (A.RETRY, "search", "query", lambda f: f["noun"]),
    (A.COLOUR_SEARCH, "search", "query", lambda f: f["query"]),
    (A.CLICK, "click", "target", lambda f: re.search(r"\((P\d+),", f["choice"]).group(1)),
    (A.NEXT_PAGE, "click", "target", lambda f: "next"),
    (A.SCAN, "click", "target", lambda f: "next"),
    *(
        (form, "click", "target", lambda f: "back")
        for form in (A.SCAN_BACK, A.BACK, A.BACK_CART, M.BACK_NAMED, M.EMPTY_BACK)
    ),
    (A.VIEW_CART, "click", "target", lambda f: "cart"),
    (M.TO_CART, "click", "target", lambda f: "cart"),
    (M.REMOVE, "click", "target", lambda f: f"remove {f['item']}"),
    (A.REMOVE_WRONG, "click", "target", lambda f: f"remove {f['item']}"),
    (M.OPEN_NAMED, "click", "target", lambda f: f["item"]),
    (A.SELECT, "select_option", None, None),
    (A.ADD, "add_to_cart", None, None),
    (A.CHECKOUT, "checkout", None, None),
    (A.NONE_FITS, "checkout", None, None),
    (M.APPROVE, "checkout", None, None),
    (M.CLOSE, "checkout", None, None),
)


def _announced(text: str) -> str | None:
    return next((tool for pattern, tool in _ANNOUNCES if pattern.search(text)), None)


def _cents(price: str) -> int:
    dollars, cents = price.lstrip("$").split(".")
    return int(dollars) * 100 + int(cents)


def _click_problem(f: dict[str, str]) -> str | None:
    listed = {
        f"{n} ({i}, ${d}.{c})": int(d) * 100 + int(c) for n, i, d, c in LISTED.findall(f["listing"])
    }
    choice, cap = f["choice"], int(f["cap"])
    if choice not in listed:
        return f"{choice} is not listed as the text lists it"
    if listed[choice] >= cap * 100:
        return f"{choice} is said to fit the ${cap} budget"
    return None


def _wanted(desc: str) -> dict[str, str]:
    """The options a description ("red lamp in size M") asks for."""
    m = DESC_RE.match(desc)
    return {"colour": m.group(1), **({"size": m.group(3)} if m and m.group(3) else {})} if m else {}


def _target_problem(text: str) -> str | None:
    """A step whose stated target disagrees with what the same step says about it: the
    options a product lacks are not the wanted ones, a noted item's options are not the
    target's, or a cart line called wrong (or sent back) matches the target."""
    if (f := A.BACK.fields(text)) and not set(OPTION_RE.findall(f["missing"])) <= set(
        _wanted(f["desc"]).items()
    ):
        return f"lacks {f['missing']}, which the {f['desc']} does not ask for"
    if (f := A.NOTE.fields(text)) and dict(OPTION_RE.findall(f["options"])) != _wanted(f["desc"]):
        return f"notes {f['options']} for the {f['desc']}"
    if (f := A.REMOVE_WRONG.fields(text)) and dict(LINE_OPTION_RE.findall(f["line"])) == _wanted(
        f["desc"]
    ):
        return f"calls {f['line']} not the {f['desc']}"
    if (f := M.REJECT.fields(text)) and "(" in f["holds"]:
        held = dict(LINE_OPTION_RE.findall(f["holds"]))
        if held == _wanted(f["desc"]) and f["holds"].split(" (")[0].lower().endswith(
            DESC_RE.match(f["desc"]).group(2)
        ):
            return f"sends back {f['holds']} as not the {f['desc']}"
    return None


def _message_problem(text: str) -> str | None:
    if (f := M.ADDED.fields(text)) and not f["line"].startswith(f["item"] + " "):
        return f"reports adding {f['item']} while the cart line is {f['line']}"
    if (f := M.ITEM_OK.fields(text)) and _cents(f["price"]) >= int(f["cap"]) * 100:
        return f"approves {f['price']} as under ${f['cap']}"
    if problem := _target_problem(text):
        return problem
    if tool := _announced(text.split(": ", 1)[-1]):
        return f"a message announcing {tool}"
    return None


def contradiction(action: Action) -> str | None:
    """Why this one step contradicts itself (None if it does not), from its text, tool and
    arguments alone."""
    text, args = action.content, action.tool_args or {}
    if action.tool is None:
        return _message_problem(text)
    for form, tool, arg, said in _TOOL_FORMS:
        f = form.fields(text)
        if f is None:
            continue
        if tool != action.tool:
            return f"the text announces {tool} but calls {action.tool}"
        if arg is not None and said is not None and str(args.get(arg, "")) != said(f):
            return f"the text says {arg} {said(f)} but calls {args}"
        if form is A.CLICK:
            return _click_problem(f)
        if problem := _target_problem(text):
            return problem
        if form is A.SELECT:
            if (args.get("name"), args.get("value")) != (f["name"], f["value"]):
                return f"the text selects {f['name']} {f['value']} but calls {args}"
            if f["value"] not in [v.strip() for v in f["values"].split(",")]:
                return f"{f['value']} is not among the options the text lists"
        return None
    said = _announced(text)
    if said is not None and said != action.tool:
        return f"the text announces {said} but calls {action.tool}"
    return None


test_no_reference_step_is_flagged = reference_test(BENCHMARK, SYSTEMS, contradiction, 101)
_OPS = table(OPERATORS)
# `all_modes_test`'s sources on 60 tasks, not 30: the rollouts slip with these operators, and
# now that every one is decisive, fewer of them succeed (only successful runs are injected)
test_no_replacement_is_flagged = replacement_test(
    SYSTEMS,
    contradiction,
    lambda system: planned_replacements(
        BENCHMARK, system, _OPS, seeds=(3, 4), per_run=8, together=True, n_tasks=60
    ),
    lambda system: direct_replacements(
        BENCHMARK, system, _OPS, seeds=(0,), successful_only=True, n_tasks=60
    ),
    at_least=101,
)


HEAD = "The results list these lamps: Aurora Lamp (P9088, $19.00), Nordic Lamp (P8724, $53.00). "
TAIL = "I will open it and see if it is the red lamp I need."


def test_the_check_flags_the_contradictions_the_audit_found() -> None:
    select = "Options for the lamp's colour: black, grey, pink. I will select colour black."
    opens = f"{HEAD}Aurora Lamp (P9088, $19.00) fits the $35 budget; {TAIL}"
    bad = [
        Action("assistant", select, "select_option", {"name": "colour", "value": "grey"}),
        Action(
            "assistant",
            "Options for the lamp's colour: black, grey. I will select colour pink.",
            "select_option",
            {"name": "colour", "value": "pink"},
        ),
        Action("assistant", "The lamp is in the cart; I will check out.", "add_to_cart", {}),
        Action(
            "assistant",
            "All options for the lamp are set; I will add it to the cart.",
            "checkout",
            {},
        ),
        Action("assistant", opens, "click", {"target": "P8724"}),
        Action(
            "assistant",
            f"{HEAD}Nordic Lamp (P8724, $53.00) fits the $35 budget; {TAIL}",
            "click",
            {"target": "P8724"},
        ),
        Action(
            "assistant",
            "I need a red lamp under $35; I will search the shop for lamp.",
            "search",
            {"query": "lamp shade"},
        ),
        Action("buyer", "I will open item P9088 for the red lamp.", "click", {"target": "P8724"}),
        Action(
            "buyer",
            "To orchestrator: added item P9088 to the cart: "
            "P8724 Nordic Lamp (colour=red) | $53.00.",
        ),
    ]
    for action in bad:
        assert contradiction(action), action
    assert contradiction(Action("assistant", opens, "click", {"target": "P9088"})) is None
    more = [
        Action("assistant", "I will open the cart and check the lamp's line.", "checkout", {}),
        Action(
            "verifier",
            "To orchestrator: item P8724 costs $53.00, under $35, and offers colour red; go ahead.",
        ),
        Action(
            "assistant",
            "Nothing left to try here under $35. I will open the next page of lamps for the "
            "red lamp.",
            "click",
            {"target": "back"},
        ),
        Action(
            "assistant",
            "It turns out Nordic Lamp has no colour blue, so it is not the red lamp I need. "
            "I will go back to the results.",
            "click",
            {"target": "back"},
        ),
        Action(
            "assistant",
            "This page shows Nordic Lamp (P8724, $53.00) with colour blue; it is the red lamp "
            "under $60 I need.",
        ),
        Action(
            "assistant",
            "That line (P8724 Nordic Lamp (colour=red) | $53.00) is not the red lamp; I will "
            "remove P8724 from the cart.",
            "click",
            {"target": "remove P8724"},
        ),
        Action(
            "verifier",
            "To orchestrator: I cannot approve Nordic Lamp (colour=red); we need one red lamp "
            "under $60. Please fix the cart.",
        ),
    ]
    for action in more:
        assert contradiction(action), action
