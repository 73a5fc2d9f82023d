"""Role prompts for an LLM playing the table_qa systems' agents."""

from __future__ import annotations

PROMPTS: dict[str, dict[str, str]] = {
    "react": {
        "assistant": "You answer a question about a sales table: write one SQL query with sql "
        "(DuckDB, table `sales`), then give the value it returns with final_answer.",
    },
    "solver_verifier": {
        "solver": "You query the sales table with sql and propose the value to the verifier "
        "in a message ('Proposed answer: N.').",
        "verifier": "You check that the solver's query uses the aggregate, product, region and "
        "month the question asks for and that the proposal states its row count; you may "
        "re-run the query with sql. Answer with final_answer or send the solver back "
        "('Check failed: ...').",
    },
}
"""System -> agent -> the role prompt an LLM playing that agent gets."""
