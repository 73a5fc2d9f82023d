"""`whowhen fit` and tracer-lite in `whowhen attribute`: train the CPU attributor on any
labelled dataset (built or imported), see its cross-validated accuracy, and use it."""

from __future__ import annotations

import argparse

import polars as pl

from whowhen.defaults import section_defaults


def add_fit_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fit",
        help="train tracer-lite on a labelled dataset (built or imported), with k-fold "
        "cross-validated accuracy",
    )
    p.add_argument("data", metavar="DATASET", help="dataset folder (runs/steps/labels.parquet)")
    p.add_argument("--attributor", default="tracer_lite", choices=["tracer_lite"])
    p.add_argument("-o", "--out", required=True, metavar="MODEL", help="where the model goes")
    p.add_argument(
        "--split",
        default="auto",
        help="labels to train on: a split name, 'all', or 'auto' (default: the train split "
        "when there is one, else every label)",
    )
    p.add_argument("--folds", type=int, default=5, help="k of k-fold CV by task; 0: no CV")
    p.add_argument(
        "--features",
        choices=["transfer", "full"],
        default=section_defaults("attribution.tracer")["features"],
        help="transfer: template-independent cues only (default); full: also hashed words "
        "(fits one system's logs closely, transfers poorly)",
    )
    p.add_argument("--seed", type=int, default=section_defaults("attribution.tracer")["seed"])
    p.set_defaults(func=fit_cmd)


def fit_cmd(args: argparse.Namespace) -> int:
    # deferred: a subcommand loads only the code it runs
    from whowhen.attribution.tracer import TracerConfig, fit
    from whowhen.attribution.tracer_cv import cross_validate, training_labels
    from whowhen.cli.commands import _load, format_table

    tables = _load(args.data)
    labels, what = training_labels(tables["labels"], args.split)
    config = TracerConfig.of(features=args.features, seed=args.seed)
    print(f"tracer_lite ({args.features} features): {labels.height} labels ({what})")
    if args.folds:
        oof = cross_validate(tables["runs"], tables["steps"], labels, config, args.folds)
        print(f"\n{args.folds}-fold cross-validation by task (out-of-fold predictions)")
        print(format_table(cv_table(oof, tables["runs"])))
    model = fit(tables["runs"], tables["steps"], labels, config)
    out = model.save(args.out)
    print(f"\nfitted on {model.n_train_runs} runs -> {out}")
    return 0


def cv_table(oof: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """Step and agent accuracy with Wilson 95% intervals beside random's expectation, per
    dataset (benchmark/subset) and over all when there are several."""
    # deferred: a subcommand loads only the code it runs
    from whowhen.analysis.items import dataset_name

    named = oof.join(
        runs.select(
            "run_id",
            dataset_name(),
        ),
        on="run_id",
    )
    groups = [(d, named.filter(pl.col("dataset") == d)) for d in sorted(set(named["dataset"]))]
    if len(groups) > 1:
        groups.append(("all", named))
    rows = []
    for name, g in groups:
        n = g.height
        rows.append(
            {
                "dataset": name,
                "n": n,
                "step_acc": interval(int(g["step_ok"].sum()), n),
                "random_step": f"{g['random_step_chance'].mean():.3f}",
                "agent_acc": interval(int(g["agent_ok"].sum()), n),
                "random_agent": f"{g['random_agent_chance'].mean():.3f}",
            }
        )
    return pl.DataFrame(rows)


def interval(hits: int, n: int) -> str:
    """`0.333 [0.121, 0.646]`: a share with its Wilson 95% interval."""
    # deferred: a subcommand loads only the code it runs (the dataset stage's audit)
    from whowhen.dataset.audit import wilson

    if n == 0:
        return "-"
    lo, hi = wilson(hits, n)
    return f"{hits / n:.3f} [{lo:.3f}, {hi:.3f}]"
