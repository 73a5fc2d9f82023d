"""Candidate new modes: cluster the descriptions of decisive errors that no taxonomy mode
fits, so a reviewer sees recurring unexplained patterns instead of single oddities.

Bag-of-words vectors (numbers folded to `#`, stopwords dropped), cosine similarity and a
greedy leader clustering in run-id order: deterministic, dependency-free, and enough for
one-line descriptions. A cluster of at least `min_size` failures becomes a candidate.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import polars as pl

from whowhen.schema import CANDIDATES, to_arrow

_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "and",
        "or",
        "is",
        "are",
        "was",
        "it",
        "its",
        "this",
        "that",
        "as",
        "from",
        "instead",
        "where",
        "calls",
        "called",
        "said",
        "i",
        "will",
    ]
)
_TOKEN = re.compile(r"[a-z_]+|\d+(?:\.\d+)?")


def tokens(text: str) -> Counter[str]:
    return Counter(
        "#" if t[0].isdigit() else t for t in _TOKEN.findall(text.lower()) if t not in _STOP
    )


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(v * b.get(k, 0) for k, v in a.items())
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def propose_modes(
    decisive: pl.DataFrame, threshold: float = 0.6, min_size: int = 2
) -> pl.DataFrame:
    """Candidate modes from the decisive failures whose `mode` is null."""
    rows = (
        decisive.filter(
            (pl.col("status") == "decisive")
            & pl.col("mode").is_null()
            & pl.col("description").is_not_null()
        )
        .sort("run_id")
        .to_dicts()
    )
    clusters: list[dict] = []
    for row in rows:
        vec = tokens(row["description"])
        best = max(clusters, key=lambda c: _cosine(vec, c["centroid"]), default=None)
        if best is not None and _cosine(vec, best["centroid"]) >= threshold:
            best["rows"].append(row)
            best["centroid"].update(vec)
        else:
            clusters.append({"rows": [row], "centroid": Counter(vec)})
    out = []
    for cluster in clusters:
        if len(cluster["rows"]) < min_size:
            continue
        terms = [t for t, _ in cluster["centroid"].most_common(8) if t != "#"][:5]
        out.append(
            {
                "candidate": "candidate." + "_".join(terms[:2]),
                "size": len(cluster["rows"]),
                "terms": ", ".join(terms),
                "example": cluster["rows"][0]["description"],
                "pairs": ", ".join(
                    sorted({f"{r['benchmark']}/{r['system']}" for r in cluster["rows"]})
                ),
                "run_ids": [r["run_id"] for r in cluster["rows"]],
            }
        )
    seen: Counter[str] = Counter()
    for row in out:  # candidate ids are keys: number repeats
        seen[row["candidate"]] += 1
        if seen[row["candidate"]] > 1:
            row["candidate"] += f"_{seen[row['candidate']]}"
    return pl.from_arrow(to_arrow(out, CANDIDATES))
