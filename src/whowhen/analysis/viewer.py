"""Static trajectory viewer: one HTML page per labelled run, an index, the media they show.

Pages are plain files (no server, no CDN) so a report can link
`trajectories/<page_name>.html#step-<gold>` and a reader lands on the decisive step with
every attributor's guess marked. Output is deterministic: same tables, same bytes.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import polars as pl
from PIL import Image

from whowhen import media
from whowhen.analysis.viewer_page import (
    CSS,
    IMAGE_EXTS,
    MediaSizes,
    esc,
    hits,
    render_page,
)
from whowhen.io import atomic_path

_SAFE_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def page_name(run_id: str) -> str:
    """`<slug>-<8 hex of sha256>`: readable, filesystem- and URL-safe, and unique even when
    two run ids slug alike (`a/b` and `a:b`)."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", run_id).strip("-")[:60] or "run"
    return f"{slug}-{hashlib.sha256(run_id.encode()).hexdigest()[:8]}"


def dataset_of(run: dict[str, Any] | None, run_id: str, datasets: dict[str, str] | None) -> str:
    """The run's dataset name: given by the caller, else benchmark[/subset] as scoring uses."""
    if datasets and run_id in datasets:
        return datasets[run_id]
    if not run:
        return ""
    sub = run.get("subset")
    return f"{run['benchmark']}/{sub}" if sub else str(run.get("benchmark") or "")


def _cell(pred: dict[str, Any] | None, label: dict[str, Any]) -> str:
    if pred is None or (pred.get("agent") is None and pred.get("step") is None):
        return "<td class='none' title='no prediction'>-</td>"
    tip = f"agent {pred.get('agent')} step {pred.get('step')}"
    if label.get("decisive_step") is None:  # unlabelled: what it predicts, no verdict
        return f"<td title='{esc(tip)}'>{esc(pred.get('step'))}</td>"
    agent_ok, step_ok = hits(pred, label)
    cls = "both" if agent_ok and step_ok else "part" if agent_ok or step_ok else "miss"
    return (
        f"<td class='{cls}' title='{esc(tip)}'>{'✓' if agent_ok else '✗'}"
        f"{'✓' if step_ok else '✗'}</td>"
    )


_INDEX_CSS = """td.both{background:#d3f0d9}td.part{background:#fff3bf}td.miss{background:#f8d7da}
td.none{color:#999}td.both,td.part,td.miss,td.none{text-align:center}
th.attr{writing-mode:vertical-rl;transform:rotate(180deg);text-align:left;white-space:nowrap}
table{font-size:.8rem}td,th{padding:.15rem .35rem}td.agent{overflow-wrap:anywhere}
th.rate{font-weight:normal;text-align:center;white-space:nowrap}
#q{width:20rem;margin:.5rem 0}body{max-width:90rem}"""

_INDEX_JS = """(function(){var q=document.getElementById('q');q.addEventListener('input',
function(){var t=q.value.toLowerCase();document.querySelectorAll('tbody tr').forEach(
function(r){r.style.display=r.textContent.toLowerCase().indexOf(t)<0?'none':''})})})();"""


def index_html(rows: list[dict[str, Any]], attributors: list[str]) -> str:
    """The list of pages with each attributor's agent/step hit (✓✓: both, ✓✗: agent only)."""
    cols = ("run_id", "dataset", "benchmark", "system", "modality", "gold agent", "gold step")
    head = "".join(f"<th>{c}</th>" for c in cols) + "".join(
        f"<th class='attr'>{esc(a)}</th>" for a in attributors
    )
    labelled = [r for r in rows if r["label"].get("decisive_step") is not None]
    n = max(len(labelled), 1)
    totals = ""
    for a in attributors:
        scored = [hits(p, r["label"]) for r in labelled if (p := r["preds"].get(a))]
        agent, step = (100 * sum(h[i] for h in scored) / n for i in (0, 1))
        totals += f"<th class='rate'>A {agent:.0f}%<br>S {step:.0f}%</th>"
    body = []
    for r in rows:
        run, label = r["run"] or {}, r["label"]
        g = label["decisive_step"]
        anchor, gold = (f"#step-{g}", esc(label["decisive_agent"])) if g is not None else ("", "")
        body.append(
            f"<tr><td><a href='{r['page']}.html{anchor}'>{esc(r['run_id'])}</a></td>"
            f"<td>{esc(r['dataset'])}</td><td>{esc(run.get('benchmark'))}</td>"
            f"<td>{esc(run.get('system'))}</td><td>{esc(run.get('modality'))}</td>"
            f"<td class='agent'>{gold or 'not labelled'}</td><td>{'' if g is None else g}</td>"
            + "".join(_cell(r["preds"].get(a), label) for a in attributors)
            + "</tr>"
        )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>whowhen trajectories</title><style>{CSS}\n{_INDEX_CSS}</style></head><body>"
        f"<h1>Trajectories ({len(labelled)} labelled of {len(rows)})</h1><p class='note'>"
        "Per attributor: "
        "agent hit then step hit (exact), ✓✓ both, - no prediction. Links open the page at "
        "the gold decisive step.</p><input id='q' placeholder='filter rows (any text)'>"
        f"<table><thead><tr>{head}</tr><tr><th colspan='7'>exact accuracy over the "
        f"labelled rows (every split): A agent, S step</th>{totals}"
        f"</tr></thead><tbody>{''.join(body)}</tbody></table>"
        f"<script>{_INDEX_JS}</script></body></html>\n"
    )


