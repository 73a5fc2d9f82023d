"""The paper-scale profile: `build: dataset` builds rollouts, injection, continuation and the
dataset with its audit, nothing else, and uncalibrated injection needs no taxonomy stage."""

from __future__ import annotations

import re

import pytest
import yaml

from .conftest import one_benchmark
from .workdir import make_project, snakemake


def _jobs(stdout: str) -> dict[str, int]:
    """Snakemake's dry-run job table: rule -> count."""
    table = stdout.split("Job stats:", 1)[1]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M)}


def test_paper_scale_profile_plans_only_the_dataset_stages(root) -> None:
    proc = snakemake(root, "-n", "--configfile", "config/profiles/paper-scale.yaml")
    assert proc.returncode == 0, proc.stderr[-2000:]
    jobs = _jobs(proc.stdout)
    assert set(jobs) == {"rollouts", "injection", "continuation", "dataset", "all", "total"}
    assert jobs["rollouts"] == jobs["injection"] == jobs["continuation"] >= 16


@pytest.mark.slow
def test_a_dataset_build_writes_the_dataset_and_its_audit(tmp_path) -> None:
    config = one_benchmark()  # the build's machinery, not the benchmarks
    config["build"] = "dataset"
    config["injection"]["calibrate"] = 0
    project = make_project(tmp_path / "proj", config)
    proc = snakemake(project, "--cores", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in ("runs", "steps", "labels"):
        assert (project / f"results/dataset/{name}.parquet").stat().st_size > 0
    assert (project / "results/audit/leakage.csv").read_text().startswith("probe,")
    for skipped in ("results/taxonomy", "results/replay", "results/predictions", "reports"):
        assert not (project / skipped).exists(), skipped


def test_build_is_validated(tmp_path, tiny_config) -> None:
    tiny_config["build"] = "everything"
    project = make_project(tmp_path / "proj", tiny_config)
    (project / "config/config.yaml").write_text(yaml.safe_dump(tiny_config))
    proc = snakemake(project, "-n")
    assert proc.returncode != 0
    assert "field 'build'" in proc.stderr
