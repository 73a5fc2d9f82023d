# Imported datasets (Who&When, a user's own logs): first-class inputs of attribution and
# analysis, beside the built dataset.


rule imports:
    input:
        import_source,
    output:
        runs="results/imports/{dataset}/runs.parquet",
        steps="results/imports/{dataset}/steps.parquet",
        labels="results/imports/{dataset}/labels.parquet",
        manifest="results/imports/{dataset}/manifest.json",
    params:
        spec=import_spec,
    priority: -1  # fills idle cores (the built dataset's stages come first)
    log:
        "logs/imports/{dataset}.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/imports.py"


rule imports_all:
    input:
        runs=expand("results/imports/{dataset}/runs.parquet", dataset=IMPORTS),
        labels=expand("results/imports/{dataset}/labels.parquet", dataset=IMPORTS),
    output:
        manifest="results/imports/manifest.json",
    params:
        names=list(IMPORTS),
    log:
        "logs/imports/manifest.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/imports_manifest.py"
