"""`whowhen`: one-off use without Snakemake. Every command has --help.

whowhen import who-and-when DIR -o OUT     import the public benchmark (one or both subsets)
whowhen import jsonl FILE -o OUT           import your own logs through a field mapping
whowhen import otel TRACES -o OUT          import OpenTelemetry traces (OpenInference, GenAI)
whowhen import inspect LOG -o OUT          import Inspect AI eval logs (a file or a folder)
whowhen export OUT -o DIR [--format hf]    write a dataset as Who&When JSON (or HF Parquet)
whowhen export-training OUT -o DIR         SFT and RL (GRPO) JSONL of the train split
whowhen review export OUT -o SHEET.csv     a stratified sample for human validation
whowhen review import SHEET.csv [...]      agreement figures from filled sheets
whowhen attribute OUT --attributor NAME    predict (agent, step) for every trajectory
whowhen fit DATASET -o MODEL               train tracer-lite on labelled runs (k-fold CV)
whowhen score OUT                          exact and Who&When-compatible accuracy
whowhen show RUN_ID                        a readable trajectory, gold and predictions marked
whowhen runs OUT [--failed]                one line per run: outcome, agents, steps, label
whowhen view OUT -o DIR                    HTML trajectory pages and an index of the runs
whowhen list [KIND]                        what a config can name (plug-ins included)
whowhen check-config [PATH]                validate a pipeline config
whowhen dvc-yaml [--check]                 regenerate dvc.yaml from the workflow
whowhen gateway --model ID [--port N]      record your own agent's model calls
whowhen record -o REC --model ID -- CMD    run your agent program and record its calls
whowhen replay REC RUN --at STEP ... -- CMD  rerun a recorded run with one step changed
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from whowhen import __version__
from whowhen.cli import (
    commands,
    defaults,
    import_cmd,
    list_cmd,
    record_cmd,
    runs_cmd,
    scoring,
    tracer_cmd,
)
from whowhen.defaults import section_defaults
from whowhen.errors import WhowhenError
from whowhen.terminal import inert_output


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="whowhen",
        description="Failure attribution for LLM agent systems: build exact-label benchmarks, "
        "import published ones, evaluate attributors.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("--version", action="version", version=f"whowhen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    import_cmd.add_import_parser(sub)
    _add_export_parser(sub)
    _add_export_training_parser(sub)
    _add_review_parser(sub)
    _add_attribute_parser(sub)
    _add_score_parser(sub)
    _add_show_parser(sub)
    runs_cmd.add_runs_parsers(sub)
    _add_config_parsers(sub)
    list_cmd.add_list_parser(sub)
    _add_gateway_parser(sub)
    record_cmd.add_record_parsers(sub)
    tracer_cmd.add_fit_parser(sub)
    return parser


def _add_gateway_parser(sub: argparse._SubParsersAction) -> None:
    """`gateway`: an OpenAI-compatible endpoint that records every call of every run."""
    p = sub.add_parser(
        "gateway",
        help="serve a model at http://127.0.0.1:PORT/run/<run id>/<agent>/v1 and record "
        "every call (one JSONL per run)",
    )
    p.add_argument("--model", required=True, help="the model behind it (as for attribute)")
    p.add_argument("--base-url", help="server URL for openai-compatible models")
    p.add_argument("--port", type=int, default=8700, help="0: any free port (printed)")
    p.add_argument("--record", default="gateway-runs", metavar="DIR", help="where runs go")
    p.add_argument(
        "--cache-dir", default=defaults.default_cache_dir(), help=defaults.cache_dir_help()
    )
    p.add_argument("--prices", help=defaults.PRICES_HELP)
    p.add_argument(
        "--max-concurrency", type=int, default=section_defaults("llm")["max_concurrency"]
    )
    p.set_defaults(func=_gateway)


def _gateway(args: argparse.Namespace) -> int:
    from whowhen.cli.gateway_cmd import gateway_cmd  # deferred: loads the model layer

    return gateway_cmd(args)


def _add_export_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write a dataset as Who&When-format JSON files")
    p.add_argument("data", metavar="OUT", help="dataset folder (runs/steps/labels.parquet)")
    p.add_argument("-o", "--out", required=True, metavar="DIR")
    p.add_argument(
        "--format",
        choices=("who_and_when", "hf"),
        default="who_and_when",
        help="Who&When JSON files, or Parquet per split for the Hugging Face datasets library",
    )
    p.set_defaults(func=commands.export_cmd)


def _add_export_training_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export-training",
        help="write the train split as SFT and RL (GRPO) JSONL for fine-tuning an attributor",
    )
    p.set_defaults(func=commands.export_training_cmd)
    p.add_argument("data", metavar="DATASET", help="dataset folder (runs/steps/labels.parquet)")
    p.add_argument("-o", "--out", required=True, metavar="DIR")
    p.add_argument(
        "--sigma",
        type=float,
        default=1.0,
        help="width in steps of the reward's Gaussian step kernel (default 1.0)",
    )
    p.add_argument(
        "--agent-weight",
        type=float,
        default=0.5,
        help="weight of the agent term in the reward; the step term gets the rest (default 0.5)",
    )
    p.add_argument(
        "--include-dev", action="store_true", help="also write the dev split (never test)"
    )
    p.add_argument(
        "--taxonomy",
        default="config/taxonomy.yaml",
        metavar="YAML",
        help="failure modes named in the prompt, as the attribution stage does "
        "(default config/taxonomy.yaml; 'none': no modes, as `whowhen attribute` sends)",
    )
    p.add_argument("--max-step-chars", type=int, default=2000, help="as the attributor's")


def _add_review_parser(sub: argparse._SubParsersAction) -> None:
    """`review export` and `review import`: the human-validation round trip."""
    review = sub.add_parser("review", help="human validation of labels").add_subparsers(
        dest="review_command", required=True
    )
    p = review.add_parser("export", help="write a stratified review sheet (CSV)")
    p.add_argument("data", metavar="OUT", help="dataset folder (runs/steps/labels.parquet)")
    p.add_argument("-o", "--out", required=True, metavar="SHEET.csv")
    p.add_argument("-n", type=int, default=60, help="about this many items (default 60)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--unlabelled",
        action="store_true",
        help="a sheet of runs without a label (imported traces, eval logs) to label: fill "
        "labelled_agent and labelled_step, then `whowhen import ... --labels SHEET.csv` "
        "(the default when the dataset has no label at all)",
    )
    p.set_defaults(func=commands.review_export_cmd)
    p = review.add_parser("import", help="agreement figures from filled sheets")
    p.add_argument("sheets", nargs="+", metavar="SHEET.csv")
    p.add_argument("-o", "--out", metavar="agreement.json")
    p.set_defaults(func=commands.review_import_cmd)


def _add_attribute_parser(sub: argparse._SubParsersAction) -> None:
    """`attribute`, with the options only the LLM protocols take in their own group."""
    p = sub.add_parser("attribute", help="run one attributor over a dataset")
    p.add_argument("data", metavar="OUT", help="dataset folder (runs/steps/labels.parquet)")
    p.add_argument(
        "--attributor", required=True, help="one of: " + ", ".join(commands.attributor_names())
    )
    p.add_argument("--seed", type=int, default=0, help="seed of stochastic attributors")
    llm = p.add_argument_group("LLM protocols (with --model) and tracer_lite")
    llm.add_argument(
        "--model",
        help="LLM protocols: model id: openai/NAME, gemini/NAME, openai-compatible/NAME (with "
        "--base-url) or scripted/standin (offline stand-in, not an LLM); keys come from the "
        "environment. tracer_lite: a fitted model's path (`whowhen fit`; default "
        "results/models/tracer_lite.json, the pipeline's)",
    )
    llm.add_argument("--base-url", help="server URL for openai-compatible models or a proxy")
    llm.add_argument(
        "--structured-output",
        default="json_schema",
        choices=["json_schema", "json_object_schema", "json_object", "none"],
        help="how this server takes a JSON schema (llama.cpp: json_object_schema)",
    )
    llm.add_argument(
        "--with-gold-answer",
        action="store_true",
        help="show the task's correct answer to the attributor",
    )
    llm.add_argument(
        "--with-media",
        action="store_true",
        help="attach the steps' images and frames (image and video trajectories)",
    )
    llm.add_argument(
        "--name",
        help="every attributor: its predictions file and name in `score` (default: the "
        "attributor's; PROTOCOL__MODEL for an LLM protocol)",
    )
    llm.add_argument(
        "--cache-dir", default=defaults.default_cache_dir(), help=defaults.cache_dir_help()
    )
    llm.add_argument(
        "--max-concurrency", type=int, default=section_defaults("llm")["max_concurrency"]
    )
    llm.add_argument("--prices", help=defaults.PRICES_HELP)
    llm.add_argument("--cost-limit", type=float, help="stop new calls past this many USD")
    llm.add_argument(
        "--batch",
        action="store_true",
        help="use the OpenAI Batch API (half "
        "price); rerun the same command to resume an unfinished batch",
    )
    llm.add_argument(
        "--batch-poll",
        type=float,
        default=float(section_defaults("llm")["batch_poll_s"]),
        metavar="SECONDS",
    )
    p.set_defaults(func=commands.attribute_cmd)


def _add_score_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score every attributor run on a dataset")
    p.add_argument("data", metavar="OUT", help="dataset folder with predictions/")
    p.add_argument("--tolerance", type=int, default=3, help="also report step within ±K")
    p.add_argument(
        "--scoring",
        choices=["both", "exact", "substring"],
        default="both",
        help="exact matching, the original Who&When substring scorer (to compare with "
        "published numbers), or both side by side (default)",
    )
    p.add_argument(
        "--covered-only",
        action="store_true",
        help="score only the labelled runs each attributor predicted (default: a labelled "
        "run without a prediction counts as wrong; the table's `missing` counts them)",
    )
    p.add_argument("--json", metavar="PATH", help="where to write scores (default OUT/scores.json)")
    p.set_defaults(func=scoring.score_cmd)


def _add_show_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("show", help="print one trajectory with gold and predicted steps")
    p.add_argument("run_id", metavar="RUN_ID", help="a run id, or a unique prefix of one")
    p.add_argument(
        "--data",
        action="append",
        metavar="DIR",
        help="dataset folder(s) to search (default: results/dataset and results/imports/*)",
    )
    p.set_defaults(func=commands.show_cmd)


def _add_config_parsers(sub: argparse._SubParsersAction) -> None:
    """The maintenance commands: `check-config` and `dvc-yaml`."""
    p = sub.add_parser("check-config", help="validate a pipeline config file")
    p.add_argument("path", nargs="?", default="config/config.yaml")
    p.set_defaults(func=commands.check_config_cmd)

    p = sub.add_parser("dvc-yaml", help="regenerate dvc.yaml from the Snakemake workflow")
    p.add_argument("--check", action="store_true", help="only check it is up to date")
    p.set_defaults(func=commands.dvc_yaml_cmd)


PIPE_CLOSED = 141
"""Exit status when the reader of stdout went away (`whowhen score DATA | head -3`):
128 + SIGPIPE, what a shell reports for a command that a closed pipe stopped (as `yes |
head`), so `set -o pipefail` can tell that the output was cut short."""


def main(argv: list[str] | None = None) -> int:
    """Run one command; everything it prints goes out inert (`terminal.inert`): data
    quoted in a trajectory, a table or an error line cannot drive the terminal."""
    with inert_output():
        argv, program = record_cmd.split_program(sys.argv[1:] if argv is None else list(argv))
        args = build_parser().parse_args(argv)
        if program is not None:
            args.command = program
        try:
            code = args.func(args)
            sys.stdout.flush()  # here, not at exit, where a closed pipe would print a traceback
            return code
        except WhowhenError as exc:
            for line in str(exc).splitlines() or [""]:  # one line per problem (a mapping's)
                print(f"error: {line}", file=sys.stderr)
            return 1
        except BrokenPipeError:
            return _pipe_closed()


def _pipe_closed() -> int:
    """Quiet exit after a closed pipe: stdout now writes to devnull, so the interpreter's
    final flush of what is still buffered cannot raise again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        with contextlib.suppress(AttributeError, OSError, ValueError):  # no file (a test's)
            os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
    return PIPE_CLOSED


if __name__ == "__main__":
    raise SystemExit(main())
