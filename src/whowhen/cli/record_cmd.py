"""`whowhen record` and `whowhen replay`: run your own agent program behind the model
gateway, and rerun a recorded run with one step changed."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from whowhen.cli import defaults
from whowhen.defaults import section_defaults
from whowhen.errors import WhowhenError

_RUN = re.compile(r"^run-(\d+)$")


def add_model_options(p: argparse.ArgumentParser, what: str = "the model behind it") -> None:
    """--model, --base-url, --cache-dir, --prices, --max-concurrency."""
    p.add_argument("--model", required=True, help=f"{what} (as for attribute)")
    p.add_argument("--base-url", help="server URL for openai-compatible models")
    p.add_argument(
        "--cache-dir", default=defaults.default_cache_dir(), help=defaults.cache_dir_help()
    )
    p.add_argument("--prices", help=defaults.PRICES_HELP)
    p.add_argument(
        "--max-concurrency", type=int, default=section_defaults("llm")["max_concurrency"]
    )


def add_program_options(p: argparse.ArgumentParser) -> None:
    """--judge, --timeout and the program's command line after `--`."""
    p.add_argument(
        "--judge",
        metavar="CMD",
        help="a shell command that reads the program's stdout on stdin; its exit status "
        "decides the outcome (default: the program's own exit status, 0 = success)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="stop the program after S seconds (outcome: timeout, not a failure)",
    )
    p.set_defaults(command=[])
    p.epilog = "The program's command line comes last, after --: ... -- python agent.py ARGS"


PROGRAM_COMMANDS = ("record", "replay", "blame")


def split_program(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """(whowhen's own arguments, the program's command line) of a command that runs a
    program: everything after the first `--` is the program's, untouched by argparse."""
    if argv[:1] and argv[0] in PROGRAM_COMMANDS and "--" in argv:
        k = argv.index("--")
        return argv[:k], argv[k + 1 :]
    return argv, None


def add_record_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "record",
        help="run your agent program behind the model gateway and record every call",
        description="Run COMMAND with OPENAI_BASE_URL, OPENAI_API_BASE and OPENAI_API_KEY "
        "pointing at a gateway in front of --model, record every model call to "
        "REC/RUN.jsonl and the outcome to REC/RUN.run.json. Agents are told apart by a "
        "path /agent/<name>/v1, an X-Agent-Name header, or their system prompt.",
    )
    p.add_argument("-o", "--out", required=True, metavar="REC", help="recordings folder")
    add_model_options(p)
    p.add_argument("--run-id", help="the run's id (default: the next free run-N in REC)")
    p.add_argument("--append", action="store_true", help="add to an existing run's recording")
    add_program_options(p)
    p.set_defaults(func=_record)

    r = sub.add_parser(
        "replay",
        help="rerun a recorded run with one step replaced: earlier calls from the "
        "recording (checked), later ones live",
    )
    r.add_argument("recordings", metavar="REC", help="recordings folder")
    r.add_argument("run", metavar="RUN", help="the recorded run's id")
    r.add_argument("--at", type=int, required=True, metavar="STEP", help="the step to replace")
    what = r.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--replace",
        metavar="TEXT",
        help="the new step: words, or for a tool call its arguments as a JSON object "
        '(or {"tool": NAME, "arguments": {...}})',
    )
    what.add_argument("--replace-file", metavar="F", help="the new step, read from a file")
    r.add_argument("-o", "--out", required=True, metavar="REC2", help="where the new run goes")
    r.add_argument(
        "--volatile",
        action="append",
        default=[],
        metavar="PATH",
        help="a request field that may differ from the recording (dotted, * for any "
        "item: messages.*.timestamp); repeatable",
    )
    add_model_options(r, "the live model after the replaced step")
    add_program_options(r)
    r.set_defaults(func=_replay)

    b = sub.add_parser(
        "blame",
        help="find the decisive step of a failed recorded run: a model corrects each agent "
        "step in turn, and the program is replayed until one correction flips it",
    )
    b.add_argument("recordings", metavar="REC", help="recordings folder")
    b.add_argument("run", metavar="RUN", help="the failed run's id")
    add_model_options(b, "the model that writes corrections")
    b.add_argument(
        "--agent-model",
        help="the live model of the replays after the corrected step (default: --model)",
    )
    b.add_argument(
        "--max-replays", type=int, default=20, help="stop after this many replays (default 20)"
    )
    b.add_argument(
        "--labels",
        metavar="FILE",
        help="the labels CSV the decisive step is written to (default: REC/labels.csv); "
        "whowhen import gateway REC --labels FILE reads it",
    )
    b.add_argument("--volatile", action="append", default=[], metavar="PATH",
                   help="as for replay")  # fmt: skip
    add_program_options(b)
    b.set_defaults(func=_blame)


def program_command(args: argparse.Namespace) -> list[str]:
    command = list(args.command)
    if not command:
        raise WhowhenError("no program given: put its command line after --")
    return command


def forward_for(args: argparse.Namespace):
    from whowhen.gateway.forward import client_forward  # deferred: loads the model layer
    from whowhen.models import make_client

    registry = {args.model: {"base_url": args.base_url}} if args.base_url else {}
    llm = {"cache_dir": args.cache_dir, "prices": args.prices, "progress": False,
           "max_concurrency": args.max_concurrency}  # fmt: skip
    client = make_client(args.model, llm, registry)
    return client_forward(client), client


