"""What the web-lookup group chat says on the web shop, and how each step is read back: the
target (colour, product word, size, budget, and once picked the item) every step states
(the programs the experts run and their outputs are `expert_code`'s).

Why a module of its own: the policy (`experts`) and its error operators
(`expert_operators`) must say a step the same way; an operator re-says a step with the
policy's builders and another target, so an injected step reads like a policy's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.web_shop.actions import OPTION_RE, P, article, describe, want_of
from whowhen.benchmarks.web_shop.env import DATA_FILE
from whowhen.benchmarks.web_shop.tasks import parse_instruction
from whowhen.runtime import Action, Step
from whowhen.tools import DATA_DIR, said

CODER, SHOPPER, CHECKER = "Python_Expert", "WebNavigation_Expert", "Verification_Expert"
PATH = f"{DATA_DIR}/{DATA_FILE}"
END = "\n\nTERMINATE"
_FIELDS = {
    **P,
    "noun": r"\w+(?: \w+)?",
    "nouns": r"\w+(?: \w+)?",
    "desc": r"\w+ \w+(?: \w+)?(?: in size \w+)?",
    "product": r"[A-Z][\w ]*?",
    "why": r".+?",
    "holds": r".+?",
}
_DESC = re.compile(r"^(\w+) (\w+(?: \w+)?)(?: in size (\w+))?$")


@dataclass(frozen=True)
class Target:
    """What the chat is buying, as a step states it: the instruction's constraints and,
    once the lookup has found it, the item (id and product name)."""

    colour: str
    noun: str
    size: str | None
    cap: int
    item: str = ""
    product: str = ""

    @property
    def want(self) -> list[tuple[str, str]]:
        return want_of(self.colour, self.size)

    @property
    def options(self) -> str:
        return " and ".join(f"{k} {v}" for k, v in self.want)

    @property
    def desc(self) -> str:
        return describe(self.colour, self.noun, self.size)

    def fields(self) -> dict[str, object]:
        """The fields a form that states the target takes."""
        return {
            "article": article(self.colour),
            "desc": self.desc,
            "noun": self.noun,
            "nouns": plural(self.noun),
            "options": self.options,
            "cap": self.cap,
            "item": self.item,
            "product": self.product,
        }

    def with_(self, **changes: object) -> Target:
        return replace(self, **changes)


def plural(noun: str) -> str:
    if noun.endswith(("ch", "sh", "s", "x")):
        return f"{noun}es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return f"{noun[:-1]}ies"
    return f"{noun}s"


def question_target(history: Sequence[Step]) -> Target:
    colour, noun, size, cap = parse_instruction(history[0].content)
    return Target(colour, noun, size, cap)


def _form(key: str, *variants: str) -> Form:
    return Form(f"shop.expert.{key}", variants, **_FIELDS)


# --- the Python_Expert --------------------------------------------------------------------
PEEK = _form(
    "peek",
    f"First, let me look at how the catalogue file {PATH} is laid out.",
    "Before filtering, I will check the structure of the catalogue file.",
)
LOOKUP = _form(
    "lookup",
    "We need {article} {desc} under ${cap}. Let me look it up in the shop's catalogue ("
    + PATH
    + "): the {nouns} that offer {options}, with their prices against the ${cap} budget.",
    "To buy {article} {desc} under ${cap}, I will first search the catalogue file for "
    "{nouns} with {options} and compare their prices with the ${cap} budget.",
)
FIX = _form(
    "fix",
    "The options are nested under `options` in the catalogue. Here is the corrected lookup "
    "of the {nouns} with {options}, for {article} {desc} under ${cap}:",
    "My mistake: each product keeps its options in an `options` dict. Looking up the "
    "{nouns} with {options} again, for {article} {desc} under ${cap}:",
)
REDO = _form(
    "redo",
    "Understood. The lookup again, each price compared with the ${cap} budget: the {nouns} "
    "with {options}, for {article} {desc}:",
    "Let me fix that: the {nouns} with {options}, and for each whether it is under the "
    "${cap} budget, for {article} {desc}:",
)
REDO_SKIP = _form(
    "redo_skip",
    "I will look again for {article} {desc} under ${cap}, leaving out {items}: the {nouns} "
    "with {options} and their prices against the budget.",
    "Searching the catalogue once more for {article} {desc} under ${cap}, without {items}:",
)
NOTHING = _form(
    "nothing",
    "The lookup printed nothing, so no {noun} in the catalogue offers {options} under "
    "${cap}. Verification_Expert, please confirm.",
)
HANDOFF = _form(
    "handoff",
    "The lookup lists {item} {product} at {price}. WebNavigation_Expert, please buy {item} "
    "({product}) with {options}.",
)

# --- the Verification_Expert --------------------------------------------------------------
PICK = _form(
    "pick",
    "The program checks the product word, the options and the budget. The line that fits "
    "is {item} {product} at {price}. WebNavigation_Expert, please buy {item} ({product}) "
    "with {options}.",
    "Verified: of the {nouns} listed, {item} {product} ({price}) is the one to buy. "
    "WebNavigation_Expert, please open {item} ({product}) in the shop, select {options} "
    "and add it to the cart.",
)
NO_BUDGET = _form(
    "nobudget",
    "The program lists the {nouns} with {options} but never compares their prices with the "
    "${cap} budget. Python_Expert, please add the budget check.",
    "Check failed: there is no price test in the program, so it cannot tell which {noun} is "
    "under ${cap}. Python_Expert, please compare each price with the budget.",
)
NONE_FOUND = _form(
    "none",
    "The lookup finds no {noun} with {options} under ${cap}, so there is nothing to buy. "
    "Checking out with the cart as it is." + END,
)
CHECK = _form(
    "check",
    "Before checking out, let me confirm {item} against the catalogue: a price under ${cap} "
    "and {options} offered.",
    "One more check of {item} in the catalogue file: under ${cap}, with {options}?",
)
CHECK_FAILED = _form(
    "check_failed",
    "The catalogue check fails for {item}: {why}. Python_Expert, please look up {article} "
    "{desc} under ${cap} again without {item}.",
)
CART_WRONG = _form(
    "cart_wrong",
    "The cart holds {holds}, not {item} with {options}. WebNavigation_Expert, please fix the cart.",
)
APPROVE = _form(
    "approve",
    "The cart holds {line}: {item} with {options}, as handed over. Checking out." + END,
    "Verified the cart: {line} is the {desc}. Placing the order." + END,
)

# --- the WebNavigation_Expert -------------------------------------------------------------
SEARCH_ITEM = _form(
    "search",
    "Searching the shop for '{product}' to open {item}.",
    "I will find {item} ({product}) in the shop by searching for its name.",
)
OPEN_ITEM = _form(
    "open",
    "{item} {product} is on the results page; opening it.",
    "Opening {item} ({product}) from the results.",
)
SELECT_OPTION = _form(
    "select",
    "Selecting {name} {value} for {item}.",
    "Now {name} {value} for {item}; selecting it.",
)
ADD_ITEM = _form(
    "add",
    "Selected {options} for {item}; adding it to the cart. Verification_Expert, please "
    "check the cart.",
    "Adding {item} with {options} to the cart. Verification_Expert, please check it.",
)
TO_CART = _form(
    "to_cart",
    "The cart should hold only {item} with {options}; opening the cart to fix it.",
)
REMOVE_LINE = _form(
    "remove",
    "Removing {line} from the cart; the order is {item} with {options}.",
)
BACK_TO_SHOP = _form(
    "back",
    "Going back to buy {item} with {options}.",
)
REFUSED = _form(
    "refused",
    "The shop refuses {name} {value} for {item}: {why} Python_Expert, please find another "
    "{noun} with {options} under ${cap}.",
)
NOT_LISTED = _form(
    "not_listed",
    "{item} is not among the results for '{product}'. Python_Expert, please look up the "
    "{noun} with {options} under ${cap} again without {item}.",
)
CART_READY = _form(
    "cart_ready",
    "The cart now holds {line}. Verification_Expert, please check it again.",
)
EARLY_CHECKOUT = _form(
    "early_checkout",
    "Everything for {item} is set; checking out." + END,
)
STATES = (
    LOOKUP,
    FIX,
    REDO,
    REDO_SKIP,
    NOTHING,
    HANDOFF,
    PICK,
    NO_BUDGET,
    NONE_FOUND,
    CHECK,
    CHECK_FAILED,
    CART_WRONG,
    SEARCH_ITEM,
    OPEN_ITEM,
    ADD_ITEM,
    TO_CART,
    REMOVE_LINE,
    BACK_TO_SHOP,
    REFUSED,
    NOT_LISTED,
    EARLY_CHECKOUT,
    APPROVE,
)
"""The forms whose steps state (part of) the target; each later step takes it from the
most recent statement, field by field."""
SKIPS = (REDO_SKIP, CHECK_FAILED, NOT_LISTED)
"""Forms that name items to leave out of the next lookup ({items} or {item})."""


def stated(step: Step | Action) -> tuple[Form, dict[str, str]] | None:
    """(form, fields) of a step that states the target, else None."""
    text = said(step)
    for form in (*STATES, SELECT_OPTION):
        fields = form.fields(text)
        if fields is not None:
            return form, fields
    return None


def target_of(fields: dict[str, str], before: Target) -> Target:
    """The target a statement gives; what it leaves out is taken from `before`."""
    changes: dict[str, object] = {}
    if m := _DESC.match(fields.get("desc") or ""):
        changes.update(colour=m.group(1), noun=m.group(2), size=m.group(3))
    elif fields.get("options"):
        opts = dict(OPTION_RE.findall(fields["options"]))
        changes.update(colour=opts.get("colour", before.colour), size=opts.get("size"))
    if fields.get("name") in ("colour", "size") and fields.get("value"):
        changes[fields["name"]] = fields["value"]
    if fields.get("cap"):
        changes["cap"] = int(fields["cap"])
    for key in ("item", "product"):
        if fields.get(key):
            changes[key] = fields[key]
    return before.with_(**changes)


def believed(history: Sequence[Step]) -> Target:
    """The target as the agents last stated it (the instruction's before any did)."""
    target = question_target(history)
    for step in history[1:]:
        if step.is_agent_step and (found := stated(step)) is not None:
            target = target_of(found[1], target)
    return target


ADDRESSED = re.compile(rf"\b({CODER}|{SHOPPER}|{CHECKER}), please")


def addressed(step: Step | Action) -> str | None:
    """The expert a message asks to act next (None if it names none)."""
    m = ADDRESSED.search(said(step))
    return m.group(1) if m else None


def skipped(history: Sequence[Step]) -> tuple[str, ...]:
    """Items the chat has ruled out (named by a refusal, a failed check or a re-lookup)."""
    out: dict[str, None] = {}
    for step in history[1:]:
        if not step.is_agent_step:
            continue
        for form in SKIPS:
            fields = form.fields(said(step))
            if fields is not None:
                items = fields.get("items") or fields.get("item") or ""
                out.update(dict.fromkeys(items.split(", ")))
        if (fields := REFUSED.fields(said(step))) is not None:
            out[fields["item"]] = None
    return tuple(i for i in out if i)
