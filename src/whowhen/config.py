"""Load and validate the pipeline config against its JSON schema, with one-line errors."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema

from whowhen.attribution.kinds import ATTRIBUTORS, PROTOCOLS
from whowhen.defaults import fill_defaults, schema
from whowhen.errors import WhowhenError
from whowhen.frameworks.systems import missing_extra
from whowhen.imports.formats import FORMATS
from whowhen.io import TooLarge, check_values, read_yaml
from whowhen.registry import BENCHMARKS, SYSTEM_KINDS, played_by, played_by_model, policies
from whowhen.schema import FEEDBACK_SOURCES_FIXED


def config_schema() -> dict[str, Any]:
    """The config's JSON schema (parsed once; each caller gets its own copy), with each
    registered benchmark's section schema and the registries' names as the enums, so adding
    a benchmark package, a system, an attributor or an import format edits no schema."""
    full = schema()
    props = full["properties"]
    props["benchmarks"]["properties"] = {
        name: copy.deepcopy(dict(spec.config_schema)) for name, spec in BENCHMARKS.items()
    }
    props["systems"]["items"] = {"enum": list(SYSTEM_KINDS.names())}
    attribution = props["attribution"]["properties"]
    attribution["attributors"]["items"] = {"enum": list(ATTRIBUTORS.names())}
    llm = attribution["llm"]["items"]["properties"]
    llm["name"]["not"] = {"enum": list(ATTRIBUTORS.names())}
    llm["protocol"]["enum"] = list(PROTOCOLS.names())
    props["imports"]["items"]["properties"]["format"]["enum"] = list(FORMATS.names())
    return full


def _odd_key(value: Any, path: tuple[str, ...] = ()) -> tuple[str, Any] | None:
    """(dotted path, key) of the first mapping key that is not text: YAML reads `1:`,
    `true:` or `null:` as a number, boolean or null, which the schema cannot name."""
    if isinstance(value, dict):
        for key, sub in value.items():
            if not isinstance(key, str):
                return ".".join([*path, str(key)]), key
            if found := _odd_key(sub, (*path, key)):
                return found
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            if found := _odd_key(sub, (*path, str(i))):
                return found
    return None


def kernel_process_cap(config: dict[str, Any]) -> str:
    """`sandbox.kernel_process_cap` with `auto` resolved: `always` when some configured
    system is played by a model (model-written code), else `never` (the scripted systems'
    programs are the project's own code; the watchdog's limits suffice for them)."""
    setting = config.get("sandbox", {}).get("kernel_process_cap", "auto")
    if setting != "auto":
        return setting
    return "always" if any(played_by_model(s) for s in config.get("systems", ())) else "never"


def validate_config(config: dict[str, Any], source: str = "config") -> dict[str, Any]:
    """Raise WhowhenError naming the file and dotted field of the first problem; fill defaults.

    Reports the error jsonschema ranks most relevant, so a typo in a key says which key.
    The config may come from another loader (Snakemake's, whose aliases are shared
    objects): its size is bounded first, so validating a billion-laughs file is one line.
    """
    check_values(config, path=source)  # before anything walks it: aliases can multiply
    odd = _odd_key(config)
    if odd:
        raise WhowhenError(f"key {odd[1]!r} is not text (quote it)", path=source, field=odd[0])
    full = config_schema()
    validator = jsonschema.Draft202012Validator(full)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is not None:
        path = [str(p) for p in error.absolute_path]
        message = error.message
        if error.validator == "additionalProperties":
            known = sorted(error.schema.get("properties", {}))
            extra = sorted(set(error.instance) - set(known))
            path.append(extra[0])
            message = f"unknown key (known keys: {', '.join(known)})"
        raise WhowhenError(message, path=source, field=".".join(path) or "(top level)")
    fill_defaults(config, full)  # the one filling the lower layers use too (whowhen.defaults)
    config["sandbox"]["kernel_process_cap"] = kernel_process_cap(config)
    names = [item["name"] for item in config["attribution"]["llm"]]
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise WhowhenError(
                f"duplicate attributor name {name!r}",
                path=source,
                field=f"attribution.llm.{i}.name",
            )
    _check_agents(config, source)
    for i, name in enumerate(config["only_benchmarks"] or []):
        if name not in config["benchmarks"]:
            raise WhowhenError(
                f"{name!r} is not a configured benchmark ({', '.join(config['benchmarks'])})",
                path=source,
                field=f"only_benchmarks.{i}",
            )
    names = [item["name"] for item in config["imports"]]
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise WhowhenError(
                f"duplicate import name {name!r}", path=source, field=f"imports.{i}.name"
            )
    _check_feedback(config, source)
    for name, section in config["benchmarks"].items():
        for system in section.get("system_tasks") or {}:
            if system not in SYSTEM_KINDS:  # a known system this run leaves out is fine
                raise WhowhenError(
                    f"system_tasks names {system!r}, which is not a known system",
                    path=source,
                    field=f"benchmarks.{name}.system_tasks.{system}",
                )
        if name in BENCHMARKS and "file" not in section:
            for key, message in BENCHMARKS[name].check_config(section):
                raise WhowhenError(message, path=source, field=f"benchmarks.{name}.{key}")
    return config


def _check_agents(config: dict[str, Any], source: str) -> None:
    """Every model-played system in the matrix has a model for each role, and the models
    exist; a framework system's framework is installed."""
    agents = config["agents"]
    for i, system in enumerate(config["systems"]):
        if played_by(system) == "framework" and (why := missing_extra(system)):
            raise WhowhenError(why, path=source, field=f"systems.{i}")
    played = [s for s in config["systems"] if played_by_model(s)]
    if played and not agents["model"]:
        roles = agents["roles"]
        for system in played:
            cls = next(iter(policies(system).values()), None)
            needed = cls.agents if cls is not None else ("assistant",)
            missing = [a for a in needed if a not in roles]
            # a system's agent names differ by benchmark (orchestrator workers): a role
            # not named for one benchmark is caught when the system is built
            if missing and len(missing) == len(needed):
                raise WhowhenError(
                    f"system {system} needs a model: set agents.model (or agents.roles)",
                    path=source,
                    field="agents.model",
                )
    for agent, model in agents["roles"].items():
        if model != "scripted" and model not in config["models"] and "/" not in model:
            raise WhowhenError(
                f"unknown model {model!r} (name one in models, a provider/name id, or `scripted`)",
                path=source,
                field=f"agents.roles.{agent}",
            )


