# Stage 2: counterfactual replay of every natural failure (which step was decisive) and
# the offline mode classifier (what kind of error it was).


rule replay:
    input:
        runs=rules.rollouts.output.runs,
        steps=rules.rollouts.output.steps,
        exchanges=rules.rollouts.output.exchanges,
    output:
        probes="results/replay/{benchmark}/{system}/probes.parquet",
        decisive="results/replay/{benchmark}/{system}/decisive.parquet",
    params:
        bench=bench_config,
        seed=config["seed"],
        rollouts=config["rollouts"],
        replay=config["replay"],
        agents=config["agents"],
        llm=config["llm"],
        models=config["models"],
    priority: shard_priority
    log:
        "logs/replay/{benchmark}/{system}.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/replay.py"


rule replay_all:
    input:
        shard_paths("results/replay/{benchmark}/{system}/decisive.parquet"),
