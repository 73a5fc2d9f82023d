from __future__ import annotations

import pytest
import yaml

from whowhen.config import load_config, validate_config
from whowhen.errors import WhowhenError


def test_default_config_is_valid(root) -> None:
    config = load_config(root / "config" / "config.yaml", root=root)
    assert config["benchmarks"]["arithmetic"]["n_tasks"] >= 1
    assert config["injection"]["modes"] == []


def test_defaults_are_filled(tiny_config) -> None:
    del tiny_config["benchmarks"]["arithmetic"]["min_ops"]
    del tiny_config["benchmarks"]["arithmetic"]["max_ops"]
    filled = validate_config(tiny_config)["benchmarks"]["arithmetic"]
    assert (filled["min_ops"], filled["max_ops"]) == (5, 20)
    assert validate_config(tiny_config)["dataset"]["max_per_parent"] == {
        "train": None,
        "dev": 1,
        "test": 1,
    }


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda c: c["rollouts"].update(bogus=1), "rollouts.bogus"),
        (lambda c: c["injection"].update(seed="seven"), "injection.seed"),
        (lambda c: c.update(extra={}), "extra"),
        (lambda c: c["attribution"].update(attributors=["oracle"]), "attribution.attributors.0"),
        (lambda c: c["continuation"].update(train_fraction=1.5), "continuation.train_fraction"),
        (lambda c: c.pop("seed"), "(top level)"),
    ],
)
def test_bad_config_names_the_field(tiny_config, mutate, field) -> None:
    mutate(tiny_config)
    with pytest.raises(WhowhenError) as info:
        validate_config(tiny_config, source="my.yaml")
    message = str(info.value)
    assert message.startswith("my.yaml: ") and f"'{field}'" in message and "\n" not in message


def test_min_ops_above_max_ops(tiny_config) -> None:
    tiny_config["benchmarks"]["arithmetic"].update(min_ops=5, max_ops=3)
    with pytest.raises(WhowhenError, match="min_ops"):
        validate_config(tiny_config)


def test_missing_files(tmp_path, tiny_config) -> None:
    with pytest.raises(WhowhenError, match="config file not found"):
        load_config(tmp_path / "none.yaml")
    tiny_config["taxonomy"]["file"] = "nowhere/taxonomy.yaml"
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(tiny_config))
    with pytest.raises(WhowhenError, match=r"taxonomy\.file.*nowhere/taxonomy\.yaml"):
        load_config(path, root=tmp_path)


def test_invalid_yaml(tmp_path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("seed: [unclosed\n")
    with pytest.raises(WhowhenError, match="not valid YAML"):
        load_config(path)


def test_a_system_can_run_fewer_of_a_benchmark_s_tasks(tiny_config) -> None:
    from whowhen.rollouts import run_rollouts

    system = tiny_config["systems"][0]
    section = tiny_config["benchmarks"]["arithmetic"]
    section.update(n_tasks=4, system_tasks={system: 2})
    cfg = validate_config(tiny_config)["benchmarks"]["arithmetic"]
    runs, _, _ = run_rollouts("arithmetic", system, cfg, 1, 0.0, 60)
    assert runs.height == 2  # the first two tasks; every other system runs all four
    section["system_tasks"] = {"ledger": 2}  # known, not in this run: ignored
    validate_config(tiny_config)
    section["system_tasks"] = {"no_such_system": 2}
    with pytest.raises(WhowhenError, match=r"system_tasks\.no_such_system"):
        validate_config(tiny_config, source="my.yaml")