def _write_if_changed(path: Path, data: bytes) -> None:
    """Rewrite only what changed, so reruns keep mtimes (and Snakemake/DVC stay quiet)."""
    if path.exists() and path.stat().st_size == len(data) and path.read_bytes() == data:
        return
    with atomic_path(path) as tmp:  # a killed job never leaves half a page
        Path(tmp).write_bytes(data)


def copy_media(refs: set[str], root: Path, dest: Path) -> MediaSizes:
    """Copy each referenced file once to `dest/<ref>` and read its pixel size; missing or
    unreadable files (and refs that are not plain names) map to None."""
    sizes: MediaSizes = {}
    for ref in sorted(refs):
        src = root / ref[:2] / ref
        if not _SAFE_REF.match(ref) or not src.is_file():
            sizes[ref] = None
            continue
        sizes[ref] = (0, 0)  # present; not an image we can size (shown as a link)
        if ref.rsplit(".", 1)[-1].lower() in IMAGE_EXTS:
            try:
                with Image.open(src) as img:
                    sizes[ref] = img.size
            except OSError:  # truncated or not really an image: show the placeholder
                sizes[ref] = None
                continue
        target = dest / ref
        if not (target.exists() and target.stat().st_size == src.stat().st_size):
            dest.mkdir(parents=True, exist_ok=True)
            with atomic_path(target) as tmp:
                shutil.copyfile(src, tmp)
    return sizes


def with_unlabelled(labels: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """`labels`, plus an empty label for every run that has none (imported traces and eval
    logs come without): such a run still gets its page, with no gold step marked."""
    todo = runs.filter(~pl.col("run_id").is_in(labels["run_id"].to_list())).select("run_id")
    if todo.is_empty():
        return labels
    blank = todo.with_columns(pl.lit("not labelled").alias("reason"))
    return pl.concat([labels, blank], how="diagonal_relaxed")


def write_viewer(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    labels: pl.DataFrame,
    predictions: pl.DataFrame,
    out_dir: str | Path,
    media_root: str | Path | None = None,
    datasets: dict[str, str] | None = None,
) -> list[Path]:
    """Write `out_dir/<page_name>.html` per run (labelled or not), `out_dir/index.html` and
    `out_dir/media/`.

    `media_root`: the media store (default: `whowhen.media.media_root()`); `datasets`: run_id
    -> dataset name for the index (default benchmark[/subset]). Returns the pages in name
    order, then the index. Stale pages from earlier calls are left in place.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    root = Path(media_root) if media_root is not None else media.media_root()
    labelled = with_unlabelled(labels, runs).sort("run_id")
    ids = labelled["run_id"].to_list()
    run_rows = {r["run_id"]: r for r in runs.filter(pl.col("run_id").is_in(ids)).to_dicts()}
    by_run: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in steps.filter(pl.col("run_id").is_in(ids)).sort("run_id", "step").to_dicts():
        by_run[s["run_id"]].append(s)
    preds_by_run: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    pred_rows = predictions.filter(pl.col("run_id").is_in(ids)).sort("run_id", "attributor")
    for p in pred_rows.to_dicts():
        preds_by_run[p["run_id"]][p["attributor"]] = p
    attributors = sorted(set(pred_rows["attributor"].to_list()))
    refs = {ref for rows in by_run.values() for s in rows for ref in (s["media"] or [])}
    sizes = copy_media(refs, root, out / "media")

    index_rows, written = [], []
    for label in labelled.to_dicts():
        run_id = label["run_id"]
        run = run_rows.get(run_id)
        name = page_name(run_id)
        preds = preds_by_run.get(run_id, {})
        dataset = dataset_of(run, run_id, datasets)
        page = render_page(
            run_id, run, by_run.get(run_id, []), label, list(preds.values()), sizes, dataset
        )
        path = out / f"{name}.html"
        _write_if_changed(path, page.encode())
        written.append(path)
        index_rows.append(
            {"run_id": run_id, "page": name, "run": run, "label": label}
            | {"preds": preds, "dataset": dataset}
        )
    index_rows.sort(
        key=lambda r: (
            r["dataset"],
            (r["run"] or {}).get("benchmark") or "",
            (r["run"] or {}).get("system") or "",
            r["run_id"],
        )
    )
    index = out / "index.html"
    _write_if_changed(index, index_html(index_rows, attributors).encode())
    return [*sorted(written), index]