def next_run_id(folder: Path) -> str:
    """`run-N` for the smallest N above every recorded run-N: ids are never reused."""
    taken = [int(m.group(1)) for p in folder.glob("run-*.jsonl") if (m := _RUN.match(p.stem))]
    return f"run-{max(taken, default=0) + 1}"


def summary(run_id: str, session, ended) -> str:
    calls = session.exchanges
    tokens = sum(e.input_tokens + e.output_tokens for e in calls)
    cost = sum(e.cost_usd for e in calls if e.source == "live")
    return (
        f"{run_id}: {len(calls)} calls, {tokens} tokens, ${cost:.4f}, "
        f"{ended.outcome} ({ended.reason})"
    )


def _record(args: argparse.Namespace) -> int:
    from whowhen.gateway.program import run_behind  # deferred: the gateway's server stack
    from whowhen.gateway.recording import Recorder, read_recording, record_path, write_outcome
    from whowhen.gateway.session import Session
    from whowhen.replay.recorded import outcome_record

    command = program_command(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    run_id = args.run_id or next_run_id(out)
    path = record_path(out, run_id)
    first = 0
    if path.exists():
        if not args.append:
            raise WhowhenError(
                f"run {run_id} is already recorded: give another --run-id, or --append",
                path=str(path),
            )
        first = len(read_recording(path).exchanges)
    forward, _ = forward_for(args)
    session = Session(run_id, forward, listener=Recorder(path))
    session.first_index = first
    ended = run_behind(session, command, judge=args.judge, timeout_s=args.timeout)
    if not session.exchanges and first == 0:
        path.unlink(missing_ok=True)
        print(
            f"{run_id}: no model call reached the gateway ({ended.outcome}: {ended.reason}); "
            "does the program read OPENAI_BASE_URL? nothing recorded"
        )
        return 1
    write_outcome(out, run_id, outcome_record(session, ended, command, args.judge,
                                              model=args.model))  # fmt: skip
    print(summary(run_id, session, ended) + f" -> {path}")
    return 0 if ended.success is not None else 1


def _replay(args: argparse.Namespace) -> int:
    from whowhen.replay.recorded import locate, parse_change, replay  # deferred: the gateway

    command = program_command(args)
    located = locate(Path(args.recordings), args.run)
    located.source(args.at)  # an unknown or non-agent step is refused before any work
    text = args.replace
    if args.replace_file is not None:
        text = _read_replacement(Path(args.replace_file))
    change = parse_change(text, located.steps[args.at])
    forward, _ = forward_for(args)
    done = replay(
        located, args.at, change, forward, command, out=Path(args.out), judge=args.judge,
        timeout_s=args.timeout, volatile=tuple(args.volatile),
    )  # fmt: skip
    counts = ", ".join(f"{done.count(s)} {s}" for s in ("replayed", "injected", "live"))
    print(
        f"{summary(args.run, done.session, done.ended)}; calls: {counts} "
        f"-> {Path(args.out) / (args.run + '.jsonl')}"
    )
    return 0 if done.ended.success is not None else 1


MAX_REPLACEMENT_BYTES = 1024 * 1024


def _read_replacement(path: Path) -> str:
    try:
        data = path.read_bytes()[: MAX_REPLACEMENT_BYTES + 1]
    except OSError as exc:
        raise WhowhenError(f"cannot read ({exc.strerror or exc})", path=str(path)) from None
    if len(data) > MAX_REPLACEMENT_BYTES:
        raise WhowhenError(f"over {MAX_REPLACEMENT_BYTES} bytes", path=str(path))
    return data.decode("utf-8", errors="replace").rstrip("\n")


def _blame(args: argparse.Namespace) -> int:
    import sys

    # deferred: the gateway and the model layer
    from whowhen.replay.blame import blame, write_label
    from whowhen.replay.recorded import locate

    command = program_command(args)
    folder = Path(args.recordings)
    located = locate(folder, args.run)
    forward, corrector = forward_for(args)
    if args.agent_model:
        agent = argparse.Namespace(**{**vars(args), "model": args.agent_model})
        forward, _ = forward_for(agent)
    found = blame(
        located, corrector, forward, command, judge=args.judge, timeout_s=args.timeout,
        max_replays=args.max_replays, volatile=tuple(args.volatile),
        progress=lambda line: print(f"  {line}", file=sys.stderr, flush=True),
    )  # fmt: skip
    cost = f"{found.replays} replays, ${found.cost_usd:.4f}"
    decisive = found.decisive
    if decisive is None:
        print(f"{args.run}: {found.status}: {found.reason}; {cost}")
        return 1
    labels = Path(args.labels) if args.labels else folder / "labels.csv"
    write_label(labels, found)
    fix = decisive.corrected or {}
    text = f"{fix['tool']}({fix['arguments']})" if fix.get("tool") else repr(fix.get("content"))
    print(
        f"{args.run}: decisive step {decisive.step} ({decisive.agent}), corrected to "
        f"{text[:300]}; {cost} (corrections ${found.correction_cost_usd:.4f}) -> {labels}"
    )
    return 0
