# Stage 1: run every agent system on every task and record runs + steps.


rule rollouts:
    output:
        runs="results/rollouts/{benchmark}/{system}/runs.parquet",
        steps="results/rollouts/{benchmark}/{system}/steps.parquet",
        slips="results/rollouts/{benchmark}/{system}/slips.parquet",
        exchanges="results/rollouts/{benchmark}/{system}/exchanges.parquet",
        infra="results/rollouts/{benchmark}/{system}/infra.parquet",
    params:
        bench=bench_config,
        seed=config["seed"],
        rollouts=config["rollouts"],
        agents=config["agents"],
        models=config["models"],
        llm=config["llm"],
    priority: shard_priority
    log:
        "logs/rollouts/{benchmark}/{system}.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/rollouts.py"


rule rollouts_all:
    input:
        shard_paths("results/rollouts/{benchmark}/{system}/runs.parquet"),
