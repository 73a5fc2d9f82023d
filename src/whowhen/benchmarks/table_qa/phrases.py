"""The wordings of the table-QA reference policies' steps, and the patterns that read them
back: the aggregate step's stated intent, proposals, answers and approvals, the
exploration queries with their texts and notes, and the verifier's send-backs. They live
apart from the policies so that the policies read as decisions, and the builders in
`actions` and the operators draw from the same tables.
"""

from __future__ import annotations

import re

from whowhen.benchmarks.table_qa.tasks import AGGREGATES

_INTENTS = (
    "I will compute the {agg} {measure} of {product} in the {region} region for month "
    "{month} with one query.",
    "Now the aggregate itself: the {agg} {measure} of {product} in the {region} region for "
    "month {month}.",
    "With the rows in view, I query the {agg} {measure} of {product} in the {region} region "
    "for month {month}.",
)
"""The wordings of the aggregate step (an operator keeps the step's wording)."""


def _intent_pattern(template: str) -> re.Pattern[str]:
    out = re.escape(template)
    for name, group in (
        ("agg", r"(\w+)"),
        ("measure", r"(\w+)"),
        ("product", r"(\w+)"),
        ("region", r"(\w+)"),
        ("month", r"(\d+)"),
    ):
        out = out.replace(f"\\{{{name}\\}}", group)
    return re.compile(f"^{out}$")


_INTENT_RES = tuple(_intent_pattern(t) for t in _INTENTS)
_AGG_OF_SQL = {v: k for k, v in AGGREGATES.items()}

_PROPOSALS = (
    "The query returned the value. Proposed answer: {answer}.",
    "The {agg} over {n} matching rows is {answer}, and the cross-check agrees. "
    "Proposed answer: {answer}.",
    "Both queries give {answer} ({n} rows matched). Proposed answer: {answer}.",
)
_PROPOSAL = _PROPOSALS[0]
_PROPOSAL_RE = re.compile(r"^The query returned the value\. Proposed answer: (\S+?)\.$")
_PROPOSED = re.compile(r"Proposed answer: (\S+?)\.$")
_APPROVALS = (
    "The query's aggregate matches the question. Final answer: {answer}.",
    "Aggregate, filters and value all check out. Final answer: {answer}.",
    "I see no problem with the query or the number. Final answer: {answer}.",
)
_ANSWERS = (
    "The aggregate query and the cross-check agree, so the answer is {answer}.",
    "Both ways of computing it give the same number; the answer is {answer}.",
    "That settles it: the answer is {answer}.",
)
_REJECTION_RE = re.compile(r"^Check failed: ")


# --- the exploration queries ------------------------------------------------------------

