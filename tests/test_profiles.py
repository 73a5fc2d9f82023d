"""Every documented profile composes with the default config as Snakemake composes them
(`--configfile` merges dicts key by key and replaces lists), with no dangling name."""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from whowhen.config import check_files, validate_config
from whowhen.errors import WhowhenError

from .conftest import ROOT
from .workdir import make_project, snakemake

PROFILES = sorted((ROOT / "config" / "profiles").glob("*.yaml"))


def _merged(profile: Path) -> dict:
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    update_config(config, yaml.safe_load(profile.read_text()))
    return config


def test_there_are_profiles() -> None:
    assert {p.name for p in PROFILES} >= {"openai.yaml", "gemini.yaml", "local.yaml"}


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.stem)
def test_profile_composes_with_the_default(profile: Path) -> None:
    config = validate_config(_merged(profile), source=str(profile))
    check_files(config, source=str(profile), root=ROOT)


def test_a_dangling_feedback_source_is_named() -> None:
    """What every profile ran into before: it replaced attribution.llm while the default's
    feedback sources still named the stand-in attributor."""
    config = _merged(ROOT / "config" / "profiles" / "openai.yaml")
    broken = copy.deepcopy(config)
    broken["feedback"]["sources"] = [*broken["feedback"]["sources"], "standin_step_by_step"]
    with pytest.raises(WhowhenError, match="unknown feedback source 'standin_step_by_step'"):
        validate_config(broken, source="profile")


@pytest.mark.slow
def test_every_profile_passes_a_dry_run(tmp_path) -> None:
    """`snakemake -n` with each profile as documented (two at a time: each dry run is
    mostly start-up and building the default's DAG)."""
    default = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    projects = [make_project(tmp_path / p.stem, default) for p in PROFILES]

    def dry_run(project: Path) -> tuple[str, int, str]:
        profile = f"config/profiles/{project.name}.yaml"
        proc = snakemake(project, "-n", "-q", "--configfile", profile)
        return project.name, proc.returncode, proc.stderr[-2000:]

    with ThreadPoolExecutor(max_workers=2) as pool:
        for name, returncode, stderr in pool.map(dry_run, projects):
            assert returncode == 0, f"{name}: {stderr}"
