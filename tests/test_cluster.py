"""Scale-out: the workflow on a one-machine cluster (workflow/profiles/local-cluster).

Every job is submitted by scripts/local-submit.sh as its own detached process that shares
nothing with Snakemake but the filesystem, as on SLURM; the results must be the bytes a
plain `snakemake --cores 2` run of the same config writes (the suite's finished small run),
and a failed or killed job must fail the run instead of leaving it waiting.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, small
from .workdir import BUT_PAGES, make_project, run, start_snakemake

pytest.importorskip(
    "snakemake_executor_plugin_cluster_generic",
    reason="needs snakemake-executor-plugin-cluster-generic (pip install -e '.[test]')",
)
if not (shutil.which("setsid") and shutil.which("ps")):
    pytest.skip("scripts/local-submit.sh needs setsid and ps", allow_module_level=True)

pytestmark = pytest.mark.slow  # end to end: python -m pytest -m 'not slow' skips it

PROFILE = "workflow/profiles/local-cluster"
# On one benchmark (two shards, one feedback pair), what the default target writes under
# results/ and reports/figures, the pages left out to keep this near a minute on 2 cores:
# each cluster job starts its own Snakemake (~5 s).
TARGETS = BUT_PAGES
COMPARED = (".parquet", ".json", ".csv", ".yaml", ".png")


def _with_scripts(project: Path) -> Path:
    """The profile's commands are relative to the project: give it the cluster scripts."""
    (project / "scripts").mkdir(parents=True, exist_ok=True)
    for script in ROOT.glob("scripts/local-*.sh"):
        shutil.copy2(script, project / "scripts" / script.name)
    return project


def _outputs(project: Path) -> list[Path]:
    return sorted(
        p.relative_to(project)
        for folder in ("results", "reports/figures")
        for p in (project / folder).rglob("*")
        if p.is_file() and p.suffix in COMPARED
    )


def _submissions(project: Path) -> list[tuple[str, str]]:
    """(PID, jobscript name) of every job scripts/local-submit.sh started."""
    lines = (project / ".snakemake/local-cluster/jobs.log").read_text().splitlines()
    return [(line.split()[0], line.split()[2]) for line in lines]


def test_cluster_run_equals_local_run(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WHOWHEN_MEDIA_DIR")  # the project keeps its own results/media
    cluster = _with_scripts(make_project(tmp_path / "cluster", small()))
    proc = start_snakemake(cluster, "--profile", PROFILE, *TARGETS)
    try:
        # the plain run, built once for the suite, is built meanwhile if no test has yet:
        # the cluster's jobs mostly wait on start-up
        small_run: Path = request.getfixturevalue("small_run")
    finally:
        log, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, log[-3000:]

    # every job that is no local rule was submitted, each as its own process
    steps = int(re.search(r"(\d+) of \1 steps \(100%\) done", log).group(1))
    local_rules = len(re.findall(r"^localrule \w+:", log, flags=re.M))
    submitted = _submissions(cluster)
    pids = {pid for pid, _ in submitted}
    assert len(submitted) == steps - local_rules >= 10, submitted
    assert len(pids) == len(submitted) and str(os.getpid()) not in pids
    reported = re.findall(r"Submitted job \d+ with external jobid '(\d+)'", log)
    assert sorted(reported) == sorted(pid for pid, _ in submitted)
    state = cluster / ".snakemake/local-cluster"
    for pid, jobscript in submitted:
        jobdir = Path((state / "pids" / pid).read_text().strip())
        assert (jobdir / "exit").read_text().strip() == "0", jobscript
        rule = jobscript.split(".")[1]  # snakejob.<rule>.<jobid>.sh
        assert f"Finished jobid: 0 (Rule: {rule})" in (jobdir / "log").read_text(), jobscript
    assert {name.split(".")[1] for _, name in submitted} >= {
        "rollouts", "replay", "taxonomy", "injection", "continuation", "dataset",
        "attribution", "analysis",
    }  # fmt: skip

    files = _outputs(cluster)
    assert files == _outputs(small_run)
    assert len([f for f in files if f.suffix == ".parquet"]) >= 30
    assert Path("results/metrics.json") in files and Path("reports/figures/accuracy.png") in files
    for rel in files:
        assert (cluster / rel).read_bytes() == (small_run / rel).read_bytes(), rel


SNAKEFILE = """
rule all:
    input: "ok.txt", "fails.txt", "killed.txt"

rule ok:
    output: "ok.txt"
    shell: "echo ok > {output}"

rule fails:
    output: "fails.txt"
    shell: "exit 3"

# kills the job's whole process group (the wrapper too): no exit code is ever written,
# as when the OOM killer or a reboot ends a job
rule killed:
    output: "killed.txt"
    shell: "kill -9 0"
"""


def test_failed_and_killed_jobs_fail_the_run(tmp_path: Path) -> None:
    project = _with_scripts(tmp_path / "proj")
    shutil.copytree(ROOT / PROFILE, project / PROFILE)
    (project / "Snakefile").write_text(SNAKEFILE)
    # a job the status command lost would leave Snakemake polling until the timeout
    cmd = [sys.executable, "-m", "snakemake", "--profile", PROFILE, "--keep-going"]
    proc = run(cmd, project, timeout=120)
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0, log[-3000:]
    assert (project / "ok.txt").read_text() == "ok\n"
    assert "Error in rule fails" in log and "Error in rule killed" in log, log[-3000:]
    state = project / ".snakemake/local-cluster"
    exits: dict[str, str | None] = {}
    for pid, jobscript in _submissions(project):
        exit_file = Path((state / "pids" / pid).read_text().strip()) / "exit"
        code = exit_file.read_text().strip() if exit_file.exists() else None
        exits[jobscript.split(".")[1]] = code
    assert exits["ok"] == "0" and exits["fails"] not in ("0", None)
    assert exits["killed"] is None  # found failed by its process being gone
    status = [str(ROOT / "scripts/local-status.sh"), "12345678"]  # no such job
    assert subprocess.run(status, cwd=project, capture_output=True, text=True).stdout == "failed\n"
