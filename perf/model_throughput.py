"""Throughput of the model client: a sequential loop vs bounded concurrency.

300 attribution-sized requests against the scripted test server answering after a
fixed latency (200 ms by default), through the real `openai` client over HTTP; no
cache, so every request is a call. Prints both wall times and the speed-up.

    python perf/model_throughput.py [--requests 300] [--latency 0.2] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import time

from whowhen.models import ChatRequest, Message, ModelClient, load_prices, parse_model
from whowhen.standin.server import Behaviour, TestServer


def requests(n: int) -> list[ChatRequest]:
    steps = "\n".join(
        f"[{i}] {'solver' if i % 2 else 'verifier'} (action): step text {i}" for i in range(1, 20)
    )
    return [
        ChatRequest(
            (
                Message.text("system", "Find the decisive error."),
                Message.text("user", f"Task {k}\nTrajectory:\n{steps}"),
            )
        )
        for k in range(n)
    ]


def timed(server: TestServer, concurrency: int, reqs: list[ChatRequest]) -> tuple[float, int]:
    spec = parse_model(
        "openai-compatible/mock", {"openai-compatible/mock": {"base_url": server.url}}
    )
    client = ModelClient(
        spec,
        load_prices(),  # the packaged table
        None,
        max_concurrency=concurrency,
        progress=False,
    )
    start = time.perf_counter()
    results = client.complete(reqs)
    return time.perf_counter() - start, sum(r.ok for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    reqs = requests(args.requests)
    with TestServer(Behaviour(latency_s=args.latency)) as server:
        seq, ok_seq = timed(server, 1, reqs)
        par, ok_par = timed(server, args.concurrency, reqs)
    print(f"requests: {args.requests}, server latency: {args.latency * 1000:.0f} ms")
    print(
        f"sequential (concurrency 1):   {seq:7.2f} s  {args.requests / seq:7.1f} calls/s  "
        f"({ok_seq} ok)"
    )
    print(
        f"concurrent (concurrency {args.concurrency}): {par:7.2f} s  "
        f"{args.requests / par:7.1f} calls/s  ({ok_par} ok)"
    )
    print(f"speed-up: {seq / par:.1f}x (goal >= 30x)")


if __name__ == "__main__":
    main()
