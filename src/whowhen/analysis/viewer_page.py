"""HTML of one trajectory page: pure functions from row dicts to a string (no I/O).

The writer (`whowhen.analysis.viewer`) resolves media and passes each reference's display
size, so images get explicit width/height: the layout does not shift while they load and a
`#step-<n>` anchor lands on the step it names.
"""

from __future__ import annotations

import html
import json
from typing import Any

GOLD_BG = "#fff3bf"
"""Background of the gold decisive step (the browser test compares its computed colour)."""

MediaSizes = dict[str, tuple[int, int] | None]
"""Media reference -> (width, height) in pixels of the stored file, or None when missing."""

CSS = f"""body{{font-family:system-ui,sans-serif;max-width:72rem;margin:0 auto;padding:0 1rem 4rem;
color:#222;line-height:1.4}}
nav.bar{{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid #ddd;
padding:.4rem 0;display:flex;gap:1rem;align-items:center;flex-wrap:wrap;font-size:.9rem}}
table{{border-collapse:collapse;margin:.5rem 0}}td,th{{border:1px solid #ccc;
padding:.2rem .5rem;text-align:left;vertical-align:top}}th{{background:#f3f3f3}}
pre{{white-space:pre-wrap;word-break:break-word;margin:.3rem 0;font-size:.85rem}}
.note{{color:#555;font-size:.9rem}}.kv th{{width:9rem}}
.step{{border:1px solid #ddd;border-left:6px solid #ddd;border-radius:4px;margin:.6rem 0;
padding:.4rem .7rem;scroll-margin-top:3.5rem}}
.step.k-observation{{background:#f6f8fa}}.step.k-message{{background:#f4f7ff}}
.step.gold{{background:{GOLD_BG};border-left-color:#e8a200;border-color:#e8a200}}
.step.sel{{outline:3px dashed #1c64d6;outline-offset:2px}}
.head{{display:flex;gap:.5rem;align-items:baseline;flex-wrap:wrap}}
.idx{{font-weight:bold;text-decoration:none;color:#222}}.actor{{font-weight:bold}}
.tag{{font-size:.8rem;background:#e9ecef;border-radius:3px;padding:0 .3rem}}
.tool{{font-family:monospace;background:#e3f2e6;border-radius:3px;padding:0 .3rem}}
.goldmark{{font-weight:bold;color:#8a5a00}}.goldinfo{{font-size:.9rem;color:#5c4200}}
.pred{{font-size:.8rem;border-radius:3px;padding:0 .3rem;border:1px solid}}
.pred.hit{{color:#1e6b2f;border-color:#1e6b2f}}.pred.miss{{color:#a4161a;border-color:#a4161a}}
.pred.dim{{opacity:.25}}.ok{{color:#1e6b2f}}.bad{{color:#a4161a}}
.media{{display:flex;gap:.4rem;flex-wrap:wrap;margin:.3rem 0}}
.media img{{max-width:100%;height:auto;border:1px solid #ccc;background:#fff}}
.missing{{display:inline-block;border:2px dashed #a4161a;color:#a4161a;padding:.5rem;
font-family:monospace;font-size:.8rem}}
details>summary{{cursor:pointer;font-family:monospace;font-size:.85rem;color:#444}}
.top{{display:grid;grid-template-columns:repeat(auto-fit,minmax(26rem,1fr));gap:0 2rem}}
.top table{{width:100%}}.preds td:first-child{{white-space:nowrap}}
pre.args{{width:fit-content;max-width:100%;box-sizing:border-box;background:#eef1f4;
border-left:3px solid #9aa5b1;padding:.2rem .5rem}}
.pred.part{{color:#8a5a00;border-color:#c98a00}}"""

