# Stage 3: plan one taxonomy-grounded error per chosen step of each successful rollout.


rule injection:
    input:
        runs="results/rollouts/{benchmark}/{system}/runs.parquet",
        steps="results/rollouts/{benchmark}/{system}/steps.parquet",
        # uncalibrated (calibrate 0): the configured taxonomy, no natural-failure overview
        **(
            {
                "taxonomy": rules.taxonomy.output.taxonomy,
                "mode_overview": rules.taxonomy.output.mode_overview,
            }
            if config["injection"].get("calibrate", 1.0) > 0
            else {"taxonomy": config["taxonomy"]["file"]}
        ),
    output:
        injections="results/injection/{benchmark}/{system}/injections.parquet",
    params:
        injection=config["injection"],
        benchmarks=list(config["benchmarks"]),
        models=config["models"],
        llm=config["llm"],
    priority: shard_priority
    log:
        "logs/injection/{benchmark}/{system}.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/injection.py"


rule injection_all:
    input:
        shard_paths("results/injection/{benchmark}/{system}/injections.parquet"),
