"""Adding an attributor, an import format or a system is one module plus its registration:
a distribution from outside whowhen (`plugin_site`) registers one of each by entry point,
and the command line, config validation, the stages and the report take them as they take
the built-ins, with no edit to whowhen. Without the distribution, the names are unknown."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from .conftest import ROOT, one_benchmark
from .plugin_site import ATTRIBUTOR, FORMAT, SYSTEM, TSV, install, plugin_env
from .workdir import BUT_PAGES, make_project, snakemake


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install(tmp_path_factory.mktemp("site"))


def _whowhen(args: list[str], env: dict[str, str] | None, cwd: Path) -> subprocess.CompletedProcess:
    code = "import sys; from whowhen.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=env, cwd=cwd, capture_output=True, text=True
    )


def test_the_command_line_lists_each_plugin(site: Path, tmp_path: Path) -> None:
    env = plugin_env(site)
    listed = _whowhen(["list"], env, tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert f"{ATTRIBUTOR}  (heuristic, plugin)" in listed.stdout
    assert f"{FORMAT}  (tab-separated steps" in listed.stdout
    assert f"{SYSTEM}  (script playing react)" in listed.stdout
    attribute = _whowhen(["attribute", "--help"], env, tmp_path)
    assert ATTRIBUTOR in attribute.stdout
    imports = _whowhen(["import", "--help"], env, tmp_path)
    assert FORMAT in imports.stdout
    bare = _whowhen(["list"], None, tmp_path)
    assert bare.returncode == 0 and ATTRIBUTOR not in bare.stdout
    assert FORMAT not in bare.stdout and SYSTEM not in bare.stdout


CONFIG_CHECK = """
import json, sys, yaml
from whowhen.config import validate_config
from whowhen.errors import WhowhenError
config = yaml.safe_load(open(sys.argv[1]))
config["systems"] = ["react", "echo_react"]
config["attribution"]["attributors"] = ["random", "longest_step"]
config["imports"] = [{"name": "team", "format": "tsv_steps", "path": "steps.tsv"}]
config["feedback"]["sources"] = ["none", "longest_step"]
try:
    validate_config(config, "config.yaml")
    print(json.dumps({"ok": True}))
except WhowhenError as exc:
    print(json.dumps({"ok": False, "error": str(exc)}))
"""


def test_config_validation_takes_the_plugins_and_refuses_them_without(
    site: Path, tmp_path: Path
) -> None:
    args = [sys.executable, "-c", CONFIG_CHECK, str(ROOT / "config" / "config.yaml")]
    seen = subprocess.run(args, env=plugin_env(site), capture_output=True, text=True)
    assert seen.returncode == 0, seen.stderr[-2000:]
    assert json.loads(seen.stdout) == {"ok": True}
    unseen = subprocess.run(args, capture_output=True, text=True)
    result = json.loads(unseen.stdout)
    assert not result["ok"] and "systems.1" in result["error"], result


def test_the_plugin_format_and_attributor_run_from_the_command_line(
    site: Path, tmp_path: Path
) -> None:
    env = plugin_env(site)
    (tmp_path / "steps.tsv").write_text(TSV)
    imported = _whowhen(["import", FORMAT, "steps.tsv", "-o", "team"], env, tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert "imported 2 runs" in imported.stdout and "line 7" in imported.stderr
    attributed = _whowhen(["attribute", "team", "--attributor", ATTRIBUTOR], env, tmp_path)
    assert attributed.returncode == 0, attributed.stderr
    [path] = (tmp_path / "team").rglob(f"{ATTRIBUTOR}*.parquet")
    predictions = pl.read_parquet(path).sort("run_id")
    assert predictions.select("run_id", "agent", "step").rows() == [
        ("r1", "coder", 1),
        ("r2", "planner", 2),
    ]
    scored = _whowhen(["score", "team"], env, tmp_path)
    assert scored.returncode == 0, scored.stderr
    assert ATTRIBUTOR in scored.stdout


ROLLOUT = """
import json
from whowhen.rollouts import run_rollouts
runs, steps, _ = run_rollouts("arithmetic", "echo_react", {"n_tasks": 4}, 3, 0.0, 80)
print(json.dumps({"systems": sorted(set(runs["system"])), "solved": int(runs["success"].sum()),
                  "runs": runs.height}))
"""


def test_the_plugin_system_runs_its_rollouts(site: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(ROLLOUT)],
        env=plugin_env(site),
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"systems": [SYSTEM], "solved": 4, "runs": 4}


@pytest.mark.slow
def test_the_pipeline_and_its_report_take_the_plugins(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One small Snakemake run with the plug-ins named in its config: the system's
    rollouts, the format's dataset and the attributor's predictions flow through every
    stage into the report, which pools the attributor by its registered protocol and
    family."""
    config = one_benchmark()
    config["benchmarks"]["arithmetic"]["n_tasks"] = 4
    config["systems"] = [SYSTEM]
    config["injection"] = {**config["injection"], "calibrate": 0}
    config["attribution"]["attributors"] = ["random", ATTRIBUTOR]
    config["imports"] = [{"name": "team", "format": FORMAT, "path": "steps.tsv"}]
    project = make_project(tmp_path / "project", config)
    (project / "steps.tsv").write_text(TSV)
    monkeypatch.setenv("PYTHONPATH", plugin_env(site)["PYTHONPATH"])
    done = snakemake(project, *BUT_PAGES, "--cores", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    runs = pl.read_parquet(
        project / "results" / "rollouts" / "arithmetic" / SYSTEM / "runs.parquet"
    )
    assert set(runs["system"]) == {SYSTEM} and runs.height == 4
    imported = pl.read_parquet(
        project / "results" / "predictions" / "team" / f"{ATTRIBUTOR}.parquet"
    )
    assert imported.sort("run_id").select("agent", "step").rows() == [("coder", 1), ("planner", 2)]
    built = pl.read_parquet(project / "results" / "predictions" / "built" / f"{ATTRIBUTOR}.parquet")
    assert built.height > 0 and built["parse_ok"].all()
    breakdown = pl.read_csv(project / "results" / "analysis" / "attribution_metrics.csv")
    pooled = breakdown.filter(pl.col("attributor") == ATTRIBUTOR)
    assert pooled.height and set(pooled["protocol"]) == {"heuristic"}
    assert set(pooled["family"]) == {"plugin"}
    report = (project / "reports" / "report.html").read_text()
    assert ATTRIBUTOR in report and "team" in report
