"""`whowhen gateway`: put your own agent or framework behind the model gateway and record
every model call of every run, one JSONL file per run id."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from whowhen.gateway.forward import client_forward
from whowhen.gateway.program import Interrupted, stop_signals
from whowhen.gateway.recording import Recorder, record_path
from whowhen.gateway.server import Gateway, RunTaken
from whowhen.gateway.session import Session


def gateway_cmd(args: argparse.Namespace) -> int:
    from whowhen.models import make_client  # deferred: a subcommand loads what it runs

    registry = {args.model: {"base_url": args.base_url}} if args.base_url else {}
    llm = {"cache_dir": args.cache_dir, "prices": args.prices, "progress": False,
           "max_concurrency": args.max_concurrency}  # fmt: skip
    client = make_client(args.model, llm, registry)
    forward = client_forward(client)
    out = Path(args.record)
    out.mkdir(parents=True, exist_ok=True)

    def session(run_id: str) -> Session:
        path = record_path(out, run_id)
        if path.exists():  # recorded by an earlier gateway: two runs must not merge
            raise RunTaken(f"run {run_id} is already recorded in {path}: give each run its "
                           "own id")  # fmt: skip
        return Session(run_id, forward, listener=Recorder(path))

    server = Gateway(args.port, factory=session)
    try:
        with stop_signals(), server:  # served from a background thread; this one waits
            print(
                f"gateway for {args.model} on http://127.0.0.1:{server.port}/run/<run id>/"
                f"<agent>/v1 (any API key); recording to {out}/<run id>.jsonl; Ctrl-C or "
                "SIGTERM stops",
                flush=True,
            )
            while True:  # timed sleeps: a signal is seen even when the server's thread got it
                time.sleep(0.5)
    except (Interrupted, KeyboardInterrupt):
        pass
    finally:
        stats = client.stats
        print(f"{stats.calls} calls, {stats.cache_hits} cache hits, ${stats.spent_usd:.4f} spent")
    return 0
