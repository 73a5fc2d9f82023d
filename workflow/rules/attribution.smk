# Stage 5: one prediction per (trajectory, attributor).


rule attribution:
    input:
        runs=rules.dataset.output.runs,
        steps=rules.dataset.output.steps,
    output:
        predictions="results/predictions/{attributor}.parquet",
    params:
        attribution=config["attribution"],
    log:
        "logs/attribution/{attributor}.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/attribution.py"


rule attribution_all:
    input:
        expand("results/predictions/{attributor}.parquet", attributor=config["attribution"]["attributors"]),