JS = """(function(){var s=document.getElementById('attr');if(!s)return;
function show(a){document.querySelectorAll('.step.sel').forEach(function(e){
e.classList.remove('sel')});document.querySelectorAll('.pred').forEach(function(e){
e.classList.toggle('dim',a!==''&&e.dataset.attributor!==a)});if(!a)return;
var m=document.querySelector('.step .pred[data-attributor="'+CSS.escape(a)+'"]');
if(m){var t=m.closest('.step');t.classList.add('sel');t.scrollIntoView({block:'center'})}}
s.addEventListener('change',function(){show(s.value)})})();"""

LONG_CHARS = 800
LONG_LINES = 15
SINGLE_BOX = (480, 360)
FRAME_BOX = (144, 144)
IMAGE_EXTS = ("png", "jpg", "jpeg", "gif", "webp")


def esc(value: Any) -> str:
    return "" if value is None else html.escape(str(value), quote=True)


def pretty_json(text: str | None) -> str:
    """Indented JSON when it parses (tool args are stored compact), else the text as is."""
    if text is None:
        return ""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def text_block(text: str | None, open_: bool = False, cls: str = "content") -> str:
    """Escaped text; long text folds into <details> so a page of long steps stays scannable."""
    if not text:
        return f'<pre class="{cls} empty">(empty)</pre>'
    body = f'<pre class="{cls}">{esc(text)}</pre>'
    n_lines = text.count("\n") + 1
    if len(text) <= LONG_CHARS and n_lines <= LONG_LINES:
        return body
    first = text.strip().splitlines()[0] if text.strip() else ""
    preview = first[:160] + ("…" if len(first) > 160 or n_lines > 1 else "")
    return (
        f"<details{' open' if open_ else ''}><summary>{esc(preview)} "
        f'<span class="note">({len(text)} chars, {n_lines} lines)</span></summary>'
        f"{body}</details>"
    )


def fit(size: tuple[int, int], box: tuple[int, int], max_scale: float = 2.0) -> tuple[int, int]:
    """Display size: the image scaled into `box`, small synthetic renders enlarged a little."""
    w, h = size
    scale = min(box[0] / max(w, 1), box[1] / max(h, 1), max_scale)
    return max(1, round(w * scale)), max(1, round(h * scale))


def media_html(refs: list[str], sizes: MediaSizes) -> str:
    """Images and frames inline, linked to the full-size file; a visible placeholder for a
    reference the store does not have."""
    if not refs:
        return ""
    box = SINGLE_BOX if len(refs) == 1 else FRAME_BOX
    items = []
    for i, ref in enumerate(refs):
        size = sizes.get(ref)
        if size is None:
            items.append(f'<span class="missing">missing media {esc(ref)}</span>')
        elif ref.rsplit(".", 1)[-1].lower() not in IMAGE_EXTS:
            items.append(f'<a href="media/{esc(ref)}">{esc(ref)}</a>')
        else:
            w, h = fit(size, box)
            alt = f"media {i}: {ref}"
            items.append(
                f'<a href="media/{esc(ref)}"><img src="media/{esc(ref)}" width="{w}" '
                f'height="{h}" alt="{esc(alt)}" title="{esc(alt)}"></a>'
            )
    return f'<div class="media">{"".join(items)}</div>'


def hits(pred: dict[str, Any], label: dict[str, Any]) -> tuple[bool, bool]:
    """(agent hit, step hit) under exact scoring, as in `sql/accuracy.sql`."""
    agent = pred.get("agent") is not None and pred["agent"] == label["decisive_agent"]
    step = pred.get("step") is not None and pred["step"] == label["decisive_step"]
    return agent, step


def mark(ok: bool) -> str:
    return '<span class="ok">✓</span>' if ok else '<span class="bad">✗</span>'


def grade(agent_ok: bool, step_ok: bool) -> str:
    """`hit` (agent and step right), `part` (one of them) or `miss`."""
    return "hit" if agent_ok and step_ok else "part" if agent_ok or step_ok else "miss"


