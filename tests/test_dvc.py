"""DVC: dvc.yaml is generated from the Snakemake DAG, and a seed change reruns only downstream."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import TINY, one_benchmark
from .workdir import make_project, run


@pytest.mark.slow
def test_dvc_yaml_agrees_with_snakemake(root) -> None:
    proc = run([sys.executable, "-m", "whowhen.dvcgen", "--check"], root)
    assert proc.returncode == 0, proc.stderr


def test_every_stage_has_code_deps_and_params(root) -> None:
    stages = yaml.safe_load((root / "dvc.yaml").read_text())["stages"]
    assert list(stages) == [
        "rollouts",
        "replay",
        "taxonomy",
        "injection",
        "continuation",
        "imports",
        "attribution",
        "feedback",
        "analysis",
    ]
    for name, stage in stages.items():
        assert f"workflow/rules/{name}.smk" in stage["deps"]
        assert stage["cmd"].startswith("snakemake ")
        assert stage["params"][0]["config/config.yaml"]
    assert "results/rollouts" in stages["injection"]["deps"]
    assert "results/rollouts" not in stages["attribution"]["deps"]


@pytest.mark.slow
def test_an_import_added_to_a_stage_module_becomes_a_dependency_of_that_stage(
    tmp_path: Path,
) -> None:
    """The code deps are read from the imports: the imports stage gains trajectory.py (a
    module it never loaded) once its stage module imports it, and no other stage changes."""
    project = make_project(tmp_path / "proj", TINY)

    def generated() -> dict:
        proc = run([sys.executable, "-m", "whowhen.dvcgen", "--root", str(project)], project)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return yaml.safe_load((project / "dvc.yaml").read_text())["stages"]

    before = generated()
    assert "src/whowhen/trajectory.py" not in before["imports"]["deps"]
    stage = project / "src" / "whowhen" / "imports" / "stage.py"
    stage.write_text(stage.read_text() + "\nfrom whowhen.trajectory import render_trajectory\n")
    after = generated()
    added = set(after["imports"]["deps"]) - set(before["imports"]["deps"])
    assert added == {"src/whowhen/trajectory.py"}
    assert set(before["imports"]["deps"]) <= set(after["imports"]["deps"])
    assert {k: v for k, v in after.items() if k != "imports"} == {
        k: v for k, v in before.items() if k != "imports"
    }


@pytest.mark.slow
def test_changing_injection_seed_reruns_injection_onwards_only(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("WHOWHEN_MEDIA_DIR")  # the project's own results/media is a DVC output
    project = make_project(tmp_path / "proj", one_benchmark())
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first run"]
    for cmd in (
        ["git", "init", "-q"],
        ["dvc", "init", "-q"],
        ["dvc", "repro"],
        ["git", "add", "-A"],
        git,
    ):
        proc = run(cmd, project)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert run(["dvc", "status"], project).stdout.strip().endswith("up to date.")
    shown = json.loads(run(["dvc", "metrics", "show", "--json"], project).stdout)
    metrics = shown[""]["data"]["results/metrics.json"]["data"]
    assert metrics["dataset"]["items"] > 0
    config_path = project / "config" / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    config["injection"]["seed"] += 1
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    proc = run(["dvc", "repro"], project)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "Stage 'rollouts' didn't change, skipping" in out
    assert "Stage 'taxonomy' didn't change, skipping" in out
    for stage in ("injection", "continuation", "attribution", "analysis"):
        assert f"Running stage '{stage}'" in out
    assert "Rule: rollouts)" not in out
    # the new injection seed gives other labels: `dvc metrics diff` against the commit
    diff = json.loads(run(["dvc", "metrics", "diff", "--json"], project).stdout)
    assert diff["results/metrics.json"], diff
    proc = run(["dvc", "plots", "show", "-o", "plots_html"], project)
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = (project / "plots_html" / "index.html").read_text()
    assert page.count("vegaEmbed") == 2  # the two data series (bars, scatter), drawn
    assert "Exact step accuracy per attributor" in page and "cost_per_traj" in page
    assert "cross_modality.png" in page

    # the outputs travel through a DVC remote: a folder here, s3://... or a shared path alike
    for cmd in (
        ["git", "add", "-A"],
        [*git[:-1], "second run"],
        ["dvc", "remote", "add", "-d", "store", str(tmp_path / "store")],
        ["dvc", "push"],
    ):
        proc = run(cmd, project)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    before = _tree(project)
    assert len(before) > 50
    shutil.rmtree(project / "results")
    shutil.rmtree(project / "reports")
    # DVC restores the cached outputs; metrics.json (cache: false) and .gitignores are in git
    for cmd in (["dvc", "pull"], ["git", "checkout", "--", "results", "reports"]):
        proc = run(cmd, project)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert _tree(project) == before
    assert run(["dvc", "status"], project).stdout.strip().endswith("up to date.")


def _tree(project: Path) -> dict[str, bytes]:
    """Every file under results/ and reports/, by path."""
    return {
        str(p.relative_to(project)): p.read_bytes()
        for folder in ("results", "reports")
        for p in sorted((project / folder).rglob("*"))
        if p.is_file()
    }
