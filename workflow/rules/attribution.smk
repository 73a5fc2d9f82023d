# Stage 5: one prediction per (trajectory, attributor), on every dataset.


rule tracer_fit:
    input:
        runs=rules.dataset.output.runs,
        steps=rules.dataset.output.steps,
        labels=rules.dataset.output.labels,
        imported_runs=expand("results/imports/{d}/runs.parquet", d=TRACER_IMPORTS),
        imported_steps=expand("results/imports/{d}/steps.parquet", d=TRACER_IMPORTS),
        imported_labels=expand("results/imports/{d}/labels.parquet", d=TRACER_IMPORTS),
    output:
        model="results/models/tracer_lite.json",
        built_model="results/models/tracer_lite_built.json",
        held_out="results/models/tracer_lite.oof.parquet",
        lifts="results/models/tracer_lite.lifts.parquet",  # the report's built-versus-real
    priority: 2  # the tracer_lite attribution and the feedback loop wait for it
    params:
        tracer=config["attribution"]["tracer"],
        imported=TRACER_IMPORTS,
    log:
        "logs/attribution/tracer_fit.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/tracer_fit.py"


rule attribution:
    input:
        runs=lambda w: f"{DATASETS[w.dataset]}/runs.parquet",
        steps=lambda w: f"{DATASETS[w.dataset]}/steps.parquet",
        labels=lambda w: f"{DATASETS[w.dataset]}/labels.parquet",
        tracer_model=lambda w: (
            f"results/models/{w.attributor}.json"
            if attributor_needs(w.attributor, "needs_tracer_model")
            else []
        ),
    output:
        predictions="results/predictions/{dataset}/{attributor}.parquet",
    priority: attribution_priority  # the replay oracle first; imports fill idle cores
    params:
        attribution=config["attribution"],
        models=config["models"],
        llm=config["llm"],
        taxonomy=config["taxonomy"]["file"],
        benchmarks=config["benchmarks"],
        seed=config["seed"],
        replay=config["replay"],
    log:
        "logs/attribution/{dataset}/{attributor}.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/attribution.py"


rule attribution_all:
    input:
        predictions=PREDICTION_PATHS,
        model=rules.tracer_fit.output.model,  # always fitted: a stage output DVC tracks
