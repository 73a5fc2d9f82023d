"""`whowhen gateway`: put your own agent or framework behind the model gateway and record
every model call of every run, one JSONL file per run id."""

from __future__ import annotations

import argparse
import json
import threading
import time
from pathlib import Path

from whowhen.gateway.exchange import Exchange
from whowhen.gateway.forward import client_forward
from whowhen.gateway.server import Gateway, check_name
from whowhen.gateway.session import Session


def exchange_record(exchange: Exchange) -> dict:
    """One recorded call as a JSON line: who asked what, what was answered, at what cost."""
    return {
        "index": exchange.index,
        "agent": exchange.agent,
        "request": exchange.request,
        "message": exchange.message,
        "source": exchange.source,
        "input_tokens": exchange.input_tokens,
        "output_tokens": exchange.output_tokens,
        "cost_usd": exchange.cost_usd,
        "cached": exchange.cached,
    }


def record_path(out: Path, run_id: str) -> Path:
    """The recording of run `run_id` in `out`: a plain file name, never a path elsewhere
    (the gateway refuses other run ids before they get here; this holds without it)."""
    return out / f"{check_name('run id', run_id)}.jsonl"


def gateway_cmd(args: argparse.Namespace) -> int:
    from whowhen.models import make_client  # deferred: a subcommand loads what it runs

    registry = {args.model: {"base_url": args.base_url}} if args.base_url else {}
    llm = {"cache_dir": args.cache_dir, "prices": args.prices, "progress": False,
           "max_concurrency": args.max_concurrency}  # fmt: skip
    client = make_client(args.model, llm, registry)
    forward = client_forward(client)
    out = Path(args.record)
    out.mkdir(parents=True, exist_ok=True)
    write = threading.Lock()

    def session(run_id: str) -> Session:
        path = record_path(out, run_id)

        def record(exchange: Exchange) -> None:
            with write, path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(exchange_record(exchange), sort_keys=True) + "\n")

        return Session(run_id, forward, listener=record)

    server = Gateway(args.port, factory=session)
    print(
        f"gateway for {args.model} on http://127.0.0.1:{server.port}/run/<run id>/<agent>/v1 "
        f"(any API key); recording to {out}/<run id>.jsonl; Ctrl-C stops",
        flush=True,
    )
    try:
        with server:  # served from a background thread; this one waits for Ctrl-C
            while True:  # timed sleeps: Ctrl-C is seen even when the server's thread got it
                time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        stats = client.stats
        print(f"{stats.calls} calls, {stats.cache_hits} cache hits, ${stats.spent_usd:.4f} spent")
    return 0
