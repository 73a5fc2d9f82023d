"""Copy the workflow into a temporary project so end-to-end tests never touch the repo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

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
