"""The wordings of the table-QA reference policies' steps, one table per kind of step, and
the SQL each query kind sends.

Every wording names the part of the agent's working belief the step states (the target's
aggregate, measure, product, region and month, or the value found), because later steps
read that belief back from the steps (`forms.belief`): an error stated at any step then
carries on to the answer. They live apart from the policies so that the policies read as
decisions, and the builders in `forms` and the operators draw from the same tables. The
fillers (a product, a value) come after a wording's opening words, so that the opening
words name the kind of step and not its contents.
"""

from __future__ import annotations

from whowhen.benchmarks.table_qa.tasks import AGGREGATES

_AGG_OF_SQL = {v: k for k, v in AGGREGATES.items()}
_HOW = {
    "total": "the mean times the row count",
    "average": "the sum divided by the row count",
    "largest": "the top row when sorted in descending order",
    "smallest": "the first row when sorted in ascending order",
}
"""How the cross-check computes each aggregate another way (its text names the aggregate
only through this)."""

# --- the worker's (assistant's or solver's) steps ------------------------------------------

_WHERE = "WHERE product = '{product}' AND region = '{region}' AND month = {month}"
AGG_QUERY = "SELECT ROUND({sqlagg}({measure}), 2) AS value FROM sales " + _WHERE
BROAD_QUERY = (
    "SELECT ROUND({sqlagg}({measure}), 2) AS value FROM sales "
    "WHERE product = '{product}' AND region = '{region}'"
)
QUERIES = {
    "peek": "SELECT * FROM sales WHERE product = '{product}' LIMIT {k}",
    "overview": "SELECT region, COUNT(*) AS n_rows, SUM({measure}) AS {measure} FROM sales "
    "WHERE product = '{product}' GROUP BY region ORDER BY region",
    "months": "SELECT month, COUNT(*) AS n_rows FROM sales WHERE product = '{product}' AND "
    "region = '{region}' GROUP BY month ORDER BY month",
    "typo": "SELECT COUNT(*) AS n FROM sales WHERE product_name = '{product}'",
    "count": "SELECT COUNT(*) AS n FROM sales " + _WHERE,
    "rows": "SELECT units, revenue FROM sales " + _WHERE + " ORDER BY units DESC",
    "agg": AGG_QUERY,
    "broad": BROAD_QUERY,
}
CROSS = {
    "total": "SELECT ROUND(AVG({measure}) * COUNT(*), 2) AS value FROM sales " + _WHERE,
    "average": "SELECT ROUND(SUM({measure}) / COUNT(*), 2) AS value FROM sales " + _WHERE,
    "largest": "SELECT {measure} AS value FROM sales " + _WHERE + " ORDER BY {measure} DESC "
    "LIMIT 1",
    "smallest": "SELECT {measure} AS value FROM sales " + _WHERE + " ORDER BY {measure} ASC "
    "LIMIT 1",
}
"""The cross-check's SQL, per aggregate."""