def pred_marker(pred: dict[str, Any], label: dict[str, Any]) -> str:
    agent_ok, step_ok = hits(pred, label)
    name = pred["attributor"]
    tip = f"{name} predicts agent {pred.get('agent')} at step {pred.get('step')}"
    if label.get("decisive_step") is None:  # an unlabelled run: a prediction, not a hit
        return (
            f'<span class="pred" data-attributor="{esc(name)}" title="{esc(tip)}">'
            f"{esc(name)}: agent {esc(pred.get('agent'))}</span>"
        )
    return (
        f'<span class="pred {grade(agent_ok, step_ok)}" '
        f'data-attributor="{esc(name)}" title="{esc(tip)}">{esc(name)}: '
        f"agent {'✓' if agent_ok else '✗'} step {'✓' if step_ok else '✗'}</span>"
    )


def step_html(
    step: dict[str, Any],
    label: dict[str, Any],
    preds: list[dict[str, Any]],
    sizes: MediaSizes,
) -> str:
    n = step["step"]
    gold = n == label["decisive_step"]
    kind = step.get("kind") or ""
    head = [
        f'<a class="idx" href="#step-{n}">#{n}</a>',
        f'<span class="actor">{esc(step.get("actor"))}</span>',
        *(f'<span class="tag">{esc(v)}</span>' for v in (step.get("role"), kind) if v),
        *([f'<span class="tool">{esc(step["tool"])}</span>'] if step.get("tool") else []),
    ]
    info = ""
    if gold:
        head.append(
            f'<span class="goldmark">★ gold decisive step · agent '
            f"{esc(label['decisive_agent'])}</span>"
        )
        bits = [f"mode {esc(label.get('mode') or 'n/a')}"]
        if label.get("reason"):
            bits.append(f"reason: {esc(label['reason'])}")
        info = f'<div class="goldinfo">{" · ".join(bits)}</div>'
    head += [pred_marker(p, label) for p in preds if p.get("step") == n]
    args = ""
    if step.get("tool_args"):
        args = text_block(pretty_json(step["tool_args"]), open_=gold, cls="args")
    classes = " ".join(["step", f"k-{esc(kind)}", *(["gold"] if gold else [])])
    return (
        f'<section class="{classes}" id="step-{n}" data-step="{n}">'
        f'<div class="head">{" ".join(head)}</div>{info}'
        f"{text_block(step.get('content'), open_=gold)}{args}"
        f"{media_html(list(step.get('media') or []), sizes)}</section>"
    )


