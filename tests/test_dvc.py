"""DVC: dvc.yaml is generated from the Snakemake DAG, its params are the config keys the rules
read, and a config change reruns the stages Snakemake would rerun, and only downstream."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from whowhen import dvcgen
from whowhen.dvcrules import Rules

from .conftest import ROOT, small
from .workdir import copy_run, make_project, run

GIT_COMMIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm"]


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
    # the files each stage's code opens: the taxonomy the oracle and feedback name, the
    # price table every model client reads
    for name in ("taxonomy", "injection", "attribution", "feedback"):
        assert "config/taxonomy.yaml" in stages[name]["deps"], name
    for name in ("rollouts", "attribution", "feedback", "analysis"):
        assert "src/whowhen/data/prices.yaml" in stages[name]["deps"], name


def _params(stage: dict[str, Any]) -> list[str]:
    return stage["params"][0]["config/config.yaml"]


def test_each_stage_tracks_the_config_keys_its_rules_read(root) -> None:
    """The keys the design missed by hand: replay for the attribution oracle, seed for the
    taxonomy, the benchmark names for injection, systems and imports for analysis."""
    stages = yaml.safe_load((root / "dvc.yaml").read_text())["stages"]
    assert {"replay", "seed", "benchmarks", "taxonomy.file"} <= set(_params(stages["attribution"]))
    assert "seed" in _params(stages["taxonomy"])
    assert "benchmarks" in _params(stages["injection"])
    assert {"systems", "imports"} <= set(_params(stages["analysis"]))
    assert {"feedback.benchmarks", "feedback.systems"} <= set(_params(stages["analysis"]))
    rules = Rules(root)
    for name, stage in stages.items():
        keys = {".".join(k) for k in rules.config_keys(name)}
        assert set(_params(stage)) <= keys, name


def test_a_key_read_through_a_helper_becomes_a_param(tmp_path: Path) -> None:
    """A rule that reads config through a common.smk helper (not `config[...]` in its own
    params) still gets the key: the helper's body is followed, as are module-level names."""
    for name in ("Snakefile", "workflow"):
        src = ROOT / name
        copy_tree = shutil.copytree if src.is_dir() else shutil.copy2
        copy_tree(src, tmp_path / name)
    common = tmp_path / "workflow" / "rules" / "common.smk"
    common.write_text(
        common.read_text()
        + "\nAUDIT = config['dataset']\n\ndef audit_margin(wildcards):\n"
        + "    return AUDIT.get('audit_margin')\n"
    )
    rules_file = tmp_path / "workflow" / "rules" / "imports.smk"
    rules_file.write_text(
        rules_file.read_text().replace("spec=import_spec,", "spec=import_spec, m=audit_margin,")
    )
    assert ("dataset",) in Rules(tmp_path).config_keys("imports")
    assert ("dataset",) not in Rules(ROOT).config_keys("imports")


