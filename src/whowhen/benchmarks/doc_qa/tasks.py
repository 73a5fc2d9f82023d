"""Document QA (text, multi-hop research): a generated local corpus, `search` and `read`
tools, questions that need 2 or 3 hops (company -> founder -> birth city -> country).

Every task gets its own small corpus from its seed, with distractor documents, so the
answer can only come from reading the right documents in order.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from whowhen.schema import stable_id

BENCHMARK = "doc_qa"
MODALITY = "text"
CATEGORY = "research"
FIRST = (
    "Amara",
    "Bruno",
    "Chen",
    "Dalia",
    "Emil",
    "Farah",
    "Goran",
    "Hana",
    "Ivo",
    "Jana",
    "Kofi",
    "Lena",
    "Mateo",
    "Nia",
    "Omar",
    "Pia",
)
LAST = ("Okafor", "Silva", "Novak", "Haddad", "Larsen", "Moreau", "Tanaka", "Weiss")
COMPANIES = (
    "Brightloom",
    "Corvid Labs",
    "Duneworks",
    "Emberly",
    "Fjordline",
    "Glassmere",
    "Halcyon Tools",
    "Ironleaf",
    "Juniper Grid",
    "Kestrel Bio",
)
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
QUESTIONS = {
    2: "In which city was the founder of {company} born?",
    3: "In which country was the founder of {company} born?",
}
FOUNDED = re.compile(r"was founded in \d+ by ([A-Z]\w+ [A-Z]\w+)\.")
BORN = re.compile(r"was born in ([\w\u00c0-\u017f]+)\.")
LOCATED = re.compile(r"is a city in ([\w ]+)\.")


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str
    company: str
    hops: int
    corpus: tuple[tuple[str, str], ...]  # (title, text)
    answer: str


def generate_tasks(n_tasks: int, seed: int) -> list[Task]:
    tasks = []
    for index in range(n_tasks):
        rng = random.Random(f"{seed}:doc:{index}")
        people = rng.sample([f"{f} {last}" for f in FIRST for last in LAST], 6)
        companies = rng.sample(COMPANIES, 4)
        cities = list(CITIES)
        docs = []
        founder_of = {}
        for company, person in zip(companies, people, strict=False):
            founder_of[company] = person
            docs.append(
                (
                    company,
                    f"{company} is a company. {company} was founded in "
                    f"{rng.randint(1950, 2015)} by {person}.",
                )
            )
        born = {p: rng.choice(cities) for p in people}
        docs += [(p, f"{p} is an engineer. {p} was born in {born[p]}.") for p in people]
        docs += [(c, f"{c} is a city in {CITIES[c]}.") for c in cities]
        company, hops = companies[0], rng.choice((2, 3))
        city = born[founder_of[company]]
        answer = city if hops == 2 else CITIES[city]
        rng.shuffle(docs)
        task_id = f"doc-{stable_id(BENCHMARK, seed, index)[:10]}"
        tasks.append(
            Task(
                task_id, QUESTIONS[hops].format(company=company), company, hops, tuple(docs), answer
            )
        )
    return tasks


def parse_question(text: str) -> tuple[str, int]:
    """(company, hops) from the question text."""
    for hops, template in QUESTIONS.items():
        pattern = re.escape(template).replace(re.escape("{company}"), r"(.+?)")
        m = re.search(pattern, text)
        if m:
            return m.group(1), hops
    raise ValueError("cannot parse the question")


def make_tasks(cfg: dict, seed: int) -> list[Task]:
    """The registry's entry point: tasks from the benchmark's config section."""
    return generate_tasks(cfg["n_tasks"], seed)
