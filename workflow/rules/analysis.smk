# Stage 6: DuckDB scores, DVC metrics, figure and the rendered report.


rule analysis:
    input:
        labels=dataset_paths("labels"),
        runs=dataset_paths("runs"),
        steps=dataset_paths("steps"),
        continuations=rules.dataset.output.continuations,
        overview=rules.taxonomy.output.overview,
        mode_overview=rules.taxonomy.output.mode_overview,
        replay_check=rules.taxonomy.output.replay_check,
        agreement=rules.taxonomy.output.agreement,
        candidates=rules.taxonomy.output.candidates,
        predictions=rules.attribution_all.input.predictions,
    output:
        metrics="results/metrics.json",
        accuracy="results/analysis/accuracy.csv",
        funnel="results/analysis/funnel.csv",
        expected="results/analysis/random_expected.csv",
        breakdown="results/analysis/attribution_metrics.csv",
        figure=report(
            "reports/figures/accuracy.png",
            caption="../report/accuracy.rst",
            category="Attribution",
        ),
        modes_figure=report(
            "reports/figures/modes.png",
            caption="../report/modes.rst",
            category="Natural failures",
        ),
        report="reports/report.html",
    params:
        analysis=config["analysis"],
        datasets=list(DATASETS),
        systems=config["systems"],
        attributors=ATTRIBUTORS,
        attribution=config["attribution"],
        models=config["models"],
        llm=config["llm"],
    log:
        "logs/analysis.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/analysis.py"
