"""Report notebooks: parameters injected, HTML reproducible and offline, failures named.

Each render starts a kernel (~1-2 s), so renders are shared through module fixtures.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import polars as pl
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from PIL import Image

from whowhen.analysis.notebooks import (
    INJECTED_TAG,
    PARAMETERS_TAG,
    read_notebook,
    render_notebook,
)
from whowhen.errors import WhowhenError

from .conftest import ROOT

NOTEBOOKS = {
    "dataset": {"tables_dir", "figures_dir", "dataset_dir"},
    "attribution": {"tables_dir", "figures_dir", "metrics", "split"},
}


def _notebook(path: Path, *code: str) -> Path:
    """A notebook: a heading, a parameters cell, then `code` cells (ids fixed)."""
    nb = new_notebook()
    nb.cells = [
        new_markdown_cell("# Tiny"),
        new_code_cell('x = 1\nlabel = "default"'),
        *(new_code_cell(src) for src in code),
    ]
    nb.cells[1].metadata["tags"] = [PARAMETERS_TAG]
    for i, cell in enumerate(nb.cells):
        cell.id = f"c{i}"
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(nb, path)
    return path


TINY = (
    'print(f"x={x}, label={label}")',
    "import warnings\nwarnings.warn('careful')",  # the message names the kernel's temp file
    "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()",
    'print(*{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"})',  # order: hash seed
    "x * 2",
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny notebook rendered twice, into different folders."""
    tmp = tmp_path_factory.mktemp("tiny")
    source = _notebook(tmp / "tiny.ipynb", *TINY)
    out = {"source": source}
    for run in ("a", "b"):
        out[f"html_{run}"] = render_notebook(
            source,
            tmp / run / "tiny.html",
            {"x": 21, "label": "injected-value"},
            executed_out=tmp / run / "tiny.ipynb",
            cwd=tmp,
        )
        out[f"nb_{run}"] = tmp / run / "tiny.ipynb"
    return out


@pytest.mark.slow
def test_parameters_are_injected_and_run(tiny: dict[str, Path]) -> None:
    html = tiny["html_a"].read_text()
    assert "injected-value" in html and "x=21, label=injected-value" in html
    assert ">42<" in html  # the last cell's result, with x from the parameters
    assert "data:image/png;base64," in html  # the inline figure is embedded
    executed = nbformat.read(tiny["nb_a"], as_version=4)
    injected = executed.cells[2]
    assert injected.metadata["tags"] == [INJECTED_TAG]
    assert injected.source == "# Parameters\nx = 21\nlabel = 'injected-value'"
    assert all("execution" not in c.metadata for c in executed.cells)
    # atomic writes leave no temp files behind
    assert {p.name for p in tiny["html_a"].parent.iterdir()} == {"tiny.html", "tiny.ipynb"}


@pytest.mark.slow
def test_render_is_byte_identical_and_offline(tiny: dict[str, Path]) -> None:
    html = tiny["html_a"].read_bytes()
    assert html == tiny["html_b"].read_bytes()
    assert tiny["nb_a"].read_bytes() == tiny["nb_b"].read_bytes()
    text = html.decode()
    assert "ipykernel_" not in text  # the warning names the cell run-independently:
    assert "&lt;cell&gt;/" in text
    assert str(tiny["source"].parent) not in text
    assert re.findall(r"<script[^>]*\bsrc=", text) == []
    assert re.findall(r"""(?:src|href)=["']?(?:https?:)?//""", text) == []
    assert re.findall(r"""@import|url\(["']?(?:https?:)?//""", text) == []


@pytest.mark.slow
def test_failing_cell_names_notebook_and_cell(tmp_path: Path) -> None:
    source = _notebook(tmp_path / "bad.ipynb", "y = x + 1", "raise ValueError(f'boom {y}')")
    out = tmp_path / "out" / "bad.html"
    with pytest.raises(WhowhenError) as err:
        render_notebook(source, out, {"x": 1}, cwd=tmp_path)
    message = str(err.value)
    assert message.startswith(f"{source}: cell 3 failed (ValueError: boom 2)")
    assert "Traceback" not in message and "\n" not in message
    assert not out.exists()


@pytest.mark.parametrize(
    ("parameters", "match"),
    [
        ({"lable": "typo"}, "'lable' is not set in the notebook's parameters cell"),
        ({"x": {1, 2}}, "parameter x is a set"),
        ({"x": float("nan")}, "no Python literal"),
    ],
)
def test_bad_parameters_refused_before_any_kernel(
    tmp_path: Path, parameters: dict[str, object], match: str
) -> None:
    source = _notebook(tmp_path / "p.ipynb", "print(x)")
    with pytest.raises(WhowhenError, match=match):
        render_notebook(source, tmp_path / "p.html", parameters)


