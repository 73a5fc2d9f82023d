# whowhen workflow: a thin Snakefile. Stages live in workflow/rules/<stage>.smk and call
# the package through workflow/scripts/<stage>.py; config is validated before any rule.
import os
import sys

from snakemake.utils import min_version

from whowhen.config import check_config_file, check_files, validate_config
from whowhen.errors import WhowhenError

min_version("9.0")

# Snakemake's loader takes YAML aliases without a bound and its merge walks what they
# stand for: the config file is checked with the bounded loader before `configfile:`
# merges it (an alias bomb is one line). Files given with --configfile were merged
# before this file runs; validate_config bounds what they hold.
try:
    for _file in ["config/config.yaml", *workflow.overwrite_configfiles]:
        if os.path.exists(_file):
            check_config_file(_file)
except WhowhenError as exc:
    sys.exit(f"error: {exc}")


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
