#!/usr/bin/env bash
# Submit a sharded webfreeze run to Slurm: an array of SHARDS shard jobs and a merge job that runs
# after them all. The merged run ends up in RUN_ROOT/merged; logs in RUN_ROOT/logs.
#
#   scripts/slurm/submit.sh [--wait] SHARDS RUN_ROOT -- WEBFREEZE_RUN_OPTIONS...
#
# --wait blocks until the merge job ends and exits with its status (the merge's log is printed if
# it failed). Extra sbatch options for the shard jobs go in WEBFREEZE_SBATCH_OPTS (e.g.
# "--cpus-per-task=2 --mem=4G --time=04:00:00 --partition=cpu").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
wait=()
if [ "${1:-}" = --wait ]; then wait=(--wait); shift; fi
usage="usage: $0 [--wait] SHARDS RUN_ROOT -- WEBFREEZE_RUN_OPTIONS..."
shards=${1:?$usage}
root=${2:?$usage}
shift 2
if [ "${1:-}" = -- ]; then shift; fi
case "$shards" in '' | *[!0-9]* | 0) echo "SHARDS must be a positive number; $usage" >&2; exit 2 ;; esac
command -v sbatch >/dev/null || { echo "sbatch not found: install Slurm (Debian: apt-get install slurm-wlm munge) or run on a login node" >&2; exit 2; }
wf=${WEBFREEZE_BIN:-webfreeze}
mkdir -p "$root/logs"
root=$(cd "$root" && pwd)
# Create the CA once, before shards that share WEBFREEZE_HOME could race to create it.
"$wf" ca show >/dev/null 2>&1 || "$wf" ca init >/dev/null
# shellcheck disable=SC2086 # WEBFREEZE_SBATCH_OPTS is a list of options
array=$(sbatch --parsable ${WEBFREEZE_SBATCH_OPTS:-} --array="0-$((shards - 1))" \
    --output="$root/logs/shard-%a.log" "$here/shard.sbatch" "$root" "$@")
array=${array%%;*}
echo "shards: job $array, array 0-$((shards - 1)), logs $root/logs/shard-<i>.log"
rc=0
merge=$(sbatch --parsable "${wait[@]}" --dependency="afterany:$array" \
    --output="$root/logs/merge.log" "$here/merge.sbatch" "$root") || rc=$?
echo "merge: job ${merge%%;*}, log $root/logs/merge.log, merged run $root/merged"
if [ "$rc" != 0 ]; then
    echo "the merge job failed (exit $rc):" >&2
    cat "$root/logs/merge.log" >&2 || true
fi
exit "$rc"