def test_old_notebooks_get_positional_cell_ids(tmp_path: Path) -> None:
    """nbformat 4.4 has no cell ids; the upgrade would draw random ones into the HTML."""
    cell = {"cell_type": "code", "metadata": {}, "source": "1", "outputs": [], "execution_count": 3}
    raw = {"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [cell, cell]}
    (tmp_path / "old.ipynb").write_text(json.dumps(raw))
    nb = read_notebook(tmp_path / "old.ipynb")
    assert [c.id for c in nb.cells] == ["cell-0", "cell-1"]
    assert nb.cells[0].execution_count is None


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_committed_notebooks_are_clean(name: str) -> None:
    nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    params = [c for c in code if PARAMETERS_TAG in c.metadata.get("tags", [])]
    assert len(params) == 1
    assigned = {ln.split("=")[0].strip() for ln in params[0].source.splitlines() if "=" in ln}
    assert assigned == NOTEBOOKS[name]


def _png(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 6), (200, 30, 30)).save(path)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fake run: a few tables and figures, the rest missing."""
    run = tmp_path_factory.mktemp("run")
    data, tables, figures = run / "data", run / "tables", run / "figures"
    for folder in (data, tables):
        folder.mkdir()
    pl.DataFrame(
        {"run_id": ["r1", "r2"], "decisive_step": [1, 2], "split": ["test", "dev"]}
    ).write_parquet(data / "labels.parquet")
    pl.DataFrame(
        {"run_id": ["r1", "r2"], "modality": ["text", "image"], "n_steps": [3, 4]}
    ).write_parquet(data / "runs.parquet")
    pl.DataFrame(
        {
            "run_id": ["r1"] * 3,
            "step": [0, 1, 2],
            "actor": ["planner", "solver", "solver"],
            "kind": ["message", "action", "observation"],
            "content": ["plan", "compute 2+2", "5"],
        }
    ).write_parquet(data / "steps.parquet")
    pl.DataFrame(
        {"dimension": ["all"], "value": ["all"], "items": [2], "share": [1.0]}
    ).write_parquet(tables / "dataset_stats.parquet")
    pl.DataFrame(
        {"attributor": ["random", "random"], "split": ["test", "dev"], "step_acc": [0.25, 0.5]}
    ).write_parquet(tables / "cross_modality.parquet")
    for name in ("dataset_stats", "accuracy", "cross_modality"):
        _png(figures / f"{name}.png")
    acc = {f"{k}_acc{s}": [0.5] for k in ("agent", "step", "joint") for s in ("", "_lo", "_hi")}
    pl.DataFrame(
        {
            "attributor": ["random"],
            "protocol": ["baseline"],
            "family": ["none"],
            "breakdown": ["all"],
            "group": ["all"],
            "split": ["test"],
            "n": [2],
            **acc,
            "cost_per_traj": [0.0],
        }
    ).write_csv(run / "metrics.csv")
    return run


NOTEBOOK_PARAMETERS = {
    "dataset": {"tables_dir": "tables", "figures_dir": "figures", "dataset_dir": "data"},
    "attribution": {
        "tables_dir": "tables",
        "figures_dir": "figures",
        "metrics": "metrics.csv",
        "split": "test",
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_report_notebooks_render_a_partial_run(run_dir: Path, name: str) -> None:
    """Relative paths resolve against `cwd`; present files are shown, missing ones named."""
    out = run_dir / "html" / f"{name}.html"
    render_notebook(
        ROOT / "notebooks" / f"{name}.ipynb", out, NOTEBOOK_PARAMETERS[name], cwd=run_dir
    )
    html = out.read_text()
    assert "data:image/png;base64," in html
    if name == "dataset":
        assert "compute 2+2" in html  # the DuckDB query over steps.parquet ran
        assert "tables/dataset_stats.parquet: 1 rows" in html
        assert "not produced by this run: figures/funnel.png" in html
        assert "not produced by this run: tables/drift.parquet" in html
    else:
        assert "0.500 [0.500, 0.500]" in html  # the headline metrics query ran
        assert "tables/cross_modality.parquet: 1 rows" in html  # filtered to the test split
        assert "not produced by this run: figures/mode_confusion.png" in html
