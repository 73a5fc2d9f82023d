"""The static trajectory viewer: pages, gold and prediction marks, escaping, media, bytes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from whowhen import media
from whowhen.analysis.viewer import page_name, write_viewer
from whowhen.analysis.viewer_page import GOLD_BG
from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, TableSpec, to_arrow

XSS = "<script>alert(1)</script><img src=x onerror=\"document.title='pwned'\">"
MISSING = "f" * 64 + ".png"


def frame(spec: TableSpec, rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A valid table of `spec` from partial rows (absent columns are null)."""
    return pl.from_arrow(to_arrow([{n: r.get(n) for n in spec.schema.names} for r in rows], spec))


def run_row(run_id: str, **kw: Any) -> dict[str, Any]:
    base = {
        "run_id": run_id,
        "benchmark": "chart_qa",
        "task_id": "t",
        "question": "How tall is the <b>tallest</b> bar?",
        "modality": "image",
        "system": "orchestrator",
        "topology": "multi",
        "policy": "scripted",
        "seed": 0,
        "origin": "injected",
        "success": False,
        "final_answer": "12",
        "gold_answer": "14",
        "n_steps": 4,
    }
    return base | kw


def step_row(run_id: str, step: int, actor: str, content: str, **kw: Any) -> dict[str, Any]:
    return (
        {"run_id": run_id, "step": step, "actor": actor, "kind": "action"}
        | {
            "content": content,
            "media": [],
        }
        | kw
    )


def tables(ref: str, n_long: int = 0) -> dict[str, pl.DataFrame]:
    """Run `bench/run:1` (gold step 2, shared image at steps 0 and 1, a missing ref at 3),
    `run-2` (a step with markup), `run-3` (labelled, no steps), `run-4` (no runs row);
    `n_long` extra long steps in `bench/run:1` push the gold step below the fold."""
    r1 = "bench/run:1"
    steps = [
        step_row(r1, 0, "user", "Look at the chart.", kind="message", role="user", media=[ref]),
        step_row(r1, 1, "reader", "read values", tool="read", tool_args='{"x":1}', media=[ref]),
        step_row(r1, 2, "solver", "the answer is 12", tool="final_answer"),
        step_row(r1, 3, "verifier", "ok", kind="message", media=[MISSING]),
        *(step_row(r1, 4 + i, "solver", "filler line\n" * 30) for i in range(n_long)),
        step_row("run-2", 0, "assistant", XSS),
        step_row("run-2", 1, "assistant", "x" * 5000),
    ]
    if n_long:  # the gold step goes to the end, after the filler
        steps[2]["step"] = 4 + n_long
    gold = 4 + n_long if n_long else 2
    labels = [
        {"run_id": r1, "decisive_agent": "solver", "decisive_step": gold, "source": "injection"}
        | {"mode": "reasoning.logic_bug", "reason": "added instead of subtracted"},
        {"run_id": "run-2", "decisive_agent": "assistant", "decisive_step": 1, "source": "human"},
        {"run_id": "run-3", "decisive_agent": "a", "decisive_step": 0, "source": "human"},
        {"run_id": "run-4", "decisive_agent": "a", "decisive_step": 0, "source": "human"},
    ]
    preds = [
        {"run_id": r1, "attributor": "alpha", "agent": "solver", "step": gold, "parse_ok": True},
        {"run_id": r1, "attributor": "beta", "agent": "solver", "step": 1, "parse_ok": True},
        {"run_id": r1, "attributor": "gamma", "parse_ok": False},
        {"run_id": "run-2", "attributor": "alpha", "agent": "b", "step": 0, "parse_ok": True},
    ]
    return {
        "runs": frame(RUNS, [run_row(r1), run_row("run-2", modality="text"), run_row("run-3")]),
        "steps": frame(STEPS, steps),
        "labels": frame(LABELS, labels),
        "predictions": frame(PREDICTIONS, preds),
    }


@pytest.fixture
def image_ref() -> str:
    pixels = np.zeros((40, 60, 3), dtype=np.uint8)
    pixels[10:30, 20:40] = (200, 30, 30)
    return media.put_png(pixels)


@pytest.fixture
def written(tmp_path: Path, image_ref: str) -> Path:
    write_viewer(**tables(image_ref), out_dir=tmp_path / "out")
    return tmp_path / "out"


def page(out: Path, run_id: str) -> str:
    return (out / f"{page_name(run_id)}.html").read_text()


def sections(text: str) -> dict[int, tuple[set[str], str]]:
    """step -> (classes of its <section>, its HTML)."""
    found = re.finditer(r'<section class="([^"]*)" id="step-(\d+)"(.*?)</section>', text, re.S)
    return {int(m[2]): (set(m[1].split()), m[0]) for m in found}


def test_page_name_is_safe_stable_and_distinct() -> None:
    names = [page_name(r) for r in ("a/b", "a:b", "../x", "A b?", "x" * 300, "")]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", n) and len(n) <= 70 for n in names)
    assert page_name("a/b") == page_name("a/b")


