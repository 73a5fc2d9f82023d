# Stage 5: one prediction per (trajectory, attributor), on every dataset.


rule attribution:
    input:
        runs=lambda w: f"{DATASETS[w.dataset]}/runs.parquet",
        steps=lambda w: f"{DATASETS[w.dataset]}/steps.parquet",
        labels=lambda w: f"{DATASETS[w.dataset]}/labels.parquet",
    output:
        predictions="results/predictions/{dataset}/{attributor}.parquet",
    params:
        attribution=config["attribution"],
        models=config["models"],
        llm=config["llm"],
        taxonomy=config["taxonomy"]["file"],
    log:
        "logs/attribution/{dataset}/{attributor}.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/attribution.py"


rule attribution_all:
    input:
        expand(
            "results/predictions/{dataset}/{attributor}.parquet",
            dataset=DATASETS,
            attributor=ATTRIBUTORS,
        ),
