#!/usr/bin/env bash
# Status of a job started by scripts/local-submit.sh, for the cluster-generic plugin's
# `cluster-generic-status-cmd`: it runs `<status-cmd> '<job id>'` in the workflow's
# directory and needs exactly one line, `running`, `success` or `failed`.
#
#   exit code recorded          -> success (0) or failed (anything else)
#   no exit code, process alive -> running (same PID and start time as submitted)
#   no exit code, process gone  -> failed (killed: OOM, kill -9, cancel), never a hang
set -euo pipefail

pid="${1:?usage: $0 JOBID}"
state="${LOCAL_CLUSTER_DIR:-.snakemake/local-cluster}"

alive() {  # the submitted process still runs: not gone, no zombie, not a reused PID
    local stat
    stat="$(ps -o stat= -p "$pid" 2> /dev/null)" || return 1
    [[ -n "$stat" && "$stat" != Z* ]] || return 1
    [[ "$(ps -o lstart= -p "$pid" 2> /dev/null)" == "$(cat "$jobdir/started")" ]]
}

finished() {  # print the outcome if the exit code is recorded
    [[ -f "$jobdir/exit" ]] || return 1
    if [[ "$(cat "$jobdir/exit")" == 0 ]]; then echo success; else echo failed; fi
}

if [[ ! -f "$state/pids/$pid" ]]; then
    echo failed  # not submitted from this directory
    exit 0
fi
jobdir="$(cat "$state/pids/$pid")"
finished && exit 0
if alive; then
    echo running
else
    finished || echo failed  # it may have ended between the checks
fi
