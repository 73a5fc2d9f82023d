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
import yaml

from whowhen.schema import TIMING_COLUMNS

from .conftest import ROOT

PROJECT_FILES = ("Snakefile", "workflow", "config", "envs", "src", "notebooks", "dvc.yaml")


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
