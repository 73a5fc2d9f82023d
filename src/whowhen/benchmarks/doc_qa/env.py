"""The document QA environment: `search` and `read` over the generated corpus, and the
exact-match evaluator."""

from __future__ import annotations

from whowhen.benchmarks.base import AnswerEnv, Tool
from whowhen.benchmarks.doc_qa.tasks import BENCHMARK, CATEGORY, MODALITY
from whowhen.benchmarks.scoring import exact
from whowhen.tools import FINAL_ANSWER_TOOL

TOOL_SPECS = (
    {
        "name": "search",
        "description": "Search the corpus; returns matching document titles.",
        "parameters": {
            "type": "object",
            "required": ["query"],
            "additionalProperties": False,
            "properties": {"query": {"type": "string"}},
        },
    },
    {
        "name": "read",
        "description": "Read one document by its exact title.",
        "parameters": {
            "type": "object",
            "required": ["title"],
            "additionalProperties": False,
            "properties": {"title": {"type": "string"}},
        },
    },
    FINAL_ANSWER_TOOL,
)


class DocQAEnv(AnswerEnv):
    benchmark, modality, category = BENCHMARK, MODALITY, CATEGORY

    def reset(self) -> str:
        self._start()
        return (
            "Answer the question using the document corpus. Tools: search(query), "
            f"read(title), final_answer(answer).\n\nQuestion: {self.task.question}"
        )

    def tools(self) -> dict[str, Tool]:
        docs = dict(self.task.corpus)

        def search(args: dict) -> str:
            query = str(args.get("query", "")).lower()
            hits = sorted(
                t
                for t, text in docs.items()
                if query and (query in t.lower() or query in text.lower())
            )
            return ("Results: " + "; ".join(hits[:8])) if hits else "No results."

        def read(args: dict) -> str:
            title = str(args.get("title", ""))
            return docs.get(title, f"Error: no document titled {title!r}")

        return {"search": search, "read": read}

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        return exact(answer, gold)


Env = DocQAEnv
