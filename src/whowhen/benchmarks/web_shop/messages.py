"""The orchestrator system's messages (`To <agent>: ...`) and the buyer's clean-up clicks:
their wordings (`Form`s, three each), read back by the policies and the operators.

Why each hand-off restates the target ({article} {desc} under ${cap}, or the options): the
receiving agent works from what it was told (`belief.spec_of`), so a message that passes
on a wrong target, or a report that misreads one, is carried on to the purchase."""

from __future__ import annotations

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.web_shop.actions import P

SEARCH_REQUEST = Form(
    "shop.search_request",
    (
        "To searcher: find {article} {desc} under ${cap} and leave its product page open.",
        "To searcher: please look for {article} {desc} under ${cap}; leave its product page open.",
        "To searcher: we need {article} {desc} under ${cap}. Find it and leave its product "
        "page open.",
    ),
    **P,
)
SEARCH_AGAIN = Form(
    "shop.search_again",
    (
        "To searcher: {items} did not work out. Find {article} {desc} under ${cap} other than "
        "{items} and leave its product page open.",
        "To searcher: please look again for {article} {desc} under ${cap}, skipping {items}; "
        "leave its product page open.",
        "To searcher: we still need {article} {desc} under ${cap}, not {items}. Find it and "
        "leave its product page open.",
    ),
    **P,
)
FOUND = Form(
    "shop.found",
    (
        "To orchestrator: found item {item} ({name}, {price}), {article} {desc} under ${cap}; "
        "its product page is open.",
        "To orchestrator: item {item} ({name}, {price}) fits as {article} {desc} under "
        "${cap}; I left its product page open.",
        "To orchestrator: the match for {article} {desc} under ${cap} is item {item} ({name}, "
        "{price}). Its page is open.",
    ),
    **{**P, "name": r"[A-Z][\w ]*?"},
)
NOT_FOUND = Form(
    "shop.not_found",
    (
        "To orchestrator: no {noun} on the results is {article} {desc} under ${cap}.",
        "To orchestrator: I found no {desc} under ${cap}.",
        "To orchestrator: none of the {noun}s listed is {article} {desc} under ${cap}.",
    ),
    **P,
)
GIVE_UP = Form(
    "shop.give_up",
    (
        "To verifier: the searcher found no {desc} under ${cap}. Please check out with the "
        "cart as it is.",
        "To verifier: there is no {desc} under ${cap} to buy; please close the order with the "
        "cart as it is.",
        "To verifier: no {desc} under ${cap} is left to try. Please check out the cart as it is.",
    ),
    **P,
)
CLOSE = Form(
    "shop.close",
    (
        "No {desc} under ${cap} was found; I will check out with the cart as it is.",
        "Nothing fits the {desc} under ${cap}, so I will check out the cart as it is.",
        "The search for the {desc} under ${cap} came up empty; I will check out.",
    ),
    **P,
)
BUY = Form(
    "shop.buy",
    (
        "To buyer: item {item} ({name}) is open; select {options}, then add it to the cart.",
        "To buyer: please select {options} on item {item} ({name}), which is open, then add "
        "it to the cart.",
        "To buyer: the searcher opened item {item} ({name}). Select {options} and add it to "
        "the cart.",
    ),
    **{**P, "name": r"[A-Z][\w ]*?"},
)
CHECK_ITEM = Form(
    "shop.check_item",
    (
        "To verifier: before buying, please check that the open item {item} is {article} "
        "{desc} under ${cap}.",
        "To verifier: the searcher opened item {item}; is it {article} {desc} under ${cap}?",
        "To verifier: a quick check first: is item {item}, on screen now, {article} {desc} "
        "under ${cap}?",
    ),
    **P,
)
ITEM_OK = Form(
    "shop.item_ok",
    (
        "To orchestrator: item {item} costs {price}, under ${cap}, and offers {options}; go ahead.",
        "To orchestrator: checked, item {item} ({price}) is under ${cap} and offers {options}.",
        "To orchestrator: item {item} fits: {price} is below ${cap} and it has {options}.",
    ),
    **P,
)
ITEM_BAD = Form(
    "shop.item_bad",
    (
        "To orchestrator: Check failed: item {item} is not {article} {desc} under ${cap} "
        "({why}). Please search again.",
        "To orchestrator: item {item} is not the {desc} under ${cap}: {why}. Please search again.",
        "To orchestrator: I cannot approve item {item} as {article} {desc} under ${cap}, "
        "{why}. Please search again.",
    ),
    **{**P, "why": r".+?"},
)
VERIFY_REQUEST = Form(
    "shop.verify_request",
    (
        "To verifier: the buyer added item {item} to the cart. Check the cart against "
        "{article} {desc} under ${cap} and check out if it matches.",
        "To verifier: item {item} is in the cart. Please check it is {article} {desc} under "
        "${cap}, then check out.",
        "To verifier: please review the cart (item {item} was added) and check out if it "
        "holds {article} {desc} under ${cap}.",
    ),
    **P,
)
ADDED = Form(
    "shop.added",
    (
        "To orchestrator: added item {item} to the cart: {line}.",
        "To orchestrator: item {item} is in the cart now ({line}).",
        "To orchestrator: done, the cart line reads {line} for item {item}.",
    ),
    **P,
)
BUYER_FAIL = Form(
    "shop.buyer_fail",
    (
        "To orchestrator: I could not add item {item} as {article} {desc}: {why}.",
        "To orchestrator: item {item} could not be added as {article} {desc}, {why}.",
        "To orchestrator: adding item {item} as {article} {desc} failed: {why}.",
    ),
    **{**P, "why": r".+?"},
)
APPROVE = Form(
    "shop.approve",
    (
        "The cart holds one {desc} under ${cap}, as asked; I will check out.",
        "Matching the request, the cart has one {desc} under ${cap}. I will check out.",
        "Cart checked: exactly one {desc}, under ${cap}. I will check out.",
    ),
    **P,
)
REJECT = Form(
    "shop.reject",
    (
        "To orchestrator: Check failed: the cart holds {holds}, but we need one {desc} under "
        "${cap}. Please fix the cart.",
        "To orchestrator: the cart is not right: it holds {holds}, and we need one {desc} "
        "under ${cap}. Please fix the cart.",
        "To orchestrator: I cannot approve {holds}; we need one {desc} under ${cap}. "
        "Please fix the cart.",
    ),
    **P,
)
CLEAR_REQUEST = Form(
    "shop.clear_request",
    (
        "To buyer: the cart is not {article} {desc} under ${cap}; please empty the cart.",
        "To buyer: please empty the cart; we will start over on {article} {desc} under ${cap}.",
        "To buyer: the verifier sent the cart back, so empty it before we look for {article} "
        "{desc} under ${cap}.",
    ),
    **P,
)
CLEARED = Form(
    "shop.cleared",
    (
        "To orchestrator: the cart is empty now, ready for {article} {desc}.",
        "To orchestrator: I emptied the cart; nothing is in it until we find the {desc}.",
        "To orchestrator: cart cleared, so it can take {article} {desc}.",
    ),
    **P,
)
OPEN_NAMED = Form(
    "shop.open_named",
    (
        "I will open item {item} for the {desc}.",
        "Item {item} is on this results page; I will open it for the {desc}.",
        "Opening item {item}, the {desc} I was handed. I will open it.",
    ),
    **P,
)
BACK_NAMED = Form(
    "shop.back_named",
    (
        "Item {item} is not the page on screen; I will go back to the results for the {desc}.",
        "This is not item {item}, so I will go back to the results for the {desc}.",
        "The page on screen is another item than {item}, the {desc}; I will go back to the "
        "results.",
    ),
    **P,
)
TO_CART = Form(
    "shop.to_cart",
    (
        "The cart still holds an earlier item; I will open the cart to empty it before the {desc}.",
        "Something is already in the cart, so I will open the cart to empty it for the {desc}.",
        "An earlier line is still in the cart; I will open the cart to empty it, then the {desc}.",
    ),
    **P,
)
REMOVE = Form(
    "shop.remove",
    (
        "I will remove {item} from the cart to make room for the {desc}.",
        "Item {item} should not stay in the cart with the {desc}; I will remove {item} from the "
        "cart.",
        "First I will remove {item} from the cart; the {desc} comes after.",
    ),
    **P,
)
EMPTY_BACK = Form(
    "shop.empty_back",
    (
        "The cart is empty; I will go back to the product page for the {desc}.",
        "Cart emptied. I will go back to the product page of the {desc}.",
        "Nothing left in the cart, so I will go back to the product page for the {desc}.",
    ),
    **P,
)
TARGET_FORMS = (
    SEARCH_REQUEST,
    SEARCH_AGAIN,
    FOUND,
    NOT_FOUND,
    GIVE_UP,
    CLOSE,
    CHECK_ITEM,
    ITEM_BAD,
    VERIFY_REQUEST,
    BUYER_FAIL,
    APPROVE,
    REJECT,
    CLEAR_REQUEST,
    CLEARED,
    OPEN_NAMED,
    BACK_NAMED,
    TO_CART,
    REMOVE,
    EMPTY_BACK,
)
"""The message (and buyer click) forms that state the target ({desc}, maybe {cap})."""
OPTION_FORMS = (BUY, ITEM_OK)
"""Forms that state the target's options ({options}: `colour red and size M`)."""
