# Shared helpers: the (benchmark, system) shards and the per-shard path patterns.

SHARDS = [(b, s) for b in sorted(config["benchmarks"]) for s in config["systems"]]


def shard_paths(pattern):
    """Expand a {benchmark}/{system} pattern over every configured shard."""
    return [pattern.format(benchmark=b, system=s) for b, s in SHARDS]


def bench_config(wildcards):
    return config["benchmarks"][wildcards.benchmark]


wildcard_constraints:
    benchmark="[a-z_]+",
    system="[a-z_]+",
    attributor="[a-z_]+",