WORKER_TEXTS: dict[str, tuple[str, ...]] = {
    "plan": (
        "The question asks for the {agg} {measure} of {product} in {region}, month {month}. "
        "I look at the data, narrow it down, and then aggregate.",
        "Plan for the {agg} {measure} of {product} in {region} for month {month}: check the "
        "columns, find the matching rows, aggregate them and cross-check.",
        "I need one number, the {agg} {measure} of {product} in {region} in month {month}; "
        "first I make sure I filter the right rows.",
    ),
    "peek": (
        "Let me look at a few {product} rows of the table first.",
        "Before writing the real query I want to see what the {product} rows look like.",
        "First a quick look at the data: the first {k} {product} rows.",
    ),
    "note.peek": (
        "Columns are region, product, month, units and revenue; one row per sale. For "
        "{product} the column I need is {measure}.",
        "Each row is one sale of {product} with its units and revenue, so the question is an "
        "aggregate of {measure} over several rows.",
        "The rows look clean for {product}. Months are numbers, so the filter is month = a "
        "number, and the column is {measure}.",
    ),
    "overview": (
        "Broad view first: how {product} sell by region, in {measure}.",
        "How many rows and how many {measure} does each region have for {product}?",
        "To get my bearings, {product} per region with row counts and {measure}.",
    ),
    "note.overview": (
        "The region {region} is in the list, as expected. Now I narrow to month {month}.",
        "The overview covers every region; the one I need is {region}. Next, month {month}.",
        "That is the broad picture. The question only concerns {region} and month {month}.",
    ),
    "months": (
        "Within {region}, which months have {product} rows at all?",
        "Narrowing it down: {product} in {region}, broken down by month.",
        "Let me see the months available for {product} in {region}.",
    ),
    "note.months": (
        "Month {month} has {product} rows in {region}, so the filter will match something.",
        "The breakdown lists month {month} for {product} in {region}; that is the one I need.",
        "Good: the region {region} sold {product} in month {month}, among others.",
    ),
    "typo": (
        "Counting all the {product} rows.",
        "How many rows are about {product}?",
        "A quick count of {product} rows.",
    ),
    "note.typo": (
        "The column is called product, not product_name. Retrying the {product} count "
        "with the right name.",
        "Wrong column name; the table uses product. Fixing the query for {product}.",
        "That failed because product_name does not exist. For {product} I use product instead.",
    ),
    "count": (
        "How many rows match {product}, {region}, month {month}?",
        "Counting the rows for {product} in {region} in month {month}.",
        "Before aggregating: the number of {product} rows in {region} for month {month}.",
    ),
    "note.count": (
        "So {n} rows match {product} in {region}, month {month}; listing them next.",
        "The count for {product}, {region}, month {month} is {n}. Now the rows themselves.",
        "Only {n} rows for {product} in {region} in month {month}: few enough to list.",
    ),
    "rows": (
        "Let me list those rows ({product}, {region}, month {month}).",
        "Here are the matching rows for {product} in {region}, month {month}, sorted.",
        "I want to see the individual {product} rows in {region} for month {month}.",
    ),
    "note.rows": (
        "{n} matching rows of {product} in {region}, month {month}, so the aggregate is "
        "over {n} values.",
        "There are {n} {product} rows in {region} for month {month} to aggregate; that is "
        "what the next query should cover.",
        "With {n} rows matched for {product}, {region}, month {month}, the aggregate comes next.",
    ),
    "agg": (
        "I will compute the {agg} {measure} of {product} in the {region} region for month "
        "{month} with one query.",
        "Now the aggregate itself: the {agg} {measure} of {product} in the {region} region "
        "for month {month}.",
        "With the rows in view, I query the {agg} {measure} of {product} in the {region} "
        "region for month {month}.",
    ),
    "broad": (
        "I will compute the {agg} {measure} of {product} in the {region} region with one query.",
        "Now the aggregate itself: the {agg} {measure} of {product} in the {region} region.",
        "With the rows in view, I query the {agg} {measure} of {product} in the {region} region.",
    ),
    "note.agg": (
        "The {agg} {measure} comes out at {value}. A second route should give the same.",
        "That query gives the {agg} {measure} as {value}; next I check it another way.",
        "So the query says {value} for the {agg} {measure}. Let me confirm it differently.",
    ),
    "cross": (
        "Cross-check of that value another way, for {product} in {region}, month {month}: {how}.",
        "To be sure, the same {measure} of {product} in {region} for month {month}, via {how}.",
        "Second route to the number ({product}, {region}, month {month}, {measure}): {how}.",
    ),
    "note.cross": (
        "Both routes give {value}. I am confident in the number.",
        "The cross-check gives {value} as well, so the value stands.",
        "The second query agrees: {value} again.",
    ),
    "note.disagree": (
        "The two routes disagree ({first} against {value}). I redo the aggregate for "
        "{product} in {region}, month {month}.",
        "These do not match ({first} and {value}); back to the aggregate for {product} in "
        "{region}, month {month}.",
        "The cross-check gives {value}, not {first}. Redoing the aggregate ({product}, "
        "{region}, month {month}).",
    ),
    "recap": (
        "Checking against my plan: the {agg} {measure} of {product} in {region}, month "
        "{month} is {value}.",
        "Before answering, the recap: {agg} {measure}, {product}, {region}, month {month}, "
        "value {value}.",
        "One last look at what I found: {value}, the {agg} {measure} of {product} in "
        "{region} for month {month}.",
    ),
    "proposal": (
        "The query on {product} in {region} returned the value. Proposed answer: {value}.",
        "Over {n} matching rows the {agg} is {value}, and the cross-check agrees. "
        "Proposed answer: {value}.",
        "Both queries give {value} ({n} rows matched). Proposed answer: {value}.",
    ),
    "answer": (
        "The aggregate query and the cross-check agree, so the answer is {value}.",
        "Both ways of computing it give the same number; the answer is {value}.",
        "That settles it: the answer is {value}.",
    ),
}
"""Kind -> wordings of the worker's steps (queries, notes, the proposal and the answer)."""


# --- the verifier's steps ------------------------------------------------------------------

