"""The command implementations: argument handling and printing only; the work is in the
stage modules, so the CLI and the Snakemake workflow compute the same things."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import polars as pl

from whowhen.errors import WhowhenError, preview
from whowhen.io import inside, parse_json, safe_file_name
from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, read_table, read_tables, write_table
from whowhen.terminal import inert

PIPELINE_MODEL = Path("results/models/tracer_lite.json")
"""Where the pipeline saves tracer-lite fitted on the built train split."""


def attributor_names() -> list[str]:
    """What `--attributor` takes: every registered attributor that runs on a dataset folder
    (not those that replay runs in their environments), then the LLM protocols."""
    # deferred: a subcommand loads only the code it runs (startup ~1 s, not ~4 s)
    from whowhen.attribution.kinds import ATTRIBUTORS, PROTOCOLS

    return [
        *(
            f"{name} (--model MODEL.json; default: the pipeline's fitted model)"
            if kind.needs_tracer_model
            else name
            for name, kind in ATTRIBUTORS.items()
            if not kind.needs_environment
        ),
        *(f"{p} (with --model)" for p in PROTOCOLS.names()),
    ]


def format_table(frame: pl.DataFrame, digits: int = 3) -> str:
    """Plain aligned text: readable in a terminal and in a log file (names from data made
    inert before the columns are measured)."""
    cells = [[inert(str(c)) for c in frame.columns]] + [
        [f"{v:.{digits}f}" if isinstance(v, float) else inert(str(v)) for v in row]
        for row in frame.iter_rows()
    ]
    widths = [max(len(r[i]) for r in cells) for i in range(len(frame.columns))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in cells
    ]
    return "\n".join([lines[0], "-" * len(lines[0]), *lines[1:]])


def plural(n: int, word: str) -> str:
    """`1 run`, `2 runs`."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def _load(data: str | Path) -> dict[str, pl.DataFrame]:
    data = Path(data)
    if not data.is_dir():
        raise WhowhenError("dataset folder not found", path=str(data))
    if not (data / "runs.parquet").is_file():
        raise WhowhenError(
            "not a dataset folder: no runs.parquet (`whowhen import` makes one)", path=str(data)
        )
    return {
        "runs": read_table(data / "runs.parquet", RUNS),
        "steps": read_table(data / "steps.parquet", STEPS),
        "labels": read_table(data / "labels.parquet", LABELS),
    }


def export_cmd(args: argparse.Namespace) -> int:
    # deferred: a subcommand loads only the code it runs (startup ~1 s, not ~4 s)
    from whowhen.dataset.export import export_hf, export_who_and_when

    tables = _load(args.data)
    if args.format == "hf":
        paths = export_hf(tables["runs"], tables["steps"], tables["labels"], args.out)
        print(f"wrote {', '.join(str(p) for p in paths)} (load with datasets.load_dataset)")
        return 0
    paths = export_who_and_when(tables["runs"], tables["steps"], tables["labels"], args.out)
    print(f"wrote {len(paths)} Who&When JSON files to {args.out}")
    return 0


def export_training_cmd(args: argparse.Namespace) -> int:
    # deferred: a subcommand loads only the code it runs (startup ~1 s, not ~4 s)
    from whowhen.attribution.llm import LLMAttributor
    from whowhen.dataset.training import export_training, taxonomy_modes

    modes: list[str] = []
    definitions: dict[str, str] = {}
    if args.taxonomy != "none":
        modes, definitions = taxonomy_modes(args.taxonomy)
    manifest = export_training(
        args.data,
        args.out,
        sigma=args.sigma,
        agent_weight=args.agent_weight,
        include_dev=args.include_dev,
        modes=modes,
        attributor=LLMAttributor("all_at_once", "", max_step_chars=args.max_step_chars),
        definitions=definitions,
    )
    counts = ", ".join(f"{n} {split}" for split, n in manifest["counts"].items())
    print(f"wrote {counts} items ({', '.join(manifest['files'])}) to {args.out}")
    for item in manifest["skipped"]:
        print(f"skipped {item['run_id']}: {item['reason']}", file=sys.stderr)
    return 0


def review_export_cmd(args: argparse.Namespace) -> int:
    # deferred: a subcommand loads only the code it runs (startup ~1 s, not ~4 s)
    from whowhen.dataset.review import export_sheet

    tables = _load(args.data)
    unlabelled = args.unlabelled or tables["labels"].is_empty()
    n = export_sheet(
        tables["labels"], tables["runs"], tables["steps"], args.out, args.n, args.seed, unlabelled
    )
    if unlabelled:
        print(
            f"wrote {n} unlabelled runs to {args.out}: fill labelled_agent and labelled_step "
            "(the decisive error's agent and step), then import again with --labels "
            f"{args.out}"
        )
    else:
        print(f"wrote {n} items to {args.out}: fill the verdict column (yes / no / unsure)")
    return 0


