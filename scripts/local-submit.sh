#!/usr/bin/env bash
# Submit one Snakemake jobscript as a detached background process: a one-machine "cluster"
# for workflow/profiles/local-cluster, sharing nothing with Snakemake but the filesystem.
#
# Contract of snakemake-executor-plugin-cluster-generic: it runs `<submit-cmd> "<jobscript>"`
# in the workflow's directory and takes the first line of stdout as the external job id,
# which it later passes to the status command (scripts/local-status.sh) and, on Ctrl-C,
# to the cancel command (scripts/local-cancel.sh).
#
# The job id is the PID of the job's process. Per job, $LOCAL_CLUSTER_DIR (default
# .snakemake/local-cluster) holds:
#   <token>/log        the job's stdout and stderr
#   <token>/exit       the jobscript's exit code, written when it ends
#   <token>/started    the process's start time (`ps -o lstart`), to tell a reused PID
#   pids/<pid>         the path of <token>/ (rewritten if an old run used the same PID)
#   jobs.log           one line per submission: PID, time, jobscript name
set -euo pipefail

if [[ $# -lt 1 ]]; then
    echo "usage: $0 [ARGS...] JOBSCRIPT" >&2
    exit 2
fi
jobscript="${!#}"  # the plugin appends the jobscript as the last argument
state="${LOCAL_CLUSTER_DIR:-.snakemake/local-cluster}"
mkdir -p "$state/pids"
state="$(cd "$state" && pwd)"
# a fresh folder per submission, named before the job starts, so nothing stale is read
jobdir="$(mktemp -d "$state/job.XXXXXXXX")"

# setsid: its own session and process group (a Ctrl-C on Snakemake does not reach it, the
# cancel command kills the whole group); nohup: survives the submitting shell. In this
# non-interactive script the background child is no group leader, so setsid and nohup
# exec in place and $! is the PID of the job's own shell.
setsid nohup bash -c '
    bash "$1" > "$2/log" 2>&1
    code=$?
    echo "$code" > "$2/exit.tmp" && mv "$2/exit.tmp" "$2/exit"
    exit "$code"
' local-job "$jobscript" "$jobdir" < /dev/null > /dev/null 2>&1 &
pid=$!

ps -o lstart= -p "$pid" > "$jobdir/started" 2> /dev/null || true
echo "$jobdir" > "$state/pids/$pid.tmp" && mv "$state/pids/$pid.tmp" "$state/pids/$pid"
echo "$pid $(date +%s) $(basename "$jobscript")" >> "$state/jobs.log"
echo "$pid"