def _check_feedback(config: dict[str, Any], source: str) -> None:
    """The feedback loop names known benchmarks, systems and sources. It runs on the pairs
    the config's matrix also has, so a profile that changes `systems` needs no edit here."""
    fb = config["feedback"]
    for key, known in (
        ("benchmarks", [*BENCHMARKS, *config["benchmarks"]]),
        ("systems", [s for s in SYSTEM_KINDS.names() if played_by(s) != "framework"]),
    ):
        for i, name in enumerate(fb[key]):
            if name not in known:
                raise WhowhenError(
                    f"unknown {key[:-1]} {name!r}", path=source, field=f"feedback.{key}.{i}"
                )
    attributors = [*config["attribution"]["attributors"]]
    attributors += [item["name"] for item in config["attribution"]["llm"]]
    for i, name in enumerate(fb["sources"]):
        if name in ATTRIBUTORS and ATTRIBUTORS.get(name).fitted_on_train:
            raise WhowhenError(
                f"{name!r} is fitted on the labelled dataset's train split and cannot "
                "attribute feedback reruns",
                path=source,
                field=f"feedback.sources.{i}",
            )
        if name not in FEEDBACK_SOURCES_FIXED and name not in attributors:
            known = ", ".join([*FEEDBACK_SOURCES_FIXED, *attributors])
            raise WhowhenError(
                f"unknown feedback source {name!r} (known: {known})",
                path=source,
                field=f"feedback.sources.{i}",
            )


def _exists(path: Path) -> bool:
    """Path.exists that says False, not OSError, for a name the system cannot look up."""
    try:
        return path.exists()
    except OSError:  # e.g. a file name over the system's length limit
        return False


def check_files(config: dict[str, Any], source: str = "config", root: str | Path = ".") -> None:
    """Input files named by the config must exist: say which key names a missing one."""
    path = Path(root) / config["taxonomy"]["file"]
    if not _exists(path):
        raise WhowhenError(
            f"file not found: {config['taxonomy']['file']}", path=source, field="taxonomy.file"
        )
    for name, bench in config["benchmarks"].items():
        if "file" in bench and not _exists(Path(root) / bench["file"]):
            raise WhowhenError(
                f"file not found: {bench['file']}", path=source, field=f"benchmarks.{name}.file"
            )
    for i, item in enumerate(config.get("imports", [])):
        if not item["optional"] and not _exists(Path(root) / item["path"]):
            raise WhowhenError(
                f"file not found: {item['path']} (set optional: true to allow that)",
                path=source,
                field=f"imports.{i}.path",
            )


def check_config_file(path: str | Path) -> None:
    """Refuse what Snakemake's config loader takes without a bound: a file over the size
    limit, YAML whose aliases stand for more values than any config (Snakemake shares the
    aliased objects, then its merge walks every mapping among them, a billion times for a
    few hundred bytes). Other problems are left to Snakemake's reader and validate_config:
    it also reads JSON that is not YAML."""
    try:
        read_yaml(path)
    except TooLarge:
        raise
    except WhowhenError:
        pass


def load_config(path: str | Path, root: str | Path = ".") -> dict[str, Any]:
    """Load, validate and check a config; relative paths in it are taken from `root`."""
    path = Path(path)
    if not _exists(path):
        raise WhowhenError("config file not found", path=str(path))
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise WhowhenError("config must be a mapping of sections", path=str(path))
    config = validate_config(data, str(path))
    check_files(config, str(path), root)
    return config