_WHERE = "WHERE product = '{product}' AND region = '{region}' AND month = {month}"
_QUERIES = {
    "peek": "SELECT * FROM sales LIMIT {k}",
    "overview": "SELECT region, COUNT(*) AS n_rows, SUM({measure}) AS {measure} FROM sales "
    "WHERE product = '{product}' GROUP BY region ORDER BY region",
    "months": "SELECT month, COUNT(*) AS n_rows FROM sales WHERE product = '{product}' AND "
    "region = '{region}' GROUP BY month ORDER BY month",
    "typo": "SELECT COUNT(*) AS n FROM sales WHERE product_name = '{product}'",
    "count": "SELECT COUNT(*) AS n FROM sales " + _WHERE,
    "rows": "SELECT units, revenue FROM sales " + _WHERE + " ORDER BY units DESC",
}
_CROSS = {
    "total": "SELECT ROUND(AVG({measure}) * COUNT(*), 2) AS value FROM sales " + _WHERE,
    "average": "SELECT ROUND(SUM({measure}) / COUNT(*), 2) AS value FROM sales " + _WHERE,
    "largest": "SELECT {measure} AS value FROM sales " + _WHERE + " ORDER BY {measure} DESC "
    "LIMIT 1",
    "smallest": "SELECT {measure} AS value FROM sales " + _WHERE + " ORDER BY {measure} ASC "
    "LIMIT 1",
}
_TEXTS = {
    "peek": (
        "Let me look at a few rows of the table first.",
        "Before writing the real query I want to see what the rows look like.",
        "First a quick look at the data: the first {k} rows.",
    ),
    "overview": (
        "Broad view first: how {product} sell by region, in {measure}.",
        "How many rows and how many {measure} does each region have for {product}?",
        "To get my bearings, {product} per region with row counts and {measure}.",
    ),
    "months": (
        "Within {region}, which months have {product} rows at all?",
        "Narrowing down: {product} in {region}, broken down by month.",
        "Let me see the months available for {product} in {region}.",
    ),
    "typo": (
        "Counting the {product} rows.",
        "How many rows are about {product}?",
        "A quick count of {product} rows.",
    ),
    "count": (
        "How many rows match {product}, {region}, month {month}?",
        "Counting the rows for {product} in {region} in month {month}.",
        "Before aggregating: the number of {product} rows in {region} for month {month}.",
    ),
    "rows": (
        "Let me list those rows ({product}, {region}, month {month}).",
        "Here are the matching rows for {product} in {region}, month {month}, sorted.",
        "I want to see the individual {product} rows in {region} for month {month}.",
    ),
}
_CROSS_TEXTS = (
    "Cross-check of that value another way, for {product} in {region}, month {month}: {how}.",
    "To be sure, the same {measure} of {product} in {region} for month {month}, via {how}.",
    "Second route to the number ({product}, {region}, month {month}, {measure}): {how}.",
)
_HOW = {
    "total": "the mean times the row count",
    "average": "the sum divided by the row count",
    "largest": "the top row when sorted in descending order",
    "smallest": "the first row when sorted in ascending order",
}
_NOTES = {
    "plan": (
        "The question names a product, a region and a month. I will look at the data, "
        "narrow it down, and then aggregate.",
        "Plan: check the columns, find the matching rows, aggregate them and cross-check.",
        "I need one number from the sales table; first I make sure I filter the right rows.",
    ),
    "peek": (
        "Columns are region, product, month, units and revenue; one row per sale.",
        "Each row is one sale with its units and revenue, so the question is an aggregate "
        "over several rows.",
        "The rows look clean. Months are numbers, so the filter is month = a number.",
    ),
    "overview": (
        "{region} is in the list, as expected. Now I narrow to month {month}.",
        "The overview covers every region; the one I need is {region}. Next, the month.",
        "That is the broad picture. The question only concerns {region} and month {month}.",
    ),
    "typo": (
        "The column is called product, not product_name. Retrying with the right name.",
        "Wrong column name; the table uses product. Fixing the query.",
        "That failed because product_name does not exist. I use product instead.",
    ),
    "rows": (
        "{n} matching rows, so the aggregate is over {n} values.",
        "There are {n} rows to aggregate; that is what the next query should cover.",
        "With {n} rows matched, I can compute the aggregate now.",
    ),
    "cross": (
        "Both routes give {value}. I am confident in the number.",
        "The cross-check gives {value} as well, so the value stands.",
        "{value} again. The two queries agree.",
    ),
}
_ACKS = (
    "Noted. Go on.",
    "Understood; continue.",
    "Fine by me. Carry on.",
)


# --- the verifier ---------------------------------------------------------------------

_COUNT_ASKS = (
    "Check failed: the proposal does not say how many rows the value covers. Please "
    "count the matching rows and propose again.",
    "Check failed: I need the number of matching rows with the value. Please recount and resend.",
    "Check failed: a value without its row count is hard to judge. Please count the rows "
    "and propose again.",
)
_AGG_REJECTS = (
    "Check failed: the question asks for the {agg}, but the query computes the {used}. "
    "Please redo the query.",
    "Check failed: the query computes the {used}; the question wants the {agg}. Please "
    "redo the query.",
    "Check failed: wrong aggregate, the {used} instead of the {agg}. Please redo the query.",
)
_TARGET_REJECTS = (
    "Check failed: the query does not compute the {measure} of {product} in the {region} "
    "region for month {month} that you set out to compute. Please redo the query.",
    "Check failed: your text says {measure} of {product}, {region}, month {month}, but "
    "the query filters something else. Please redo the query.",
    "Check failed: query and stated plan ({product}, {region}, month {month}) disagree. "
    "Please redo the query.",
)
_VALUE_REJECTS = (
    "Check failed: the query returns {value}, not the proposed {answer}. Please redo the "
    "query and copy the value.",
    "Check failed: re-running your query gives {value}; the proposal says {answer}. "
    "Please redo the query.",
    "Check failed: {answer} does not match the query's {value}. Please redo the query.",
)
_RERUNS = (
    "I re-run the solver's aggregate query ({product}, {region}, month {month}) to compare "
    "it with the proposal.",
    "Let me execute the same query for {product} in {region}, month {month}, myself before "
    "approving.",
    "Re-running the query on {product}, {region}, month {month} independently.",
)
