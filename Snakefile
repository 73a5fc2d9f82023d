# whowhen workflow: a thin Snakefile. Stages live in workflow/rules/<stage>.smk and call
# the package through workflow/scripts/<stage>.py; config is validated before any rule.
import sys

from snakemake.utils import min_version

from whowhen.config import check_files, validate_config
from whowhen.errors import WhowhenError

min_version("9.0")


configfile: "config/config.yaml"


try:
    _source = ", ".join(map(str, workflow.configfiles)) or "config"
    validate_config(config, source=_source)
    check_files(config, source=_source)
except WhowhenError as exc:
    sys.exit(f"error: {exc}")


include: "workflow/rules/common.smk"
include: "workflow/rules/rollouts.smk"
include: "workflow/rules/replay.smk"
include: "workflow/rules/taxonomy.smk"
include: "workflow/rules/injection.smk"
include: "workflow/rules/continuation.smk"
include: "workflow/rules/imports.smk"
include: "workflow/rules/attribution.smk"
include: "workflow/rules/feedback.smk"
include: "workflow/rules/analysis.smk"


rule all:
    input:
        (
            rules.dataset.output
            if config.get("build", "all") == "dataset"
            else [rules.analysis_all.input, rules.imports_all.output, rules.feedback_all.output]
        ),
    default_target: True