def review_import_cmd(args: argparse.Namespace) -> int:
    import json

    # deferred: a subcommand loads only the code it runs (startup ~1 s, not ~4 s)
    from whowhen.dataset.review import agreement, read_sheet
    from whowhen.io import write_json

    result = agreement([read_sheet(path) for path in args.sheets])
    if args.out:
        write_json(args.out, result)
    print(json.dumps(result, indent=2))
    return 0


def attribute_cmd(args: argparse.Namespace) -> int:
    # deferred: a subcommand loads only the code it runs (startup ~1 s, not ~4 s)
    from whowhen.attribution.kinds import ATTRIBUTORS, PROTOCOLS, AttributorContext
    from whowhen.defaults import filled

    name = args.attributor
    runnable = [n for n, kind in ATTRIBUTORS.items() if not kind.needs_environment]
    if name not in PROTOCOLS and name not in runnable:
        if name in ATTRIBUTORS:
            raise WhowhenError(
                f"--attributor {name!r} replays runs in their benchmarks' environments: it "
                "runs in the pipeline (snakemake), not on a dataset folder"
            )
        known = ", ".join((*runnable, *PROTOCOLS.names()))
        raise WhowhenError(f"--attributor {name!r} is not an attributor; known: {known}")
    given = _given_name(args.name)
    tables = _load(args.data)
    if name in PROTOCOLS:
        predictions, name = _attribute_llm(args, tables)
    else:
        kind = ATTRIBUTORS.get(name)
        if args.model and not kind.needs_tracer_model:
            with_model = [n for n, k in ATTRIBUTORS.items() if k.needs_tracer_model]
            raise WhowhenError(
                f"--model goes with an LLM protocol ({', '.join(PROTOCOLS.names())}) or "
                f"{' or '.join(with_model)}, not with {name!r}"
            )
        if kind.fitted_on_train and not (tables["labels"]["split"] == "train").any():
            print(
                f"{name}: nothing written: it is fitted on the dataset's train split, and "
                f"{args.data} has none (an import's labels are all test)",
                file=sys.stderr,
            )
            return 1
        ctx = AttributorContext(
            {"attribution": filled("attribution", {"seed": args.seed})},
            _fitted_model(args.model) if kind.needs_tracer_model else None,
            tables["labels"],
        )
        predictions = kind.make(ctx)(tables["runs"], tables["steps"])
        if given:
            predictions = predictions.with_columns(pl.lit(given).alias("attributor"))
            name = given
    path = inside(Path(args.data) / "predictions", f"{name}.parquet")
    out = write_table(predictions, PREDICTIONS, path)
    print(
        f"{name}: {predictions.height} predictions "
        f"({int((~predictions['parse_ok']).sum())} without a usable answer) -> {out}"
    )
    return 0


def _given_name(name: str | None) -> str | None:
    """`--name` when it can name the predictions file as it is (`score` reads every
    `predictions/*.parquet` and shows each under its `attributor` column): a plain file
    name, so two runs of one attributor under two names keep two files."""
    if name is not None and safe_file_name(name) != name:
        raise WhowhenError(
            f"--name {preview(name)}: use letters, digits, '.', '_' and '-' (not first): it "
            "names the predictions file"
        )
    return name


def _fitted_model(model_path: str | None) -> str:
    """The fitted tracer model to predict with: `model_path`, else the pipeline's; a model
    fitted on no run is refused (it would predict nothing)."""
    # deferred: a subcommand loads only the code it runs (numpy model code)
    from whowhen.attribution.tracer import TracerModel

    path = Path(model_path) if model_path else PIPELINE_MODEL
    if not path.is_file():
        raise WhowhenError(
            "no fitted tracer-lite model here: run the pipeline (snakemake), or "
            "`whowhen fit DATASET -o MODEL`, and pass --model MODEL",
            path=str(path),
        )
    if not TracerModel.load(path).n_train_runs:
        raise WhowhenError("this tracer-lite model was fitted on no run", path=str(path))
    return str(path)


