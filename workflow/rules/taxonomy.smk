# Stage 3: validate the failure taxonomy and summarise the natural failures: overview,
# modes of the decisive errors, replay and classifier checks, candidate new modes.


rule taxonomy:
    input:
        runs=shard_paths("results/rollouts/{benchmark}/{system}/runs.parquet"),
        steps=shard_paths("results/rollouts/{benchmark}/{system}/steps.parquet"),
        slips=shard_paths("results/rollouts/{benchmark}/{system}/slips.parquet"),
        decisive=shard_paths("results/replay/{benchmark}/{system}/decisive.parquet"),
        probes=shard_paths("results/replay/{benchmark}/{system}/probes.parquet"),
        taxonomy=config["taxonomy"]["file"],
    output:
        taxonomy="results/taxonomy/taxonomy.yaml",
        overview="results/taxonomy/overview.parquet",
        annotations="results/taxonomy/annotations.parquet",
        mode_overview="results/taxonomy/mode_overview.parquet",
        replay_check="results/taxonomy/replay_check.parquet",
        agreement="results/taxonomy/agreement.parquet",
        candidates="results/taxonomy/candidates.parquet",
    params:
        taxonomy=config["taxonomy"],
        seed=config["seed"],
        models=config["models"],
        llm=config["llm"],
    log:
        "logs/taxonomy.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/taxonomy.py"