VERIFIER_TEXTS: dict[str, tuple[str, ...]] = {
    "ack": (
        "Noted. Go on.",
        "Understood; continue.",
        "Fine by me. Carry on.",
    ),
    "ack.plan": (
        "Noted: you want the {agg} {measure} of {product} in {region}, month {month}. Go on.",
        "Understood, you want the {agg} {measure} of {product} for {region}, month {month}; "
        "continue.",
        "Fine by me: {agg} {measure}, {product}, {region}, month {month}. Carry on.",
    ),
    "ack.peek": (
        "Noted: the column is {measure} for {product}. Go on.",
        "Understood, the column for {product} is {measure}; continue.",
        "Fine by me: {product} rows, {measure} column. Carry on.",
    ),
    "ack.overview": (
        "Noted: {region}, month {month}. Go on.",
        "Understood, {region} and month {month} next; continue.",
        "Fine by me: narrow to {region}, month {month}. Carry on.",
    ),
    "ack.typo": (
        "Noted: the {product} count with the product column. Go on.",
        "Understood, the product column for {product}; continue.",
        "Fine by me: product it is, for {product}. Carry on.",
    ),
    "ack.rows": (
        "Noted: the count is {n} rows of {product} in {region}, month {month}. Go on.",
        "Understood, the count is {n} {product} rows for {region}, month {month}; continue.",
        "Fine by me: {n} rows, {product}, {region}, month {month}. Carry on.",
    ),
    "ack.cross": (
        "Noted: both routes give {value}. Go on.",
        "Understood, the value {value} stands; continue.",
        "Fine by me: {value} it is. Carry on.",
    ),
    "ack.disagree": (
        "Noted: redo {product} in {region}, month {month}. Go on.",
        "Understood, the aggregate again for {product}, {region}, month {month}; continue.",
        "Fine by me: {product}, {region}, month {month} once more. Carry on.",
    ),
    "reject.count": (
        "Check failed: the proposal of {value} does not say how many rows it covers. "
        "Please count the {product} rows in {region} for month {month} and propose again.",
        "Check failed: I need the number of matching rows with the value {value}. Please "
        "recount {product} in {region}, month {month}, and resend.",
        "Check failed: a value of {value} without its row count is hard to judge. Please "
        "count the rows for {product}, {region}, month {month} and propose again.",
    ),
    "reject.month": (
        "Check failed: the query covers every month, but you set out to compute month "
        "{month}. Please redo it for {product} in {region}, month {month}.",
        "Check failed: there is no month filter in the query; the plan was month {month}. "
        "Please redo the query for {product} in {region}, month {month}.",
        "Check failed: that value is over all months of {product} in {region}, not month "
        "{month}. Please redo the query.",
    ),
    "reject.agg": (
        "Check failed: the question asks for the {agg}, but the query computes the {used}. "
        "Please redo the query.",
        "Check failed: the query computes the {used}; the question wants the {agg}. Please "
        "redo the query.",
        "Check failed: wrong aggregate, the {used} instead of the {agg}. Please redo the query.",
    ),
    "reject.target": (
        "Check failed: the query does not compute the {measure} of {product} in the "
        "{region} region for month {month} that you set out to compute. Please redo the "
        "query.",
        "Check failed: your text says {measure} of {product}, {region}, month {month}, but "
        "the query filters something else. Please redo the query.",
        "Check failed: query and stated plan ({measure}, {product}, {region}, month {month}) "
        "disagree. Please redo the query.",
    ),
    "reject.value": (
        "Check failed: the query for {product} in {region}, month {month} returns {value}, "
        "not the proposed {answer}. Please redo the query and copy the value.",
        "Check failed: re-running the query ({product}, {region}, month {month}) gives "
        "{value}; the proposal says {answer}. Please redo the query.",
        "Check failed: the proposed {answer} does not match the {value} of the query on "
        "{product}, {region}, month {month}. Please redo the query.",
    ),
    "rerun": (
        "I re-run the solver's aggregate query ({product}, {region}, month {month}) to "
        "compare it with the proposal.",
        "Let me execute the same query for {product} in {region}, month {month}, myself "
        "before approving.",
        "Re-running the query on {product}, {region}, month {month} independently.",
    ),
    "approve": (
        "The query's aggregate matches the question. Final answer: {value}.",
        "Aggregate, filters and value all check out. Final answer: {value}.",
        "I see no problem with the query or the number. Final answer: {value}.",
    ),
}
"""Kind -> wordings of the verifier's steps: acknowledgements that restate the note they
acknowledge, send-backs that restate what is to be redone, its re-run and its approval."""
NO_VALUE = "The query matches no rows, so there is no value to report."