def test_check_names_the_stage_and_the_missing_key(tmp_path, monkeypatch, capsys) -> None:
    """`--check` on a dvc.yaml whose attribution stage lacks `replay` (the oracle's step
    budget) and the taxonomy file fails with a line naming the stage and each."""
    generated = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    monkeypatch.setattr(dvcgen, "build", lambda root: copy.deepcopy(generated))
    stale = copy.deepcopy(generated)
    stale["stages"]["attribution"]["params"][0]["config/config.yaml"].remove("replay")
    stale["stages"]["attribution"]["deps"].remove("config/taxonomy.yaml")
    stale["stages"]["imports"]["params"][0]["config/config.yaml"].append("seed")
    (tmp_path / "dvc.yaml").write_text(dvcgen.render(stale))
    assert dvcgen.main(["--check", "--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "stage 'attribution': config key 'replay' is missing" in err
    assert "stage 'attribution': dependency 'config/taxonomy.yaml' is missing" in err
    assert "stage 'imports': config key 'seed' is listed, but the rules give no such" in err
    (tmp_path / "dvc.yaml").write_text(dvcgen.render(generated))
    assert dvcgen.main(["--check", "--root", str(tmp_path)]) == 0


@pytest.mark.slow
def test_an_import_added_to_a_stage_module_becomes_a_dependency_of_that_stage(
    generated: Path, tmp_path: Path
) -> None:
    """The code deps are read from the imports: the imports stage gains trajectory.py (a
    module it never loaded) once its stage module imports it, and no other stage changes."""
    project = copy_run(generated, tmp_path / "proj")

    def stages() -> dict:
        return yaml.safe_load((project / "dvc.yaml").read_text())["stages"]

    before = stages()
    assert "src/whowhen/trajectory.py" not in before["imports"]["deps"]
    stage = project / "src" / "whowhen" / "imports" / "stage.py"
    stage.write_text(stage.read_text() + "\nfrom whowhen.trajectory import render_trajectory\n")
    proc = run([sys.executable, "-m", "whowhen.dvcgen", "--root", str(project)], project)
    assert proc.returncode == 0, proc.stderr[-2000:]
    after = stages()
    added = set(after["imports"]["deps"]) - set(before["imports"]["deps"])
    assert added == {"src/whowhen/trajectory.py"}
    assert set(before["imports"]["deps"]) <= set(after["imports"]["deps"])
    assert {k: v for k, v in after.items() if k != "imports"} == {
        k: v for k, v in before.items() if k != "imports"
    }


DVC_CONFIG = small()
"""One benchmark, one feedback pair: every stage has jobs, few of them (`small_run`'s)."""


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project of DVC_CONFIG whose dvc.yaml is generated for its own config, as a user's
    is (the edges follow the config: without a tracer_lite feedback source, feedback does
    not wait for the tracer)."""
    project = make_project(tmp_path_factory.mktemp("dvcgen") / "proj", DVC_CONFIG)
    proc = run([sys.executable, "-m", "whowhen.dvcgen", "--root", str(project)], project)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return project


@pytest.fixture(scope="module")
def reproduced(small_run: Path, generated: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The finished small run as a DVC project, committed: its generated dvc.yaml, and
    `dvc commit` recording the stages' deps, params and outputs as they stand (what `dvc
    repro` records after running them; the commands themselves run in
    test_changing_injection_seed_reruns_injection_onwards_only). Each test works on a copy
    of it (file times kept, so Snakemake and DVC both see it up to date)."""
    project = copy_run(small_run, tmp_path_factory.mktemp("dvc") / "proj")
    shutil.copy2(generated / "dvc.yaml", project / "dvc.yaml")
    for cmd in (
        ["git", "init", "-q"],
        ["dvc", "init", "-q"],
        ["dvc", "commit", "-f", "-q"],
        ["git", "add", "-A"],
        [*GIT_COMMIT, "first run"],
    ):
        proc = run(cmd, project)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return project


def _set(path: str, value: Any) -> tuple[str, Callable[[dict[str, Any]], None]]:
    """(path, a change that sets the dotted config key `path` to `value`)."""

    def change(config: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = config
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = copy.deepcopy(value)

    return path, change


def _append(path: str, value: Any) -> tuple[str, Callable[[dict[str, Any]], None]]:
    """(path, a change that appends `value` to the list at the dotted key `path`)."""

    def change(config: dict[str, Any]) -> None:
        node = config
        for part in path.split("."):
            node = node[part]
        node.append(copy.deepcopy(value))

    return f"{path}+", change


CHANGES = [
    _set("seed", 6),
    _set("benchmarks.arithmetic.n_tasks", 7),
    _set("benchmarks.table_qa", {"n_tasks": 4}),  # new jobs: the benchmark's shards
    _append("systems", "code_act"),  # new shards, and a new feedback pair
    _set("rollouts.slip_rate", 0.12),
    _set("replay.max_steps", 301),  # the attribution oracle replays with it too
    _set("taxonomy.annotator_sample", 5),
    _set("taxonomy.file", "config/taxonomy_copy.yaml"),
    _set("injection.per_run", 3),
    _set("continuation.split_seed", 4),
    _set("dataset.max_kind_ratio", 3),
    _set("attribution.seed", 12),
    _append("attribution.attributors", "majority_agent"),  # new attribution jobs
    _set("feedback.rounds", 2),
    _set("agents.controls", 2),
    _set("models.standin", {"id": "scripted/standin"}),
    _set("llm.max_retries", 3),
    _append("imports", {"name": "extra", "format": "who_and_when", "path": "-", "optional": True}),
    _set("analysis.tolerance", 3),
]
"""One change (or more) in every section of config/config.yaml."""


def _rule_files(project: Path) -> dict[str, str]:
    """rule name -> the rule file that defines it (the DVC stage of that name)."""
    return {
        rule: path.stem
        for path in (project / "workflow" / "rules").glob("*.smk")
        for rule in re.findall(r"^rule (\w+):", path.read_text(), re.M)
    }


def _snakemake_plan(project: Path, owner: dict[str, str]) -> tuple[set[str], set[str]]:
    """(stages with a job whose own params, input set or code changed or whose output is
    missing; stages with a job Snakemake would rerun), from `snakemake --summary` with the
    default rerun triggers: each output's own status and the plan a dry run executes. (A dry
    run's reason stops at the first one: a job downstream of a rerun never says its params
    changed too.) In-process: a fresh interpreter per call would take seconds."""
    from snakemake.api import DAGSettings, OutputSettings, ResourceSettings, SnakemakeApi
    from snakemake.settings.enums import Quietness

    out = io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api,
    ):
        workflow = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            snakefile=project / "Snakefile",
            workdir=project,
        )
        workflow.dag(DAGSettings()).summary()
    changed, rerun = set(), set()
    for line in out.getvalue().splitlines()[1:]:
        _, _, rule, _, status, plan = line.split("\t")
        if status != "ok":
            changed.add(owner[rule])
        if plan == "update pending":
            rerun.add(owner[rule])
    return changed, rerun


def _dvc_changed(project: Path) -> set[str]:
    """The stages `dvc status` reports changed."""
    from dvc.repo import Repo

    with Repo(str(project)) as repo:  # named `<dvc.yaml path>:<stage>` off the project root
        return {name.rpartition(":")[2] for name in repo.status()}


def _downstream(stages: dict[str, Any], changed: set[str]) -> set[str]:
    """`changed` and every stage that depends, through dvc.yaml's deps and outs, on one of
    them: what `dvc repro` may rerun once the changed stages' outputs change."""

    def paths(stage: dict[str, Any], field: str) -> list[str]:
        return [p if isinstance(p, str) else next(iter(p)) for p in stage.get(field, [])]

    found = set(changed)
    while True:
        outs = [o for name in found for f in ("outs", "metrics") for o in paths(stages[name], f)]
        more = {
            name
            for name, stage in stages.items()
            if name not in found
            and any(d == o or d.startswith(o + "/") for d in paths(stage, "deps") for o in outs)
        }
        if not more:
            return found
        found |= more


@pytest.mark.slow
def test_every_config_section_reruns_the_stages_snakemake_would(reproduced, tmp_path) -> None:
    """For a change in each config section: every stage with a job Snakemake reruns for its
    own reasons is one `dvc status` reports changed, and those stages with everything
    downstream of them in dvc.yaml are exactly the stages Snakemake reruns. A key missing
    from a stage's params (the attribution oracle's `replay`) fails the first; a key a
    stage lists but its rules never read fails the second."""
    project = copy_run(reproduced, tmp_path / "proj")
    owner = _rule_files(project)
    stages = yaml.safe_load((project / "dvc.yaml").read_text())["stages"]
    shutil.copy(project / "config" / "taxonomy.yaml", project / "config" / "taxonomy_copy.yaml")
    config_path = project / "config" / "config.yaml"
    original = config_path.read_text()
    assert _dvc_changed(project) == set()
    assert _snakemake_plan(project, owner) == (set(), set())
    failures = []
    for key, change in CHANGES:
        config = yaml.safe_load(original)
        change(config)
        config_path.write_text(yaml.safe_dump(config, sort_keys=False))
        dvc = _dvc_changed(project)
        changed, rerun = _snakemake_plan(project, owner)
        if not changed or not changed <= dvc or _downstream(stages, dvc) != rerun:
            failures.append(
                f"{key}: dvc status {sorted(dvc)}; snakemake: changed {sorted(changed)}, "
                f"reruns {sorted(rerun)}"
            )
    config_path.write_text(original)
    assert not failures, "\n".join(failures)
    sections = {key.split(".")[0].rstrip("+") for key, _ in CHANGES}
    assert sections >= set(yaml.safe_load((ROOT / "config" / "config.yaml").read_text()))


@pytest.mark.slow
def test_changing_injection_seed_reruns_injection_onwards_only(
    reproduced, tmp_path, monkeypatch
) -> None:
    monkeypatch.delenv("WHOWHEN_MEDIA_DIR")  # the project's own results/media is a DVC output
    project = copy_run(reproduced, tmp_path / "proj")
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
        [*GIT_COMMIT, "second run"],
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