def test_one_page_per_label_and_an_index(written: Path) -> None:
    pages = sorted(p.name for p in written.glob("*.html"))
    ids = ["bench/run:1", "run-2", "run-3", "run-4"]
    assert pages == sorted([*(f"{page_name(r)}.html" for r in ids), "index.html"])
    index = (written / "index.html").read_text()
    assert f"href='{page_name('bench/run:1')}.html#step-2'" in index
    assert all(a in index for a in ("alpha", "beta", "gamma"))


def test_gold_step_and_predictions_are_marked(written: Path) -> None:
    text = page(written, "bench/run:1")
    steps = sections(text)
    assert sorted(steps) == [0, 1, 2, 3]
    assert [n for n, (cls, _) in steps.items() if "gold" in cls] == [2]
    assert "added instead of subtracted" in steps[2][1]
    assert 'data-attributor="alpha"' in steps[2][1] and "pred hit" in steps[2][1]
    assert 'data-attributor="beta"' in steps[1][1] and "pred part" in steps[1][1]  # agent only
    assert "gamma" not in "".join(html for _, html in steps.values())  # no step predicted
    assert '<a href="#step-2">2</a>' in text  # summary table links to the step


def test_content_is_escaped(written: Path) -> None:
    text = page(written, "run-2")
    assert "<script>alert" not in text and 'onerror="document' not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert text.count("<script") == 1  # only the viewer's own selector script
    assert "<details" in sections(text)[1][1]  # long content folds
    assert 'class="pred miss" data-attributor="alpha"' in sections(text)[0][1]
    assert "&lt;b&gt;tallest" in page(written, "bench/run:1")


def test_missing_media_and_missing_steps_are_shown(written: Path) -> None:
    assert f"missing media {MISSING}" in sections(page(written, "bench/run:1"))[3][1]
    assert not (written / "media" / MISSING).exists()
    assert "has no steps" in page(written, "run-3")
    assert "run not found" in page(written, "run-4")


def test_media_copied_once_and_referenced_relatively(written: Path, image_ref: str) -> None:
    assert [p.name for p in (written / "media").iterdir()] == [image_ref]
    assert (written / "media" / image_ref).read_bytes() == media.load_bytes(image_ref)
    text = page(written, "bench/run:1")
    assert text.count(f'<img src="media/{image_ref}"') == 2
    assert "base64" not in text


def test_deterministic(tmp_path: Path, image_ref: str) -> None:
    first = write_viewer(**tables(image_ref), out_dir=tmp_path / "a")
    again = write_viewer(**tables(image_ref), out_dir=tmp_path / "b")
    assert [p.name for p in first] == [p.name for p in again]

    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    assert files(tmp_path / "a") == files(tmp_path / "b")
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "a").rglob("*")}
    write_viewer(**tables(image_ref), out_dir=tmp_path / "a")
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "a").rglob("*")} == before


def _driver() -> Any:
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        pytest.skip("chromium not installed (scripts/install-browser.sh)")
    chromedriver = shutil.which("chromedriver")
    if not chromedriver:
        pytest.skip("chromedriver not installed (scripts/install-browser.sh)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium not installed")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,800"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(chromedriver), options=options)


@pytest.mark.slow
def test_browser_opens_at_the_highlighted_gold_step(tmp_path: Path, image_ref: str) -> None:
    driver = _driver()
    try:
        data = tables(image_ref, n_long=12)
        write_viewer(**data, out_dir=tmp_path / "out")
        gold = data["labels"]["decisive_step"][0]
        url = (tmp_path / "out" / f"{page_name('bench/run:1')}.html").as_uri()
        driver.get(f"{url}#step-{gold}")
        driver.execute_script("return document.readyState")  # get() waits for load
        element = driver.find_element("id", f"step-{gold}")
        assert element.is_displayed()
        top, bottom, inner, scrolled = driver.execute_script(
            "const r = arguments[0].getBoundingClientRect();"
            "return [r.top, r.bottom, window.innerHeight, window.scrollY];",
            element,
        )
        assert scrolled > 0 and 0 <= top < inner and bottom > 0
        colour = driver.execute_script(
            "return getComputedStyle(arguments[0]).backgroundColor", element
        )
        r, g, b = (int(GOLD_BG[i : i + 2], 16) for i in (1, 3, 5))
        assert colour == f"rgb({r}, {g}, {b})"
        assert "gold" in element.get_attribute("class")
        images = driver.execute_script(
            "return Array.from(document.images).map(i => i.naturalWidth)"
        )
        assert images == [60, 60]  # both copies of the chart load from media/
        # the selector outlines the chosen attributor's predicted step
        driver.execute_script(
            "const s = document.getElementById('attr'); s.value = 'beta';"
            "s.dispatchEvent(new Event('change'));"
        )
        assert "sel" in driver.find_element("id", "step-1").get_attribute("class")
        driver.get((tmp_path / "out" / f"{page_name('run-2')}.html").as_uri())
        assert driver.title == "run-2"  # the markup in the content did not run
    finally:
        driver.quit()