def _attribute_llm(
    args: argparse.Namespace, tables: dict[str, pl.DataFrame]
) -> tuple[pl.DataFrame, str]:
    import re

    # deferred: a subcommand loads only the code it runs (startup ~1 s, not ~4 s)
    from whowhen.attribution.llm import LLMAttributor
    from whowhen.attribution.llm_protocols import attribute_llm
    from whowhen.models import make_runner

    if not args.model:
        raise WhowhenError(f"{args.attributor} needs --model")
    name = _given_name(args.name) or re.sub(
        r"[^a-z0-9_]+", "_", f"{args.attributor}__{args.model}".lower()
    )
    registry = {args.model: {"structured_output": args.structured_output}}
    if args.base_url:
        registry[args.model]["base_url"] = args.base_url
    llm = {
        "cache_dir": args.cache_dir,
        "max_concurrency": args.max_concurrency,
        "cost_limit_usd": args.cost_limit,
        "prices": args.prices,
        "batch": args.batch,
        "batch_poll_s": args.batch_poll,
    }
    client = make_runner(args.model, llm, registry)
    attributor = LLMAttributor(
        name, args.model, args.attributor, args.with_gold_answer, with_media=args.with_media
    )
    predictions = attribute_llm(tables["runs"], tables["steps"], attributor, client)
    stats = client.stats
    if stats.errors.get("auth") and not (stats.calls or stats.cache_hits):
        refusal = predictions.filter(pl.col("raw_output").str.starts_with("auth:"))
        raise WhowhenError(  # not the attributor's failing: nothing to score
            f"{args.model}: the server refused every call "
            f"({preview(refusal['raw_output'][0], 200, quote=False)}); nothing written"
        )
    print(
        f"{args.model}: {stats.calls} calls, {stats.cache_hits} cache hits, {stats.shared} shared, "
        f"{stats.retries} retries, {stats.failures} failed, ${stats.spent_usd:.4f} spent"
    )
    return predictions, name


def show_cmd(args: argparse.Namespace) -> int:
    # deferred: a subcommand loads only the code it runs (startup ~1 s, not ~4 s)
    from whowhen.trajectory import render_trajectory

    folders = (
        [Path(d) for d in args.data]
        if args.data
        else [Path("results/dataset"), *sorted(Path("results/imports").glob("*"))]
    )
    for folder in folders:
        if not (folder / "runs.parquet").exists():
            continue
        runs = read_table(folder / "runs.parquet", RUNS)
        hits = runs.filter(pl.col("run_id").str.starts_with(args.run_id))
        if hits.height > 1:
            raise WhowhenError(
                f"run id prefix {args.run_id!r} matches {hits.height} runs", path=str(folder)
            )
        if hits.height == 0:
            continue
        run = hits.row(0, named=True)
        tables = _load(folder)
        labels = tables["labels"].filter(pl.col("run_id") == run["run_id"])
        preds = read_tables(prediction_files(folder), PREDICTIONS).filter(
            pl.col("run_id") == run["run_id"]
        )
        steps = tables["steps"].filter(pl.col("run_id") == run["run_id"])
        print(
            render_trajectory(
                run,
                steps,
                labels.row(0, named=True) if labels.height else None,
                preds,
                tool_speakers=_tool_speakers(folder, run, steps),
            )
        )
        return 0
    raise WhowhenError(f"run {args.run_id!r} not found in {', '.join(map(str, folders))}")


def prediction_files(folder: Path) -> list[Path]:
    """The predictions of a dataset folder: its own `predictions/` (`whowhen attribute`),
    else, for the pipeline's folders, the pipeline's (`results/dataset` ->
    `results/predictions/built`, `results/imports/NAME` -> `results/predictions/NAME`)."""
    own = sorted((folder / "predictions").glob("*.parquet"))
    if own:
        return own
    if folder.name == "dataset":
        pipeline = folder.parent / "predictions" / "built"
    elif folder.parent.name == "imports":
        pipeline = folder.parent.parent / "predictions" / folder.name
    else:
        return []
    return sorted(pipeline.glob("*.parquet"))


def _tool_speakers(folder: Path, run: dict, steps: pl.DataFrame) -> list[str]:
    """An import's tool-output speakers (its manifest's; for a Who&When import without
    one, the speakers of this run's observations). Built data has none to name."""
    manifest = folder / "manifest.json"
    if manifest.is_file():
        data = parse_json(manifest.read_bytes(), path=str(manifest))
        speakers = data.get("tool_speakers") if isinstance(data, dict) else None
        return [str(s) for s in speakers] if isinstance(speakers, list) else []
    if run["benchmark"] != "who_and_when":
        return []
    seen = steps.filter(pl.col("kind") == "observation").sort("step")["actor"]
    return list(dict.fromkeys(seen.to_list()))


def check_config_cmd(args: argparse.Namespace) -> int:
    # deferred: a subcommand loads only the code it runs (startup ~1 s, not ~4 s)
    from whowhen.config import load_config

    config = load_config(args.path)
    print(
        f"{args.path}: valid ({', '.join(config['benchmarks'])} x "
        f"{', '.join(config['systems'])}; {len(config['imports'])} import(s))"
    )
    return 0


def dvc_yaml_cmd(args: argparse.Namespace) -> int:
    # deferred: a subcommand loads only the code it runs (startup ~1 s, not ~4 s)
    from whowhen import dvcgen

    return dvcgen.main(["--check"] if args.check else [])
