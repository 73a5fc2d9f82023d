# Stage 7: the attribution feedback loop. Every originally failed rollout of a configured
# (benchmark, system) is rerun for R rounds per feedback source (config `feedback`).


rule feedback:
    input:
        runs="results/rollouts/{benchmark}/{system}/runs.parquet",
        steps="results/rollouts/{benchmark}/{system}/steps.parquet",
        tracer_model=(
            rules.tracer_fit.output.model
            if any(attributor_needs(s, "needs_tracer_model") for s in config["feedback"]["sources"])
            else []
        ),
    output:
        attempts="results/feedback/{benchmark}/{system}/attempts.parquet",
        runs="results/feedback/{benchmark}/{system}/runs.parquet",
        steps="results/feedback/{benchmark}/{system}/steps.parquet",
    params:
        feedback=config["feedback"],
        bench=bench_config,
        benchmarks=config["benchmarks"],
        seed=config["seed"],
        rollouts=config["rollouts"],
        replay=config["replay"],
        attribution=config["attribution"],
        agents=config["agents"],
        models=config["models"],
        llm=config["llm"],
        taxonomy=config["taxonomy"]["file"],
    log:
        "logs/feedback/{benchmark}/{system}.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/feedback.py"


rule feedback_all:
    input:
        attempts=feedback_paths("attempts"),
    output:
        manifest="results/feedback/manifest.json",
    params:
        shards=[f"{b}/{s}" for b, s in FEEDBACK_SHARDS],
    log:
        "logs/feedback/manifest.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/feedback_manifest.py"
