#!/usr/bin/env bash
# Cancel jobs started by scripts/local-submit.sh (`cluster-generic-cancel-cmd`): the plugin
# calls it without a shell, as `scripts/local-cancel.sh JOBID...`, when Snakemake is
# interrupted. Each job is its own process group (setsid), so the whole group is stopped.
set -uo pipefail

for pid in "$@"; do
    kill -TERM -- "-$pid" 2> /dev/null || kill -TERM "$pid" 2> /dev/null || true
done
exit 0
