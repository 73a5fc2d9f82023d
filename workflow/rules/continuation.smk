# Stage 4: warm-start every injection, label the flipped runs, build the dataset.

PART = "results/continuation/{benchmark}/{system}/{table}.parquet"


rule continuation:
    input:
        injections=rules.injection.output.injections,
        runs=rules.rollouts.output.runs,
        steps=rules.rollouts.output.steps,
        slips=rules.rollouts.output.slips,
        exchanges=rules.rollouts.output.exchanges,
    output:
        **{t: PART.replace("{table}", t) for t in ("runs", "steps", "continuations", "labels")},
    params:
        bench=bench_config,
        seed=config["seed"],
        continuation=config["continuation"],
        rollouts=config["rollouts"],
        agents=config["agents"],
        models=config["models"],
        llm=config["llm"],
    priority: shard_priority
    log:
        "logs/continuation/{benchmark}/{system}.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/continuation.py"


rule dataset:
    input:
        **{
            t: shard_paths(PART.replace("{table}", t))
            for t in ("runs", "steps", "continuations", "labels")
        },
    output:
        runs="results/dataset/runs.parquet",
        steps="results/dataset/steps.parquet",
        labels="results/dataset/labels.parquet",
        continuations="results/continuation/continuations.parquet",
        audit=report(
            "results/audit/leakage.csv",
            caption="../report/leakage_audit.rst",
            category="Dataset",
        ),
    params:
        continuation=config["continuation"],
        dataset=config.get("dataset", {}),
    log:
        "logs/dataset.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/dataset.py"


rule continuation_all:
    input:
        rules.dataset.output,
