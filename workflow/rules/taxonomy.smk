# Stage 2: validate the failure taxonomy and summarise the natural failures.


rule taxonomy:
    input:
        runs=shard_paths("results/rollouts/{benchmark}/{system}/runs.parquet"),
        steps=shard_paths("results/rollouts/{benchmark}/{system}/steps.parquet"),
        slips=shard_paths("results/rollouts/{benchmark}/{system}/slips.parquet"),
        taxonomy=config["taxonomy"]["file"],
    output:
        taxonomy="results/taxonomy/taxonomy.yaml",
        overview="results/taxonomy/overview.parquet",
        annotations="results/taxonomy/annotations.parquet",
        mode_overview="results/taxonomy/mode_overview.parquet",
    params:
        taxonomy=config["taxonomy"],
        models=config["models"],
        llm=config["llm"],
    log:
        "logs/taxonomy.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/taxonomy.py"
