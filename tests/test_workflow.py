"""End-to-end: the whole Snakemake workflow on a tiny config in a temporary directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .workdir import make_project, snakemake, start_snakemake

pytestmark = pytest.mark.slow  # end to end: python -m pytest -m 'not slow' skips it

OUTPUTS = (
    "results/rollouts",
    "results/dataset/runs.parquet",
    "results/dataset/steps.parquet",
    "results/dataset/labels.parquet",
    "results/predictions/built/random.parquet",
    "results/metrics.json",
    "reports/report.html",
    "reports/figures/accuracy.png",
)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, request) -> tuple[Path, Path]:
    from .conftest import TINY
    from .wnw_files import ag_record, hc_record, write_files

    config = json.loads(json.dumps(TINY))
    config["imports"] = [
        {"name": "wnw", "format": "who_and_when", "path": "data/wnw"},
        {"name": "absent", "format": "who_and_when", "path": "nope", "optional": True},
    ]
    # one LLM-protocol attributor (the in-process stand-in): its wall-clock latency is the
    # one thing allowed to differ between the two runs
    config["models"] = {"standin": {"id": "scripted/standin"}}
    config["attribution"]["llm"] = [
        {"name": "standin_step_by_step", "model": "standin", "protocol": "step_by_step"}
    ]
    dirs = []
    for name in ("a", "b"):
        project = make_project(tmp_path_factory.mktemp(name) / "proj", config)
        write_files(
            project / "data/wnw/Algorithm-Generated", {"1.json": ag_record(), "2.json": "{bad"}
        )
        write_files(project / "data/wnw/Hand-Crafted", {"5.json": hc_record()})
        dirs.append(project)
    # side by side: each run's cores idle at its stage barriers, the other's jobs fill them
    runs = [start_snakemake(project, "--cores", "2") for project in dirs]
    logs = [proc.communicate(timeout=600)[0] for proc in runs]
    for proc, log in zip(runs, logs, strict=True):
        assert proc.returncode == 0, log[-3000:]
    return dirs[0], dirs[1]


def test_outputs_exist_and_metrics_are_sane(two_runs) -> None:
    project = two_runs[0]
    for out in OUTPUTS:
        assert (project / out).exists(), out
    metrics = json.loads((project / "results/metrics.json").read_text())
    assert metrics["injection"]["prefix_fidelity"] == 1.0
    assert metrics["injection"]["invalid"] == 0
    built = (
        metrics["dataset"]["by_dataset"]["arithmetic"]
        + metrics["dataset"]["by_dataset"]["table_qa"]
    )
    # the dataset keeps the flipped runs its selection allows (one per parent in dev and
    # test, gold positions spread), plus the two imported trajectories
    assert 0 < built <= metrics["injection"]["flipped"]
    assert metrics["dataset"]["items"] == built + 2
    assert set(metrics["dataset"]["by_system"]) == {
        "react",
        "solver_verifier",
        "captain_agent",
        "magentic_one",
    }
    assert "random/all/all" in metrics["attribution"]
    assert metrics["attribution"]["random/who_and_when/Hand-Crafted/all"]["n"] == 1
    assert "who_and_when/Algorithm-Generated/all" in metrics["random_expected"]
    manifest = json.loads((project / "results/imports/manifest.json").read_text())
    assert manifest == {"wnw": {"runs": 2, "labels": 2}, "absent": {"runs": 0, "labels": 0}}
    assert (project / "results/predictions/wnw/last_agent_step.parquet").exists()
    log = (project / "logs/imports/wnw.log").read_text()
    assert "2.json: bad JSON" in log
    html = (project / "reports/report.html").read_text()
    assert "Attribution accuracy" in html and "100.0%" in html


def test_two_clean_runs_are_byte_identical_but_for_timing(two_runs) -> None:
    """Every artifact is byte-identical, except Parquet files that hold a timing column
    (`schema.TIMING_COLUMNS`), which are identical without it, and the timing table."""
    import polars as pl

    from whowhen.schema import TIMING_COLUMNS

    a, b = two_runs
    files = sorted(p.relative_to(a) for p in (a / "results").rglob("*") if p.is_file())
    assert len([f for f in files if f.suffix == ".parquet"]) >= 15
    differ = []
    for rel in files:
        if (a / rel).read_bytes() == (b / rel).read_bytes():
            continue
        differ.append(rel)
        if rel.name == "timing.csv":
            continue
        assert rel.suffix == ".parquet", rel
        ta, tb = pl.read_parquet(a / rel), pl.read_parquet(b / rel)
        timing = [c for c in TIMING_COLUMNS if c in ta.columns]
        assert timing, rel  # only a table with a timing column may differ...
        assert ta.drop(timing).equals(tb.drop(timing)), rel  # ...and only there
    predictions = Path("results/predictions/built/standin_step_by_step.parquet")
    assert predictions in differ  # the test can see latency differ


def test_reports_figures_notebooks_and_viewer(two_runs) -> None:
    """Every figure is drawn and in the report; the tables behind them hold rows; the
    notebooks rendered; one viewer page per label, linked from the report; and a second
    clean run wrote the same bytes for all of it."""
    import re

    import polars as pl

    from whowhen.analysis.stage import FIGURES, TABLES

    a, b = two_runs
    html = (a / "reports/report.html").read_text()
    for name in FIGURES:
        assert (a / f"reports/figures/{name}.png").stat().st_size > 5000, name
        assert f'alt="{name}"' in html or name in ("accuracy", "modes"), name
    no_mode_predictions = {"mode_confusion"}  # the tiny config's attributors name no mode
    for name in TABLES:
        rows = pl.read_parquet(a / f"results/analysis/tables/{name}.parquet").height
        assert rows > 0 or name in no_mode_predictions, name
    labels = sum(
        pl.read_parquet(p).height
        for p in [a / "results/dataset/labels.parquet", a / "results/imports/wnw/labels.parquet"]
    )
    pages = sorted((a / "reports/trajectories").glob("*.html"))
    assert len(pages) == labels + 1  # and the index
    links = re.findall(r"href='(trajectories/[^'#]+)#step-(\d+)'", html)
    assert links and all((a / "reports" / page).exists() for page, _ in links)
    for page, step in links:
        assert f'id="step-{step}"' in (a / "reports" / page).read_text()
    for notebook in ("dataset", "attribution"):
        text = (a / f"reports/notebooks/{notebook}.html").read_text()
        assert not re.search(r"not produced by this run: (results|reports)/", text), notebook
    for path in sorted((a / "reports").rglob("*")):
        if path.is_file():
            rel = path.relative_to(a)
            assert path.read_bytes() == (b / rel).read_bytes(), rel


def test_snakemake_report_has_every_figure_with_its_caption(two_runs) -> None:
    from whowhen.analysis.stage import FIGURES

    project = two_runs[0]
    proc = snakemake(project, "--report", "reports/workflow-report.html")
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = (project / "reports/workflow-report.html").read_text()
    for name, category in FIGURES.items():
        assert f"{name}.png" in text and category in text, name
    assert "Mean cost per trajectory" in text  # a caption (workflow/report/cost_performance.rst)
    assert "attribution.html" in text and "dataset.html" in text  # the notebooks


def test_malformed_parquet_gives_one_clear_line(tmp_path, two_runs) -> None:
    import shutil

    project = tmp_path / "proj"
    shutil.copytree(two_runs[0], project, ignore=shutil.ignore_patterns(".snakemake"))
    (project / "results/dataset/runs.parquet").write_bytes(b"PAR1 garbage")
    proc = snakemake(
        project,
        "--cores",
        "1",
        "--forcerun",
        "attribution",
        "results/predictions/built/random.parquet",
    )
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if "error:" in ln]
    assert lines and "results/dataset/runs.parquet: not a readable Parquet file" in lines[0]


def test_bad_config_gives_one_clear_line(tmp_path) -> None:
    from .conftest import TINY

    bad = json.loads(json.dumps(TINY))
    bad["injection"]["per_run"] = "three"
    project = make_project(tmp_path / "proj", bad)
    proc = snakemake(project, "-n")
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert lines == [
        "error: config/config.yaml: field 'injection.per_run': 'three' is not of type 'integer'"
    ]


def test_missing_input_file_is_named(tmp_path) -> None:
    from .conftest import TINY

    bad = json.loads(json.dumps(TINY))
    bad["taxonomy"]["file"] = "config/missing.yaml"
    project = make_project(tmp_path / "proj", bad)
    proc = snakemake(project, "-n")
    assert proc.returncode != 0
    assert (
        "error: config/config.yaml: field 'taxonomy.file': file not found: config/missing.yaml"
    ) in proc.stderr


def test_snakemake_lint_is_clean(root) -> None:
    proc = snakemake(root, "--lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Congratulations" in proc.stdout + proc.stderr
