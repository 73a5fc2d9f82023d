"""Every documented profile composes with the default config as Snakemake composes them
(`--configfile` merges dicts key by key and replaces lists), with no dangling name."""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from whowhen.config import check_files, validate_config
from whowhen.errors import WhowhenError
from whowhen.standin.server import Behaviour, TestServer

from .conftest import ROOT
from .profile_config import merged_profile
from .workdir import make_project, snakemake

PROFILES = sorted((ROOT / "config" / "profiles").glob("*.yaml"))


def test_there_are_profiles() -> None:
    assert {p.name for p in PROFILES} >= {"openai.yaml", "gemini.yaml", "local.yaml"}


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.stem)
def test_profile_composes_with_the_default(profile: Path) -> None:
    config = validate_config(merged_profile(profile), source=str(profile))
    check_files(config, source=str(profile), root=ROOT)


def test_a_dangling_feedback_source_is_named() -> None:
    """What every profile ran into before: it replaced attribution.llm while the default's
    feedback sources still named the stand-in attributor."""
    config = merged_profile(ROOT / "config" / "profiles" / "openai.yaml")
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


def _uses_models(profile: Path) -> bool:
    data = yaml.safe_load(profile.read_text())
    return bool((data.get("attribution") or {}).get("llm") or (data.get("agents") or {}))


# run whole elsewhere: the frameworks profile, killed and resumed, in
# tests/test_frameworks_pipeline.py; the testserver profile's roles (agents, annotator,
# error generator, attributor) in tests/test_llm_attribution.py
RUN_ELSEWHERE = {"frameworks", "testserver"}
MODEL_PROFILES = [p for p in PROFILES if _uses_models(p) and p.stem not in RUN_ELSEWHERE]


def _at_the_test_server(profile: Path, srv: TestServer) -> tuple[dict, dict]:
    """The profile with every model it names pointed at the test server, and a second
    config file that makes the run tiny (one benchmark, a few tasks, no imports, no
    feedback pairs) without touching what the profile says."""
    data = yaml.safe_load(profile.read_text())
    merged = merged_profile(profile)
    named = {item["model"] for item in merged["attribution"]["llm"]}
    named |= {merged["agents"].get("model"), merged["injection"].get("generator")}
    named |= {merged["taxonomy"].get("annotator"), *merged["agents"].get("roles", {}).values()}
    models = {}
    for name in sorted(n for n in named if n and n != "scripted"):
        entry = merged["models"].get(name, {"id": name})
        url = srv.gemini_url if entry["id"].startswith("gemini/") else srv.url
        models[name] = {**({} if name in merged["models"] else {"id": name}), "base_url": url}
    tiny = {
        "only_benchmarks": ["arithmetic"],
        "benchmarks": {"arithmetic": {"n_tasks": 3, "min_ops": 1, "max_ops": 2}},
        "imports": [],
        "feedback": {"benchmarks": [], "systems": []},
        "models": models,
    }
    if "systems" not in data:
        tiny["systems"] = ["react"]
    return data, tiny


@pytest.mark.slow
def test_every_model_profile_runs_against_the_test_server(tmp_path, monkeypatch) -> None:
    """Each profile as written (its models, roles, attributors and sources), with every
    model's base URL overridden to the test server, on a tiny run up to its LLM attributors'
    predictions (two at a time: each run is mostly one job after another): every LLM role
    the profile names is asked over HTTP and every LLM attributor it names predicted the
    built items. The built-in attributors and the report are the same code whatever the
    profile; tests/test_model_pipeline.py renders the report after model-played runs."""
    for key in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_COMPATIBLE_API_KEY"):
        monkeypatch.setenv(key, "test-key")
    default = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    with TestServer(Behaviour(native_tools=False)) as srv:

        def run(profile: Path) -> tuple[str, int, str, dict, Path]:
            data, tiny = _at_the_test_server(profile, srv)
            project = make_project(tmp_path / profile.stem, default)
            (project / "config/profiles/tiny.yaml").write_text(yaml.safe_dump(tiny))
            targets = [
                f"results/predictions/built/{item['name']}.parquet"
                for item in merged_profile(profile)["attribution"]["llm"]
            ]
            proc = snakemake(
                project, *targets, "--cores", "1", "--configfile",
                f"config/profiles/{profile.name}", "config/profiles/tiny.yaml",
            )  # fmt: skip
            return profile.stem, proc.returncode, proc.stderr[-3000:], data, project

        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(run, MODEL_PROFILES))
        assert srv.completed > 0  # the models were asked, over HTTP
    for name, returncode, stderr, data, project in results:
        assert returncode == 0, f"{name}: {stderr}"
        for item in data.get("attribution", {}).get("llm", []):
            preds = project / f"results/predictions/built/{item['name']}.parquet"
            assert preds.exists(), f"{name}: {item['name']}"
