"""Web shop (text, web navigation): a simulated shop site generated per task from its seed,
browsed through text pages with `search`, `click`, `select_option`, `add_to_cart` and
`checkout`.

Each task's catalogue holds 20-45 products; several (6-9 look-alikes by default) share
the product word of the one to buy (and some accessories contain it too), so a search
returns look-alikes that differ in price, colour or size, over several results pages.
Exactly one product matches every constraint of the instruction
(checked at generation). The episode ends with `checkout()`; the purchase is recorded as
the final answer, in the same form as the gold (`P1234 (colour=blue, size=M)`), so
success means the cart held exactly the right item with the right options.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from whowhen.benchmarks.base import integer, section_schema
from whowhen.benchmarks.web_shop.site import Product, line_summary
from whowhen.schema import stable_id

BENCHMARK = "web_shop"
MODALITY = "text"
CATEGORY = "web"
CONFIG_SCHEMA = section_schema(min_decoys=integer(2, 9, 6), max_decoys=integer(2, 9, 9))
"""JSON Schema of this benchmark's section: how many look-alikes share the product word
(each over the budget, or lacking the colour or size), so the agent opens several."""


def check_config(cfg: dict) -> list[tuple[str, str]]:
    """What the schema cannot say: the decoy counts must make a range."""
    if cfg.get("min_decoys", 6) > cfg.get("max_decoys", 9):
        return [("min_decoys", "min_decoys is larger than max_decoys")]
    return []


SIZES = ("XS", "S", "M", "L", "XL")
COLOURS = (
    "black", "white", "grey", "navy", "blue", "teal", "green", "olive",
    "yellow", "orange", "red", "pink", "purple", "brown", "beige",
)  # fmt: skip
# product word -> (category, has sizes, accessory word: "<Adj> <Noun> <Accessory>")
NOUNS: dict[str, tuple[str, bool, str]] = {
    "lamp": ("home", True, "shade"),
    "vase": ("home", True, "stand"),
    "pillow": ("home", True, "cover"),
    "rug": ("home", True, "pad"),
    "mug": ("kitchen", False, "rack"),
    "kettle": ("kitchen", False, "filter"),
    "bowl": ("kitchen", False, "lid"),
    "teapot": ("kitchen", False, "cosy"),
    "jacket": ("apparel", True, "hanger"),
    "hoodie": ("apparel", True, "patch"),
    "beanie": ("apparel", False, "clip"),
    "backpack": ("bags", True, "strap"),
    "tote": ("bags", False, "liner"),
}
STYLES = (
    "Nordic", "Urban", "Classic", "Cozy", "Retro", "Alpine", "Coastal", "Studio",
    "Vintage", "Modern", "Rustic", "Summit", "Harbor", "Meadow", "Loft", "Aurora",
)  # fmt: skip
INSTRUCTION = re.compile(r"Buy an? (\w+) (\w+)(?: in size (\w+))? under \$(\d+)\.")


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str
    catalogue: tuple[Product, ...]
    target_id: str
    answer: str  # the purchase summary of the one right cart


def instruction_text(colour: str, noun: str, size: str | None, cap: int) -> str:
    article = "an" if colour[0] in "aeiou" else "a"
    sized = f" in size {size}" if size else ""
    return f"Buy {article} {colour} {noun}{sized} under ${cap}."


def parse_instruction(text: str) -> tuple[str, str, str | None, int]:
    """(colour, product word, size or None, price cap in dollars) from the instruction."""
    m = INSTRUCTION.search(text)
    if not m:
        raise ValueError("cannot parse the shopping instruction")
    return m.group(1), m.group(2), m.group(3), int(m.group(4))


def _run(rng: random.Random, within: str | None = None, avoid: str | None = None) -> tuple:
    """A contiguous run of 2-4 sizes that contains `within` and/or leaves out `avoid`."""
    runs = [
        SIZES[i : i + n]
        for n in (2, 3, 4)
        for i in range(len(SIZES) - n + 1)
        if (within is None or within in SIZES[i : i + n])
        and (avoid is None or avoid not in SIZES[i : i + n])
    ]
    return rng.choice(runs)


def _colours(rng: random.Random, keep: str | None = None, avoid: str | None = None) -> tuple:
    pool = [c for c in COLOURS if c not in (keep, avoid)]
    picked = rng.sample(pool, rng.randint(1, 3)) + ([keep] if keep else [])
    return tuple(c for c in COLOURS if c in picked)  # shop order, not draw order


def _price(rng: random.Random, lo: int, hi: int) -> int:
    return rng.randint(lo, hi) * 100 + rng.choice((0, 49, 99))


def generate_task(seed: int, index: int, min_decoys: int = 6, max_decoys: int = 9) -> Task:
    rng = random.Random(f"{seed}:shop:{index}")
    nouns = rng.sample(sorted(NOUNS), 6)
    noun = nouns[0]
    category, sized, _ = NOUNS[noun]
    cap = rng.randrange(20, 90, 5)
    colour = rng.choice(COLOURS)
    size = rng.choice(SIZES[1:4]) if sized else None
    # (name, category, cents, options) rows; ids are drawn after the catalogue is complete
    rows: list[tuple[str, str, int, tuple]] = []

    def add(word: str, style: str, cents: int, colours: tuple, sizes: tuple | None) -> None:
        cat, _, _ = NOUNS.get(word, (category, False, ""))
        options = (("colour", colours),) + ((("size", sizes),) if sizes else ())
        rows.append((f"{style} {word.capitalize()}", cat, cents, options))

    n_decoys = rng.randint(min_decoys, max_decoys)
    styles = rng.sample(STYLES, n_decoys + 1)
    add(
        noun,
        styles[0],
        _price(rng, cap // 2, cap - 1),
        _colours(rng, colour),
        _run(rng, size) if sized else None,
    )
    # at least one over budget; most of the others fit the budget but miss an option, so
    # the agent opens them and goes back
    pool = ("price", "colour", "size", "size") if sized else ("price", "colour", "colour")
    kinds = ["price", *rng.choices(pool, k=n_decoys - 1)]
    for style, kind in zip(styles[1:], kinds, strict=False):
        over = kind == "price"
        cents = _price(rng, cap + 1, cap * 3 // 2 + 2) if over else _price(rng, cap // 3, cap - 1)
        colours = _colours(rng, None, colour) if kind == "colour" else _colours(rng, colour)
        sizes = (_run(rng, avoid=size) if kind == "size" else _run(rng, size)) if sized else None
        add(noun, style, cents, colours, sizes)
    accessory = NOUNS[noun][2]
    for style in rng.sample(STYLES, rng.randint(1, 2)):  # "<Style> Lamp Shade": shares "lamp"
        name = f"{style} {noun.capitalize()} {accessory.capitalize()}"
        rows.append((name, category, _price(rng, 4, 15), (("colour", _colours(rng)),)))
    for other in nouns[1:]:
        for style in rng.sample(STYLES, rng.randint(3, 5)):
            has_sizes = NOUNS[other][1]
            add(other, style, _price(rng, 8, 120), _colours(rng), _run(rng) if has_sizes else None)
    ids = [f"P{n}" for n in rng.sample(range(1000, 10000), len(rows))]
    catalogue = [Product(i, *row) for i, row in zip(ids, rows, strict=True)]
    target = catalogue[0]
    rng.shuffle(catalogue)
    # a look-alike within the budget is listed before the target (opened, found lacking an
    # option, left): the agent always has to look at more than one product page
    in_budget = [p for p in catalogue if p.word == noun and p.cents < cap * 100]
    if in_budget[0] is target and len(in_budget) > 1:
        i, j = catalogue.index(target), catalogue.index(in_budget[1])
        catalogue[i], catalogue[j] = catalogue[j], catalogue[i]
    want = {"colour": colour, **({"size": size} if size else {})}
    fits = [p for p in catalogue if p.word == noun and p.cents < cap * 100 and _offers(p, want)]
    assert fits == [target], "generation must leave exactly one matching product"
    gold = line_summary(target.item_id, tuple(want.items()))
    task_id = f"shop-{stable_id(BENCHMARK, seed, index)[:10]}"
    question = instruction_text(colour, noun, size, cap)
    return Task(task_id, question, tuple(catalogue), target.item_id, gold)


def _offers(product: Product, want: dict[str, str]) -> bool:
    options = dict(product.options)
    return all(value in options.get(name, ()) for name, value in want.items())


def make_tasks(cfg: dict, seed: int) -> list[Task]:
    """The registry's entry point: tasks from the benchmark's config section."""
    lo, hi = cfg.get("min_decoys", 6), cfg.get("max_decoys", 9)
    return [generate_task(seed, i, lo, hi) for i in range(cfg["n_tasks"])]
