"""Injection stage: one taxonomy-grounded error per planned trajectory."""

from whowhen.injection import plan as plan_module
from whowhen.injection.operators import OPERATORS, random_slip
from whowhen.injection.plan import candidate_steps, plan_injections

__all__ = ["OPERATORS", "candidate_steps", "plan_injections", "random_slip"]


def stage(params: dict, inputs: object, outputs: object, wildcards: object) -> None:
    """Snakemake edge: plan the injections of one (benchmark, system) shard."""
    from whowhen.schema import INJECTIONS, RUNS, STEPS, read_table, write_table
    from whowhen.taxonomy import load_taxonomy

    cfg = params["injection"]
    generator = plan_module.programmatic
    if cfg.get("generator", "programmatic") != "programmatic":
        from whowhen.injection.llm_generator import LLMErrorGenerator
        from whowhen.models import make_client

        generator = LLMErrorGenerator(
            make_client(cfg["generator"], {**params["llm"], "progress": False}, params["models"])
        )
    planned = plan_injections(
        read_table(inputs["runs"], RUNS),
        read_table(inputs["steps"], STEPS),
        load_taxonomy(inputs["taxonomy"]),
        cfg["seed"],
        cfg["per_run"],
        cfg.get("modes") or None,
        generator,
    )
    write_table(planned, INJECTIONS, outputs["injections"])