def predictions_table(
    preds: list[dict[str, Any]], label: dict[str, Any], step_ids: set[int]
) -> str:
    if not preds:
        return "<p class='note'>No attributor predictions for this run.</p>"
    rows = []
    for p in preds:
        agent_ok, step_ok = hits(p, label)
        s = p.get("step")
        if s is None:
            where = "—"
        elif s in step_ids:
            where = f'<a href="#step-{s}">{s}</a>'
        else:
            where = f"{s} <span class='note'>(not in trajectory)</span>"
        rows.append(
            f'<tr><td><label><input type="radio" name="pick" value="{esc(p["attributor"])}" '
            f"onclick=\"var s=document.getElementById('attr');s.value=this.value;"
            f"s.dispatchEvent(new Event('change'))\"> {esc(p['attributor'])}</label></td>"
            f"<td>{esc(p.get('agent') or '—')}</td><td>{where}</td><td>{mark(agent_ok)}</td>"
            f"<td>{mark(step_ok)}</td><td>{esc(p.get('mode') or '')}</td>"
            f"<td>{esc((p.get('reason') or '')[:300])}</td></tr>"
        )
    return (
        "<table class='preds'><thead><tr><th>attributor</th><th>agent</th><th>step</th>"
        "<th>agent hit</th><th>step hit</th><th>mode</th><th>reason</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def kv_table(rows: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<table class='kv'>{body}</table>"


def label_html(label: dict[str, Any], step_ids: set[int]) -> str:
    """The gold label; an injection's original and replacement action fold away (the
    replacement is what the gold step shows)."""
    g = label["decisive_step"]
    if g is None:
        return (
            "<div><h2>Gold label</h2><p class='note'>Not labelled (imported without labels): "
            "`whowhen review export --unlabelled` makes a sheet to label it, "
            "`whowhen import ... --labels` joins the filled sheet.</p></div>"
        )
    where = f'<a href="#step-{g}">step {g}</a>' if g in step_ids else f"step {g} (not found)"
    rows = [
        ("decisive agent", esc(label["decisive_agent"])),
        ("decisive step", where),
        *((k, esc(label.get(k))) for k in ("mode", "source", "split", "reason") if label.get(k)),
    ]
    change = "".join(
        f"<b>{key.replace('_', ' ')}</b>{text_block(pretty_json(label[key]), cls='args')}"
        for key in ("original_action", "replacement_action")
        if label.get(key)
    )
    if change:
        change = f"<details><summary>original vs replacement action</summary>{change}</details>"
    return f"<div><h2>Gold label</h2>{kv_table(rows)}{change}</div>"


def run_html(run: dict[str, Any] | None) -> str:
    if run is None:
        return "<div><h2>Task</h2><p class='missing'>run not found in the runs table</p></div>"
    outcome = " · ".join(
        f"{k.replace('_', ' ')} {esc(run[k])}"
        for k in ("score", "end_reason", "n_steps", "origin")
        if run.get(k) is not None
    )
    rows = [
        ("gold answer", text_block(run.get("gold_answer"), cls="answer")),
        ("final answer", text_block(run.get("final_answer"), cls="answer")),
        ("success", f"{mark(bool(run.get('success')))} {esc(run.get('success'))} · {outcome}"),
    ]
    if run.get("parent_run_id"):
        rows.append(("parent run", esc(run["parent_run_id"])))
    return f"<div><h2>Task</h2>{text_block(run.get('question'))}{kv_table(rows)}</div>"


def render_page(
    run_id: str,
    run: dict[str, Any] | None,
    steps: list[dict[str, Any]],
    label: dict[str, Any],
    preds: list[dict[str, Any]],
    sizes: MediaSizes,
    dataset: str = "",
) -> str:
    """One trajectory page. `steps` in step order, `preds` in attributor order."""
    step_ids = {s["step"] for s in steps}
    g = label["decisive_step"]
    r = run or {}
    title = " · ".join(esc(r.get(k)) for k in ("benchmark", "system") if r.get(k)) or "run"
    meta = " · ".join(
        f"{k} <b>{esc(v)}</b>"
        for k, v in [
            ("run", run_id),
            ("dataset", dataset),
            *((k, r.get(k)) for k in ("subset", "modality", "topology", "policy")),
        ]
        if v
    )
    options = "".join(
        f'<option value="{esc(p["attributor"])}">{esc(p["attributor"])}</option>' for p in preds
    )
    body = "".join(step_html(s, label, preds, sizes) for s in steps) or (
        "<p class='missing'>This run has no steps in the steps table.</p>"
    )
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<meta name='viewport' content='width=device-width'><title>{esc(run_id)}</title>",
        f"<style>{CSS}</style></head><body>",
        "<nav class='bar'><a href='index.html'>← all trajectories</a>",
        f"<a href='#step-{g}'>jump to gold step {g}</a>" if g is not None else "",
        "<label>highlight attributor <select id='attr'><option value=''>all</option>",
        f"{options}</select></label></nav>",
        f"<h1>{title}</h1><p class='note'>{meta}</p>",
        f"<div class='top'>{run_html(run)}{label_html(label, step_ids)}</div>",
        "<h2>Attributor predictions</h2>",
        predictions_table(preds, label, step_ids),
        f"<h2>Trajectory ({len(steps)} steps)</h2>",
        body,
        f"<script>{JS}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"
