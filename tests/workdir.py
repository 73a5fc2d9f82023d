"""Copy the workflow into a temporary project so end-to-end tests never touch the repo."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from filelock import FileLock

from whowhen.schema import TIMING_COLUMNS

from .conftest import ROOT

PROJECT_FILES = ("Snakefile", "workflow", "config", "envs", "src", "notebooks", "dvc.yaml")
BUT_PAGES = ("analysis", "imports_all", "feedback_all")
"""Snakemake targets for every result of a run but its pages: the analysis (tables, figures,
metrics, report: every sharded stage before it) and the manifests, without the trajectory
viewer and the executed notebooks, which start a Jupyter kernel each. For end-to-end tests
of the workflow's machinery (killing, resuming, the cluster, reruns), not of the pages."""
RUN_TEMP: list[pytest.TempPathFactory] = []
"""The test run's temporary-path factory, set by conftest at the start of the session
(`shared_tables` builds in the run's folder, which every xdist worker sees)."""


def make_project(dest: Path, config: dict[str, Any]) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for name in PROJECT_FILES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(
                src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
            )
        else:
            shutil.copy2(src, dest / name)
    (dest / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return dest


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """The folder `build(folder)` fills, built once for the whole test run. Each pytest-xdist
    worker is a process of its own with its own session fixtures: they share the run's
    temporary folder, and the first to take the lock builds while the others wait. A build
    that failed fails every test that asks for it, with its error, instead of running again."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, above each worker's own
    folder = base / name
    failed = base / f"{name}.failed"
    with FileLock(base / f"{name}.lock"):
        if failed.exists():
            pytest.fail(failed.read_text(), pytrace=False)
        if not (base / f"{name}.done").exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a worker that died left
            try:
                build(folder)
            except BaseException as exc:
                failed.write_text(f"building {name} failed: {exc}")
                raise
            (base / f"{name}.done").touch()
    return folder


def shared_tables(
    name: str, build: Callable[[], dict[str, pl.DataFrame]]
) -> dict[str, pl.DataFrame]:
    """The tables `build()` returns, built once for the whole test run: the first worker to
    need them builds and writes them (`built_once`), the others read them back. Outside a
    session (no `RUN_TEMP`), `build()` itself."""
    if not RUN_TEMP:
        return build()

    def write(folder: Path) -> None:
        folder.mkdir(parents=True)
        for table, frame in build().items():
            frame.write_parquet(folder / f"{table}.parquet")

    folder = built_once(RUN_TEMP[0], name, write)
    return {path.stem: pl.read_parquet(path) for path in sorted(folder.glob("*.parquet"))}


def finished_run(dest: Path, config: dict[str, Any]) -> Path:
    """A project of `config` after a whole `snakemake --cores 2`, with its media store in
    results/media (as a user's run, and as DVC tracks it)."""
    project = make_project(dest, config)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("WHOWHEN_MEDIA_DIR", raising=False)
        proc = snakemake(project, "--cores", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return project


def copy_run(project: Path, dest: Path) -> Path:
    """A copy of a finished run to rerun from. Snakemake decides what is out of date from
    file times and its .snakemake metadata: the copy keeps both (copytree's copy2 keeps
    file times, and each folder's are set after its files), so it is up to date too."""
    return Path(shutil.copytree(project, dest, symlinks=True))


def env() -> dict[str, str]:
    """This process's environment with this interpreter's bin folder first on PATH
    (snakemake, dvc, python)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return dict(os.environ, PATH=path, DVC_NO_ANALYTICS="1")


def start_snakemake(cwd: Path, *args: str) -> subprocess.Popen[str]:
    """Snakemake in the background (its output in `.communicate()`), for a run that goes
    alongside the one under test."""
    return subprocess.Popen(
        [sys.executable, "-m", "snakemake", *args],
        cwd=cwd,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def run(cmd: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    """Run with this interpreter's bin folder first on PATH."""
    return subprocess.run(
        cmd, cwd=cwd, env=env(), capture_output=True, text=True, timeout=timeout, check=False
    )


def snakemake(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "snakemake", *args], cwd)


def run_until_killed(
    project: Path, ready: Callable[[], bool], *targets: str, timeout: float = 300
) -> None:
    """Start the workflow (the whole, or `targets`), SIGKILL its process group once
    `ready()` holds."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "snakemake", *targets, "--cores", "2", "--rerun-incomplete"],
        cwd=project,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    try:
        while not ready():
            assert proc.poll() is None, "the run ended before the kill point"
            assert time.monotonic() < deadline, "the kill point was never reached"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def resume_run(project: Path, *targets: str) -> None:
    """Unlock the project and finish the interrupted run; it must succeed."""
    assert snakemake(project, "--unlock").returncode == 0
    proc = snakemake(project, *targets, "--cores", "2", "--rerun-incomplete")
    assert proc.returncode == 0, proc.stderr[-3000:]


def run_artifacts(project: Path) -> dict[str, object]:
    """Every file under results/ and reports/: Parquet as its table less the timing
    columns, anything else as bytes; the timing table is left out."""
    out: dict[str, object] = {}
    for root in ("results", "reports"):
        for path in sorted((project / root).rglob("*")):
            if not path.is_file() or path.stem == "timing":
                continue
            rel = str(path.relative_to(project))
            if path.suffix == ".parquet":
                table = pl.read_parquet(path)
                out[rel] = table.drop([c for c in TIMING_COLUMNS if c in table.columns])
            else:
                out[rel] = path.read_bytes()
    return out
