"""Document QA (text, multi-hop research): a generated local corpus, `search` and `read`
tools, questions that follow a chain of documents (company -> parent company -> ... ->
founder -> birth city -> country).

Every task gets its own corpus from its seed. Documents are several sentences long and
name other entities (a company's partner and home city, a person's later employer), so a
search returns several hits and the answer only comes from reading the right documents in
order. Chains have 1-4 parent-company links by default (runs as long as real
research traces, with a tail).
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from whowhen.benchmarks.base import integer, section_schema
from whowhen.schema import stable_id

BENCHMARK = "doc_qa"
MODALITY = "text"
CATEGORY = "research"
CONFIG_SCHEMA = section_schema(min_parents=integer(0, 6, 1), max_parents=integer(0, 6, 4))
"""JSON Schema of this benchmark's section: how many parent-company links a chain has."""


def check_config(cfg: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What the schema cannot say: the parent counts must make a range."""
    if cfg.get("min_parents", 1) > cfg.get("max_parents", 4):
        return [("min_parents", "min_parents is larger than max_parents")]
    return []


FIRST = (
    "Amara", "Bruno", "Chen", "Dalia", "Emil", "Farah", "Goran", "Hana",
    "Ivo", "Jana", "Kofi", "Lena", "Mateo", "Nia", "Omar", "Pia",
)  # fmt: skip
LAST = ("Okafor", "Silva", "Novak", "Haddad", "Larsen", "Moreau", "Tanaka", "Weiss")
COMPANIES = (
    "Brightloom", "Corvid Labs", "Duneworks", "Emberly", "Fjordline", "Glassmere",
    "Halcyon Tools", "Ironleaf", "Juniper Grid", "Kestrel Bio", "Lumenfold", "Marrow Systems",
    "Northwind Metals", "Oakhurst", "Pellucid", "Quarry Nine",
)  # fmt: skip
CITIES = {
    "Porto": "Portugal",
    "Lyon": "France",
    "Graz": "Austria",
    "Tartu": "Estonia",
    "Kraków": "Poland",
    "Bergen": "Norway",
    "Ghent": "Belgium",
    "Turin": "Italy",
    "Malmö": "Sweden",
    "Split": "Croatia",
}
INDUSTRIES = ("robotics", "logistics", "textile", "software", "biotech", "energy", "optics")
JOBS = ("engineer", "chemist", "designer", "economist", "physicist")
RELATIONS = ("parent company", "founder", "birth city", "country")
QUESTION = "In which {what} was the founder of {parents}{company} born?"
QUESTION_RE = re.compile(
    r"In which (city|country) was the founder of ((?:the parent company of )*)(.+?) born\?"
)
PARENT = "the parent company of "
FOUNDED = re.compile(r"was founded in \d+ by ([A-Z]\w+ [A-Z]\w+)\.")
BORN = re.compile(r"was born in ([\w\u00c0-\u017f]+)\.")
LOCATED = re.compile(r"is a city in ([\w ]+)\.")
OWNED = re.compile(r"is a subsidiary of ([A-Z][\w ]*?)\.")


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str
    company: str
    hops: int  # documents to read in order: one per relation of the chain
    corpus: tuple[tuple[str, str], ...]  # (title, text)
    answer: str


def _company_doc(
    rng: random.Random, company: str, founder: str, parent: str | None, partner: str
) -> str:
    city = rng.choice(sorted(CITIES))
    parts = [
        f"{company} is a {rng.choice(INDUSTRIES)} company based in {city}.",
        f"{company} was founded in {rng.randint(1950, 2015)} by {founder}.",
        f"It employs about {rng.randint(2, 90) * 10} people.",
    ]
    if parent is not None:
        parts.append(f"Since {rng.randint(1990, 2022)}, {company} is a subsidiary of {parent}.")
    parts.append(f"In {rng.randint(1995, 2023)} it signed a supply deal with {partner}.")
    return " ".join(parts)


def _person_doc(rng: random.Random, person: str, city: str, employer: str) -> str:
    job, studied = rng.choice(JOBS), rng.choice(sorted(CITIES))
    article = "an" if job[0] in "aeiou" else "a"
    return (
        f"{person} is {article} {job}. {person} was born in {city}. {person} studied in "
        f"{studied} and later advised {employer}."
    )


def _city_doc(rng: random.Random, city: str) -> str:
    near = rng.choice([c for c in CITIES if c != city])
    return (
        f"{city} is a city in {CITIES[city]}. It has about {rng.randint(80, 900)} thousand "
        f"inhabitants and lies {rng.randint(40, 900)} km from {near}."
    )


def generate_tasks(
    n_tasks: int, seed: int, min_parents: int = 1, max_parents: int = 4
) -> list[Task]:
    tasks = []
    for index in range(n_tasks):
        rng = random.Random(f"{seed}:doc:{index}")
        n_parents = rng.randint(min_parents, max_parents)
        companies = rng.sample(COMPANIES, min(len(COMPANIES), n_parents + 4))
        chain, others = companies[: n_parents + 1], companies[n_parents + 1 :]
        people = rng.sample([f"{f} {last}" for f in FIRST for last in LAST], len(companies) + 2)
        founder_of = dict(zip(companies, people, strict=False))
        parent_of: dict[str, str | None] = {c: None for c in companies}
        for child, parent in itertools.pairwise(chain):
            parent_of[child] = parent
        for other in others:  # distractor companies: some have a parent outside the chain
            parent_of[other] = rng.choice([None, *[c for c in others if c != other]])
        born = {p: rng.choice(sorted(CITIES)) for p in people}
        docs = [
            (
                c,
                _company_doc(
                    rng,
                    c,
                    founder_of[c],
                    parent_of[c],
                    rng.choice([x for x in companies if x != c]),
                ),
            )
            for c in companies
        ]
        docs += [(p, _person_doc(rng, p, born[p], rng.choice(companies))) for p in people]
        docs += [(c, _city_doc(rng, c)) for c in CITIES]
        country = rng.random() < 0.5
        city = born[founder_of[chain[-1]]]
        answer = CITIES[city] if country else city
        rng.shuffle(docs)
        question = QUESTION.format(
            what="country" if country else "city", parents=PARENT * n_parents, company=chain[0]
        )
        task_id = f"doc-{stable_id(BENCHMARK, seed, index)[:10]}"
        hops = n_parents + 2 + country
        tasks.append(Task(task_id, question, chain[0], hops, tuple(docs), answer))
    return tasks


def chain_of(text: str) -> tuple[str, tuple[str, ...]]:
    """(company, the relations to follow in order) from the question text."""
    m = QUESTION_RE.search(text)
    if m is None:
        raise ValueError("cannot parse the question")
    parents = m.group(2).count(PARENT)
    last = ("birth city", "country") if m.group(1) == "country" else ("birth city",)
    return m.group(3), ("parent company",) * parents + ("founder", *last)


def parse_question(text: str) -> tuple[str, int]:
    """(company, hops) from the question text."""
    company, relations = chain_of(text)
    return company, len(relations)


def make_tasks(cfg: dict, seed: int) -> list[Task]:
    """The registry's entry point: tasks from the benchmark's config section."""
    return generate_tasks(
        cfg["n_tasks"], seed, cfg.get("min_parents", 1), cfg.get("max_parents", 4)
    )
