"""YAML made to exhaust whoever reads it: a few hundred bytes of anchors and aliases that
stand for a billion values ("billion laughs"), an alias to itself, a huge file. A config,
a profile, an import's field mapping: each is one error line naming the file, in a
fraction of a second and a few megabytes, however the aliases are arranged."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT
from .workdir import make_project, run


def _laughs(kind: str, levels: int = 9) -> str:
    """Anchors whose aliases multiply by nine at each of `levels` levels (9**9 values),
    as lists or as mappings; `recursive`: a list that holds itself."""
    if kind == "recursive":
        return "seed: &a [1, *a]\n"
    lines = []
    for i in range(levels + 1):
        items = ["lol"] * 9 if i == 0 else [f"*a{i - 1}"] * 9
        if kind == "mapping":
            body = "{" + ", ".join(f"k{j}: {v}" for j, v in enumerate(items)) + "}"
        else:
            body = "[" + ", ".join(items) + "]"
        lines.append(f"x{i}: &a{i} {body}")
    return "\n".join(lines) + f"\nseed: *a{levels}\n"


PEAK = textwrap.dedent(
    """
    import re, sys
    from pathlib import Path
    from whowhen.cli import main
    code = main(sys.argv[1:])
    # VmHWM: this process's own peak; ru_maxrss would also count its parent's at the fork
    status = Path("/proc/self/status").read_text()
    print("peak_mib", int(re.search(r"VmHWM:\\s+(\\d+)", status).group(1)) // 1024)
    sys.exit(code)
    """
)


def _cli(*argv: str, timeout: float = 30) -> tuple[int, list[str], int]:
    """(exit code, stderr lines, peak MiB) of `whowhen ARGV` in a child process; the test
    fails if it runs past `timeout` s."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", PEAK, *argv], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"whowhen {' '.join(argv)} still running after {timeout} s")
    return proc.returncode, proc.stderr.splitlines(), int(proc.stdout.split("peak_mib")[-1])


@pytest.mark.parametrize("kind", ["list", "mapping", "recursive"])
def test_check_config_refuses_an_alias_bomb_in_one_line(kind: str, tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_laughs(kind))
    assert bomb.stat().st_size < 2000
    code, err, peak = _cli("check-config", str(bomb))
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"error: {bomb}: ") and "alias" in err[0], err
    assert peak < 300, f"peak {peak} MiB"


def test_a_mapping_file_alias_bomb_is_one_line(tmp_path: Path) -> None:
    """A bad field's value is quoted in the error line: the quote must not expand it."""
    (tmp_path / "logs.jsonl").write_text('{"run_id": "r"}\n')
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text(_laughs("list").replace("seed:", "run_id:"))
    argv = ["import", "jsonl", str(tmp_path / "logs.jsonl"), "--mapping", str(mapping)]
    code, err, peak = _cli(*argv, "-o", str(tmp_path / "out"))
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"error: {mapping}: ") and "alias" in err[0], err
    assert peak < 300, f"peak {peak} MiB"


def test_a_huge_config_file_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("w") as handle:
        handle.write("seed: 1\nnotes: |\n")
        line = "  " + "x" * 1000 + "\n"
        for _ in range(40_000):  # 40 MB
            handle.write(line)
    code, err, peak = _cli("check-config", str(big))
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"error: {big}: ") and "MiB" in err[0], err
    assert peak < 300, f"peak {peak} MiB"


VALIDATE = textwrap.dedent(
    """
    import sys, yaml
    from whowhen.config import validate_config
    from whowhen.errors import WhowhenError
    config = yaml.load(open(sys.argv[1]), Loader=yaml.FullLoader)  # as Snakemake reads it
    try:
        validate_config(config, source=sys.argv[1])
    except WhowhenError as exc:
        print(exc)
    """
)


@pytest.mark.parametrize("kind", ["list", "mapping", "recursive"])
def test_validating_what_snakemake_loaded_is_bounded(kind: str, tmp_path: Path) -> None:
    """The Snakefile validates the config Snakemake itself loaded (its loader expands no
    alias: the values are shared, a billion of them behind a few objects)."""
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_laughs(kind))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", VALIDATE, str(bomb)], capture_output=True, text=True, timeout=30
        )
    except subprocess.TimeoutExpired:
        pytest.fail("validate_config still running after 30 s")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith(f"{bomb}: "), proc.stdout
    assert "over 100000 values" in proc.stdout or "deeper than 100 levels" in proc.stdout


def test_the_workflow_refuses_an_alias_bomb_config_in_one_line(tmp_path: Path) -> None:
    """Mappings: Snakemake's merge of the `configfile:` walks every one of them."""
    default = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    project = make_project(tmp_path / "p", default)
    (project / "config" / "config.yaml").write_text(_laughs("mapping"))
    try:
        proc = run([sys.executable, "-m", "snakemake", "-n", "--quiet", "all"], project, 60)
    except subprocess.TimeoutExpired:
        pytest.fail("snakemake -n still running after 60 s")
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "config/config.yaml" in lines[0] and "alias" in lines[0], (
        proc.stderr[-3000:]
    )


LOADER = textwrap.dedent(
    """
    import re, sys
    from pathlib import Path
    from whowhen.errors import WhowhenError
    from whowhen.models.spec import load_prices
    from whowhen.taxonomy import load_taxonomy
    load = {"taxonomy": load_taxonomy, "prices": load_prices}[sys.argv[1]]
    try:
        load(sys.argv[2])
    except WhowhenError as exc:
        print(str(exc)[:500])
    status = Path("/proc/self/status").read_text()
    print("peak_mib", int(re.search(r"VmHWM:\\s+(\\d+)", status).group(1)) // 1024)
    """
)


def _taxonomy_bomb(levels: int) -> str:
    """A taxonomy whose modes are the anchors themselves: each is a list, not a mode, and
    the schema's error message quotes it whole."""
    lines = ["version: 1", "categories: {a: b}", "modes:"]
    for i in range(levels + 1):
        items = ["lol"] * 9 if i == 0 else [f"*a{i - 1}"] * 9
        lines.append(f"  - &a{i} [{', '.join(items)}]")
    return "\n".join(lines) + "\n"


def _prices_bomb(levels: int) -> str:
    """A price table whose model family is the bomb (the table takes it as text)."""
    body = _laughs("list", levels).replace(f"seed: *a{levels}\n", "")
    return body + f"models:\n  m: {{input: 1, output: 1, family: *a{levels}}}\n"


@pytest.mark.parametrize("loader", ["taxonomy", "prices"])
def test_every_yaml_file_a_user_names_is_read_bounded(loader: str, tmp_path: Path) -> None:
    """The taxonomy file (`taxonomy.file`, `--taxonomy`) and a price table (`--prices`)
    are read by the same bounded loader as the config (7 levels here: 4.8 million values,
    enough to show the unbounded readers' cost without exhausting the machine)."""
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_taxonomy_bomb(7) if loader == "taxonomy" else _prices_bomb(7))
    argv = [sys.executable, "-c", LOADER, loader, str(bomb)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"reading a {loader} file still running after 30 s")
    assert proc.returncode == 0, proc.stderr[-2000:]
    message, peak = proc.stdout.rsplit("peak_mib", 1)
    assert message.startswith(f"{bomb}: refused: ") and "alias" in message, message
    assert int(peak) < 300, f"peak {peak} MiB"
