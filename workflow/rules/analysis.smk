# Stage 6: DuckDB tables and seaborn figures, DVC metrics and plots, the HTML report, one
# viewer page per labelled trajectory, and the notebooks executed and rendered to HTML.
from whowhen.analysis.outputs import FIGURES, TABLES

NOTEBOOKS = ["dataset", "attribution"]


rule analysis:
    input:
        labels=dataset_paths("labels"),
        runs=dataset_paths("runs"),
        steps=dataset_paths("steps"),
        continuations=rules.dataset.output.continuations,
        audit=rules.dataset.output.audit,
        overview=rules.taxonomy.output.overview,
        mode_overview=rules.taxonomy.output.mode_overview,
        replay_check=rules.taxonomy.output.replay_check,
        agreement=rules.taxonomy.output.agreement,
        candidates=rules.taxonomy.output.candidates,
        predictions=rules.attribution_all.input.predictions,
        tracer_model=rules.tracer_fit.output.model,  # what tracer-lite learned from
        lifts=rules.tracer_fit.output.lifts,
        feedback=feedback_paths("attempts"),  # [] when config `feedback` selects no pair
        rollouts=shard_paths("results/rollouts/{benchmark}/{system}/runs.parquet"),
        infra=shard_paths("results/rollouts/{benchmark}/{system}/infra.parquet"),
    output:
        metrics="results/metrics.json",
        accuracy="results/analysis/accuracy.csv",
        funnel="results/analysis/funnel.csv",
        expected="results/analysis/random_expected.csv",
        breakdown="results/analysis/attribution_metrics.csv",
        timing="results/analysis/timing.csv",  # wall-clock latency: differs on every run
        frameworks="results/analysis/frameworks.csv",  # header only without framework systems
        infra="results/analysis/infra.csv",  # runs an infrastructure failure stopped
        plot_accuracy="results/analysis/plots/step_accuracy.csv",
        plot_cost="results/analysis/plots/cost_performance.csv",
        **{f"table_{name}": f"results/analysis/tables/{name}.parquet" for name in TABLES},
        **{
            f"figure_{name}": report(
                f"reports/figures/{name}.png",
                caption=f"../report/{name}.rst",
                category=category,
            )
            for name, category in FIGURES.items()
        },
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


rule viewer:
    input:
        labels=dataset_paths("labels"),
        runs=dataset_paths("runs"),
        steps=dataset_paths("steps"),
        predictions=rules.attribution_all.input.predictions,
    output:
        # not a report() item: Snakemake bundles folders only into a .zip report, and the
        # HTML report must stay one file; reports/report.html links these pages instead
        pages=directory("reports/trajectories"),
    params:
        datasets=list(DATASETS),
    log:
        "logs/viewer.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/viewer.py"


rule notebook:
    input:
        notebook="notebooks/{notebook}.ipynb",
        analysis=rules.analysis.output,
    output:
        html=report(
            "reports/notebooks/{notebook}.html",
            caption="../report/notebook.rst",
            category="Notebooks",
        ),
    params:
        # values for the notebook's `parameters` cell (the rest keep their defaults)
        parameters=lambda w: (
            {"split": config["analysis"]["figure_split"]}
            if w.notebook == "attribution"
            else {}
        ),
    log:
        "logs/notebooks/{notebook}.log",
    conda:
        "../../envs/whowhen.yaml"
    script:
        "../scripts/render_notebook.py"


rule analysis_all:
    input:
        rules.analysis.output,
        rules.viewer.output,
        expand("reports/notebooks/{notebook}.html", notebook=NOTEBOOKS),
