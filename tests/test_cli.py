from __future__ import annotations

import json

import polars as pl
import pytest

from whowhen.cli import build_parser, main

from .wnw_files import SAMPLE, ag_record, hc_record, needs_sample, write_files


@pytest.fixture
def wdir(tmp_path):
    write_files(
        tmp_path / "raw" / "Algorithm-Generated",
        {"1.json": ag_record(), "2.json": ag_record("0"), "3.json": "{oops"},
    )
    write_files(tmp_path / "raw" / "Hand-Crafted", {"1.json": hc_record()})
    return tmp_path


def _subcommands() -> list[list[str]]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    out = []
    for name, p in sub.choices.items():
        nested = [a for a in p._actions if a.dest == "format"]
        out += [[name, f] for f in nested[0].choices] if nested else [[name]]
    return out


@pytest.mark.parametrize("command", _subcommands(), ids=" ".join)
def test_help_on_every_command(command, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main([*command, "--help"])
    assert info.value.code == 0 and "usage: whowhen" in capsys.readouterr().out


def test_import_attribute_score_show_export(wdir, capsys) -> None:
    out = wdir / "ds"
    assert main(["import", "who-and-when", str(wdir / "raw"), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert "imported 3 runs" in captured.out and "skipped 1" in captured.out
    assert "3.json: bad JSON" in captured.err
    assert main(["import", "who-and-when", str(wdir / "raw"), "-o", str(out), "--strict"]) == 1
    capsys.readouterr()
    for name in ("random", "first_agent_step", "last_agent_step"):
        assert main(["attribute", str(out), "--attributor", name, "--seed", "3"]) == 0
    assert (out / "predictions" / "random.parquet").exists()
    capsys.readouterr()
    assert main(["score", str(out), "--tolerance", "1"]) == 0
    text = capsys.readouterr().out
    assert "step_acc_substring" in text and "expected_step_acc" in text
    assert "who_and_when/Hand-Crafted" in text
    assert main(["score", str(out), "--scoring", "substring", "--tolerance", "1"]) == 0
    text = capsys.readouterr().out
    assert "step_acc_substring" in text and " step_acc " not in text
    scores = json.loads((out / "scores.json").read_text())
    assert scores["tolerance"] == 1 and scores["random_expected"]
    run_id = pl.read_parquet(out / "labels.parquet").filter(
        pl.col("decisive_agent") == "WebSurfer"
    )["run_id"][0]
    assert main(["show", run_id[:10], "--data", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "[  3] WebSurfer (message)  <== GOLD" in shown
    assert "<== last_agent_step" in shown and "predicted by random" in shown
    assert main(["export", str(out), "-o", str(wdir / "exp")]) == 0
    assert len(list((wdir / "exp").glob("*.json"))) == 3


def test_import_jsonl_with_mapping_file(tmp_path, capsys) -> None:
    (tmp_path / "logs.jsonl").write_text(
        json.dumps(
            {
                "id": "r1",
                "steps": [{"agent": "a", "msg": "hi"}, {"agent": "b", "msg": "oops"}],
                "bad_agent": "b",
                "bad_step": 1,
            }
        )
        + "\n"
    )
    (tmp_path / "map.yaml").write_text(
        "fields:\n  run_id: id\n  history: steps\n  actor: agent\n  content: msg\n"
        "  decisive_agent: bad_agent\n  decisive_step: bad_step\n"
    )
    assert (
        main(
            [
                "import",
                "jsonl",
                str(tmp_path / "logs.jsonl"),
                "--mapping",
                str(tmp_path / "map.yaml"),
                "--name",
                "mine",
                "-o",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )
    assert pl.read_parquet(tmp_path / "o" / "labels.parquet")["decisive_agent"][0] == "b"


def test_errors_are_one_line(tmp_path, capsys) -> None:
    assert main(["score", str(tmp_path / "nowhere")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"error: {tmp_path / 'nowhere'}: dataset folder not found"
    (tmp_path / "empty").mkdir()
    assert main(["import", "who-and-when", str(tmp_path / "empty"), "-o", "x"]) == 1
    assert "no Who&When JSON files" in capsys.readouterr().err
    assert main(["show", "feedbeef", "--data", str(tmp_path / "empty")]) == 1
    assert "not found" in capsys.readouterr().err


def test_unknown_attributor(wdir, capsys) -> None:
    out = wdir / "ds"
    main(["import", "who-and-when", str(wdir / "raw"), "-o", str(out)])
    assert main(["attribute", str(out), "--attributor", "psychic"]) == 1
    err = capsys.readouterr().err
    assert "--attributor 'psychic' is not an attributor" in err
    assert "tracer_lite" in err and "error_signal" in err
    assert "attribution.attributors" not in err  # no config wording in a CLI message
    assert not list(out.glob("predictions/*"))


def test_check_config(root, capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(root)
    assert main(["check-config", "config/config.yaml"]) == 0
    assert "valid" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("seed: -1\n")
    assert main(["check-config", str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {bad}: ") and "\n" not in err


@needs_sample
def test_sample_through_the_cli(tmp_path, capsys) -> None:
    assert (
        main(["import", "who-and-when", str(SAMPLE / "Hand-Crafted"), "-o", str(tmp_path / "hc")])
        == 0
    )
    assert "imported 3 runs" in capsys.readouterr().out


def test_the_version_is_the_installed_package_metadata() -> None:
    """One source of the version: pyproject.toml, read back from the installed package."""
    from importlib.metadata import version

    import whowhen

    assert whowhen.__version__ == version("whowhen")
