"""Table QA (text, data science): a generated sales table, aggregation questions, a SQL tool.

The table is generated from the task seed and held in an in-process DuckDB database;
the agent sees its schema and the distinct values of its text columns in the task text,
and must query it with `sql(query)`. The gold answer is computed with Polars from the
same rows, independently of the SQL path, so a wrong query gives a wrong answer.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import lru_cache

import polars as pl

from whowhen.schema import stable_id
from whowhen.tools import format_number

BENCHMARK = "table_qa"
MODALITY = "text"
CATEGORY = "data_science"
REGIONS = ("North", "South", "East", "West")
PRODUCTS = ("lamps", "chairs", "desks", "shelves", "rugs")
MEASURES = ("units", "revenue")
AGGREGATES = {"total": "SUM", "average": "AVG", "largest": "MAX", "smallest": "MIN"}
_QUESTION = "What is the {agg} {measure} of {product} sold in the {region} region in month {month}?"
_PARSE = re.compile(
    r"What is the (\w+) (\w+) of (\w+) sold in the (\w+) region in month "
    r"(\d+)\?"
)


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str
    seed: int
    agg: str
    measure: str
    product: str
    region: str
    month: int
    answer: str


@lru_cache(maxsize=256)
def make_table(seed: int, n_rows: int = 360) -> pl.DataFrame:
    """The task's table; cached because generation and every reset ask for the same one
    (Polars frames are immutable, so sharing is safe). 360 rows: several sales per
    (product, region, month), so the aggregate is over several values and listing them
    is worth a query."""
    rng = random.Random(seed)
    rows = [
        {
            "region": rng.choice(REGIONS),
            "product": rng.choice(PRODUCTS),
            "month": rng.randint(1, 6),
            "units": rng.randint(1, 40),
        }
        for _ in range(n_rows)
    ]
    frame = pl.DataFrame(rows)
    prices = {p: 10 + 7 * i for i, p in enumerate(PRODUCTS)}
    return frame.with_columns(
        (pl.col("units") * pl.col("product").replace_strict(prices)).alias("revenue")
    )


@lru_cache(maxsize=256)
def table_csv(seed: int) -> str:
    """The task's table as CSV text (the file a program reads)."""
    return make_table(seed).write_csv()


def gold_answer(
    table: pl.DataFrame, agg: str, measure: str, product: str, region: str, month: int
) -> str | None:
    rows = table.filter(
        (pl.col("product") == product) & (pl.col("region") == region) & (pl.col("month") == month)
    )[measure]
    if rows.len() == 0:
        return None
    value = {
        "total": rows.sum(),
        "average": rows.mean(),
        "largest": rows.max(),
        "smallest": rows.min(),
    }[agg]
    return format_number(round(float(value), 2))


def generate_tasks(n_tasks: int, seed: int) -> list[Task]:
    tasks = []
    index = 0
    while len(tasks) < n_tasks:
        rng = random.Random(f"{seed}:table:{index}")
        table_seed = rng.randrange(2**31)
        table = make_table(table_seed)
        picked = (
            rng.choice(list(AGGREGATES)),
            rng.choice(MEASURES),
            rng.choice(PRODUCTS),
            rng.choice(REGIONS),
            rng.randint(1, 6),
        )
        answer = gold_answer(table, *picked)
        index += 1
        if answer is None:  # no matching rows: ask something answerable instead
            continue
        agg, measure, product, region, month = picked
        question = _QUESTION.format(
            agg=agg, measure=measure, product=product, region=region, month=month
        )
        task_id = f"table-{stable_id(BENCHMARK, seed, index)[:10]}"
        tasks.append(
            Task(task_id, question, table_seed, agg, measure, product, region, month, answer)
        )
    return tasks


def parse_question(text: str) -> tuple[str, str, str, str, int]:
    m = _PARSE.search(text)
    if not m:
        raise ValueError("cannot parse the question")
    agg, measure, product, region, month = m.groups()
    return agg, measure, product, region, int(month)


def query_for(agg: str, measure: str, product: str, region: str, month: int) -> str:
    """The SQL a careful analyst writes for the question (the reference policy's query)."""
    return (
        f"SELECT ROUND({AGGREGATES[agg]}({measure}), 2) AS value FROM sales "
        f"WHERE product = '{product}' AND region = '{region}' AND month = {month}"
    )


def make_tasks(cfg: dict, seed: int) -> list[Task]:
    """The registry's entry point: tasks from the benchmark's config section."""
    return generate_tasks(cfg["n_tasks"], seed)
