# Stage 2: validate the failure taxonomy and summarise the natural failures.


rule taxonomy:
    input:
        runs=shard_paths("results/rollouts/{benchmark}/{system}/runs.parquet"),
        taxonomy=config["taxonomy"]["file"],
    output:
        taxonomy="results/taxonomy/taxonomy.yaml",
        overview="results/taxonomy/overview.parquet",
    log:
        "logs/taxonomy.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/taxonomy.py"
