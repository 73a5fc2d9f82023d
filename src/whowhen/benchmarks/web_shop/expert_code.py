"""The programs the web-lookup group chat writes over the shop's catalogue file, and how
their outputs are read back: the Python_Expert's lookup (with the mistakes its first try
and the operators make), a look at the file's layout, and the verifier's check of the item
in the cart.

Why apart from the chat's wordings (`expert_forms`): the policy and its operators build
every program here, so an injected program differs from the policy's only by its mistake.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

from whowhen.benchmarks.web_shop.expert_forms import PATH, Target, plural
from whowhen.tools import code_output

_LOAD = f'import json\n\nwith open("{PATH}") as f:\n    catalogue = json.load(f)\n'


def lookup_code(
    t: Target,
    budget: bool = True,
    skip: Sequence[str] = (),
    nested: bool = True,
    compare: str = "<",
    last_only: bool = False,
) -> str:
    """The lookup: the products with the product word that offer every wanted option,
    each printed with its price, options and (`budget`) whether it is under the budget.
    `nested=False`: options read at the top level (a KeyError); `compare` and `last_only`
    (the verdict printed after the loop, for the last product only) are the mistakes the
    operators write."""
    wanted = ", ".join(f'"{k}": "{v}"' for k, v in t.want)
    lines = [_LOAD.rstrip("\n"), f"wanted = {{{wanted}}}"]
    if budget:
        lines.append(f"budget = {t.cap}")
    if skip:
        lines.append(f"skip = {tuple(skip)!r}")
    offers = 'p["options"].get(name, [])' if nested else "p[name]"
    cond = [f'p["name"].lower().endswith(" {t.noun}")']
    if skip:
        cond.append('p["id"] not in skip')
    cond.append(f"all(value in {offers} for name, value in wanted.items())")
    lines.append(
        "found = [\n    p\n    for p in catalogue\n    if " + "\n    and ".join(cond) + "\n]"
    )
    lines.append(f'print(len(found), "{plural(t.noun)} with {t.options}:")')
    shown = 'p["id"], p["name"], p["price"], p["options"]'
    if not budget:
        lines.append(f"for p in found:\n    print({shown})")
        return "\n".join(lines)
    body = (
        'price = float(p["price"].lstrip("$"))\n'
        f'verdict = "under budget" if price {compare} budget else "over budget"\n'
    )
    loop = "for p in found:\n" + "".join(f"    {line}\n" for line in body.splitlines())
    end = f"print({shown}, verdict)"
    lines.append(loop + (end if last_only else f"    {end}"))
    return "\n".join(lines)


PEEK_CODE = (
    _LOAD + 'print(len(catalogue), "products; keys:", ", ".join(catalogue[0]))\nprint(catalogue[0])'
)


def check_code(t: Target) -> str:
    """The verifier's check of the item in the cart against the catalogue."""
    wanted = ", ".join(f'"{k}": "{v}"' for k, v in t.want)
    return (
        f'import json\n\nwith open("{PATH}") as f:\n'
        f'    item = next(p for p in json.load(f) if p["id"] == "{t.item}")\n'
        'print(item["id"], item["name"], item["price"])\n'
        f'print("under ${t.cap}:", float(item["price"].lstrip("$")) < {t.cap})\n'
        f"for name, value in {{{wanted}}}.items():\n"
        '    print(f"{name} {value}:", value in item["options"].get(name, []))'
    )


def program_kind(code: str) -> str:
    """peek, check or lookup (by what the program does)."""
    if "keys:" in code:
        return "peek"
    if "next(p for p" in code:
        return "check"
    return "lookup" if "found = [" in code else "other"


def has_budget(code: str) -> bool:
    return "budget = " in code


def skip_of(code: str) -> tuple[str, ...]:
    """The items a lookup leaves out."""
    m = re.search(r"^skip = (\(.*\))$", code, re.M)
    return tuple(ast.literal_eval(m.group(1))) if m else ()


@dataclass(frozen=True)
class Line:
    """One product as the lookup printed it."""

    item: str
    product: str
    price: str
    options: dict[str, list[str]]
    verdict: str  # "under", "over", or "" when the program printed none


_LINE = re.compile(r"^(P\d+) (.+?) (\$\d+\.\d\d) (\{.*\})(?: (under|over) budget)?$", re.M)


def printed(out: str) -> list[Line]:
    """The products a lookup's output lists."""
    return [
        Line(i, name, price, ast.literal_eval(opts), verdict or "")
        for i, name, price, opts, verdict in _LINE.findall(code_output(out))
    ]


def check_result(out: str) -> list[tuple[str, bool]]:
    """(what, passed) for each line of the verifier's check ('under $35', 'colour red')."""
    found = re.findall(r"^(.+?): (True|False)$", code_output(out), re.M)
    return [(what, ok == "True") for what, ok in found]
