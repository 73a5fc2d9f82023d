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
        "description": "Search the corpus; returns matching titles with a snippet each.",
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


MAX_HITS = 6


def _snippet(text: str, query: str) -> str:
    """The first sentence of `text` that holds `query` (the first sentence if none)."""
    sentences = [x.strip() for x in text.split(". ") if x.strip()]
    hit = next((x for x in sentences if query.lower() in x.lower()), sentences[0])
    return hit if hit.endswith(".") else hit + "."


def search_page(docs: dict[str, str], query: str) -> str:
    """A results page: how many documents match, then up to `MAX_HITS` hits (an exact
    title first) with the sentence that matched, as a search engine shows them."""
    low = query.lower()
    hits = sorted(
        (t for t, text in docs.items() if low and (low in t.lower() or low in text.lower())),
        key=lambda t: (t.lower() != low, t),
    )
    if not hits:
        return f'No documents match "{query}".'
    lines = [f'Search for "{query}": {len(hits)} documents match.']
    lines += [f"{i}. {t}: {_snippet(docs[t], query)}" for i, t in enumerate(hits[:MAX_HITS], 1)]
    if len(hits) > MAX_HITS:
        lines.append(f"({len(hits) - MAX_HITS} more not shown)")
    return "\n".join(lines)


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
            query = str(args.get("query", "")).strip()
            return search_page(docs, query)

        def read(args: dict) -> str:
            title = str(args.get("title", ""))
            if title not in docs:
                return f"Error: no document titled {title!r}; titles are exact (search first)."
            return f"Document: {title}\n{docs[title]}"

        return {"search": search, "read": read}

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        return exact(answer, gold)


Env = DocQAEnv
